"""The run registry: one SQLite file (WAL mode) in the state directory, safe across processes.

Every write is one short ``BEGIN IMMEDIATE`` transaction: SQLite serialises the writers and WAL
lets readers go on [1]. A status change is a compare-and-set (``UPDATE ... WHERE status IN``), so
a poll cannot undo a cancel that landed first. A run's id is derived from the target's sha256,
its name and backend: two processes launching the same thing claim the same row.

[1] SQLite, "Write-Ahead Logging", https://www.sqlite.org/wal.html (one writer at a time,
    readers do not block the writer; every connection must be on the same host).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ..defaults import REGISTRY_LOCK_WAIT_S, RUN_ID_PATTERN, STATE_DIR
from ..errors import ArgumentError, ConfigError
from ..failures import mask_value
from ..result import Result
from ..voice import arg
from ..voice import name as op_name
from .forecast_check import describe
# the tables, their columns and the schema version (re-exported: callers import them from here)
from .schema import (_SCHEMA, BACKENDS, SCHEMA_VERSION, STATUSES, _add_columns, _blank,  # noqa: F401
                     _insert_sql)

STATE_DIR_ENV = "WHILEAI_STATE_DIR"
_RUN_ID = re.compile(RUN_ID_PATTERN)  # the one grammar (defaults)
REGISTRY_FILE = "runs.sqlite3"

Status = Literal["planned", "launching", "running", "succeeded", "failed", "cancelled"]
Backend = Literal["modal", "local"]
TargetKind = Literal["recipe", "config"]
ACTIVE: tuple[str, ...] = ("launching", "running")
FINISHED: tuple[str, ...] = ("succeeded", "failed", "cancelled")


def now() -> str:
    """UTC time as ISO 8601 with microseconds (sorts as text)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def state_dir(value: str | os.PathLike | None = None) -> Path:
    """The state directory: ``value`` (a flag), else ``$WHILEAI_STATE_DIR``, else ``~/.whileai``."""
    chosen = value if value not in (None, "") else os.environ.get(STATE_DIR_ENV) or STATE_DIR
    path = Path(chosen).expanduser()
    if path.exists() and not path.is_dir():
        raise ArgumentError(f"state directory {str(path)!r} exists and is not a folder", fix="pass "
                            f"--state-dir (or set {STATE_DIR_ENV}) to a folder")
    return path.absolute()


def run_id(sha256: str, name: str, backend: str) -> str:
    """The id of the run of this target (sha256), under this name, on this backend."""
    key = f"{sha256}\x00{name}\x00{backend}".encode()
    return "run-" + hashlib.sha256(key).hexdigest()[:12]


def _check_id(id: Any) -> str:
    if not isinstance(id, str) or not _RUN_ID.match(id.strip()):
        raise ArgumentError(f"`{arg('id', op='run_status')}` must be a run id like "
                            f"'run-0123456789ab', got {id!r}", fix="take it from "
                            f"{op_name('launch_run')} or {op_name('list_runs')}")
    return id.strip()


class RunRecord(Result):
    """One row of the registry.

    ``handle``: what the backend needs to find the run again (Modal: ``call_id``; local: ``pid``,
    ``log``, ``out``), None while nothing was started. ``results``: the recipe's results once it
    succeeded (Modal drops call outputs after a while). ``forecast``: the plan's at launch;
    ``measured``: what collect_run measured beside it. ``experiment``/``arm``: when launched as
    an arm of a registered experiment.
    """

    id: str
    name: str
    target: str
    target_kind: TargetKind
    recipe: str
    sha256: str
    backend: Backend
    gpu: str | None
    status: Status
    handle: dict[str, Any] | None = None
    error: str | None = None
    results: dict[str, Any] | None = None
    created_at: str
    updated_at: str
    launched_at: str | None = None
    finished_at: str | None = None
    forecast: dict[str, Any] | None = None
    measured: dict[str, Any] | None = None
    experiment: str | None = None
    arm: str | None = None

    def summary_line(self) -> str:
        gpu = f" gpu={self.gpu}" if self.gpu and self.backend == "modal" else ""
        arm = f"  [{self.experiment}/{self.arm}]" if self.experiment else ""
        return (f"{self.id}  {self.status:<10} {self.backend:<5}{gpu}  {self.name}{arm}  "
                f"({self.target_kind} {self.target}, created {self.created_at[:19]}Z)")

    def render(self) -> str:
        lines = [self.summary_line()]
        if self.handle:
            lines.append("handle: " + ", ".join(f"{k}={v}" for k, v in sorted(self.handle.items())))
        if self.error:
            lines.append(f"error: {self.error}")
        if self.finished_at:
            lines.append(f"finished: {self.finished_at[:19]}Z")
        if self.forecast or self.measured:
            lines += describe(self.forecast, self.measured)
        return "\n".join(lines)


_JSON_FIELDS = ("handle", "results", "forecast", "measured")


# what a run's backend and recipe wrote: masked when stored and again when read, so a value of a
# secret-looking variable (MODAL_TOKEN_SECRET...) never comes back in an answer, however old
_MASKED_FIELDS = ("handle", "results", "error")


def _record(row: sqlite3.Row) -> RunRecord:
    data = dict(row)
    for key in _JSON_FIELDS:
        if data.get(key) is not None:
            data[key] = json.loads(data[key])
    for key in _MASKED_FIELDS:
        if data[key] is not None:
            data[key] = mask_value(data[key])
    return RunRecord(**data)


# SQLite's words for a registry the user's set-up makes unusable (every other DatabaseError is a
# bug here and reaches the crash report)
_UNWRITABLE = ("unable to open database file", "readonly database", "disk I/O error",
               "database or disk is full")
_NOT_A_REGISTRY = ("file is not a database", "database disk image is malformed")


class Registry:
    """The runs table of one state directory. Cheap to build; opens a connection per call."""

    def __init__(self, directory: str | os.PathLike | None = None, *, create: bool = True) -> None:
        """``create=False`` (the read-only calls): a missing registry reads as empty and no
        folder is made."""
        self.dir = state_dir(directory)
        self.path = self.dir / REGISTRY_FILE
        self.exists = self.path.is_file()
        if not create and not self.exists:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the state directory {self.dir} ({exc.strerror})",
                              fix=f"pass --state-dir (or set {STATE_DIR_ENV}) to a writable "
                              "folder") from None
        with self._connect() as db:
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                with self._write(db):  # executescript would commit early: one statement at a time
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        db.execute(statement)
                    _add_columns(db)
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def run_dir(self, id: str) -> Path:
        """Where a run keeps its lock, log and outputs."""
        return self.dir / "runs" / id

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection that waits at most REGISTRY_LOCK_WAIT_S for SQLite's lock; a registry
        held longer by another process is one clear error, not a stall of every tool."""
        try:
            with self._connection() as db:
                yield db
        except sqlite3.DatabaseError as exc:
            reason = str(exc)
            if any(sign in reason for sign in _UNWRITABLE):
                raise ConfigError(
                    f"the run registry {self.path} cannot be opened or written ({reason})",
                    fix=f"pass --state-dir (or set {STATE_DIR_ENV}) to a writable folder on a "
                    "local disk") from None
            if any(sign in reason for sign in _NOT_A_REGISTRY):
                raise ConfigError(
                    f"{self.path} is not a run registry SQLite can read ({reason})", fix="move "
                    f"that file aside, or pass --state-dir (or set {STATE_DIR_ENV}) to another "
                    "folder") from None
            if "locked" not in reason and "busy" not in reason:
                raise
            raise ConfigError(
                f"the run registry {self.path} is locked by another process (waited "
                f"{REGISTRY_LOCK_WAIT_S:g} s; a write holds it for milliseconds)", fix="retry in a "
                f"moment; if it stays locked, find the process holding it (`fuser {self.path}`) "
                f"or use another state directory (--state-dir, {STATE_DIR_ENV})") from None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=REGISTRY_LOCK_WAIT_S, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {int(REGISTRY_LOCK_WAIT_S * 1000)}")
            if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise ConfigError(f"{self.path}: SQLite refused WAL mode (a network file "
                                  "system?)", fix="put the state directory on a local disk")
            db.execute("PRAGMA synchronous = FULL")
            yield db
        finally:
            db.close()

    @staticmethod
    @contextlib.contextmanager
    def _write(db: sqlite3.Connection) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock up front: a read-then-write cannot interleave.
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # --- reads --------------------------------------------------------------------------------
    def get(self, id: str) -> RunRecord | None:
        if not self.path.is_file():
            return None
        with self._connect() as db:
            row = _row(db, id)
        return None if row is None else _record(row)

    def all(self) -> list[RunRecord]:
        if not self.path.is_file():
            return []
        with self._connect() as db:
            rows = db.execute("SELECT * FROM runs ORDER BY created_at, id").fetchall()
        return [_record(r) for r in rows]

    # --- writes -------------------------------------------------------------------------------
    def claim(self, fields: dict[str, Any]) -> tuple[RunRecord, bool]:
        """Move the run to ``launching`` if nothing was ever started for it (new, ``planned``, or
        ``failed`` with a null ``handle``); ``(row, claimed)``, the row as it is when not."""
        with self._connect() as db, self._write(db):
            row = _row(db, fields["id"])
            stamp = now()
            if row is None:
                db.execute(_insert_sql(), {**_blank(), **fields, "status": "launching",
                                           "forecast": _json(fields.get("forecast")),
                                           "created_at": stamp, "updated_at": stamp})
            elif claimable(row["status"], row["handle"]):
                db.execute("UPDATE runs SET status = 'launching', gpu = ?, error = NULL, "
                           "finished_at = NULL, forecast = ?, measured = NULL, experiment = ?, "
                           "arm = ?, updated_at = ? WHERE id = ?",
                           (fields.get("gpu"), _json(fields.get("forecast")),
                            fields.get("experiment"), fields.get("arm"), stamp, fields["id"]))
            else:
                return _record(row), False
            row = _row(db, fields["id"])
        return _record(row), True

    def transition(self, id: str, from_status: tuple[str, ...], to_status: str,
                   **fields: Any) -> RunRecord | None:
        """Set ``status = to_status`` (and ``fields``) only if the status is in ``from_status``:
        the new row, or None when the status had moved on (the caller re-reads)."""
        if to_status not in STATUSES:  # a programming error, not user input
            raise ValueError(f"unknown status {to_status!r}")
        stamp = now()
        values = {"status": to_status, "updated_at": stamp, **fields}
        for key in _MASKED_FIELDS:
            if values.get(key) is not None:
                values[key] = mask_value(values[key])
        if to_status in FINISHED:
            values.setdefault("finished_at", stamp)
        for key in _JSON_FIELDS:
            if key in values:
                values[key] = _json(values[key])
        assign = ", ".join(f"{k} = :{k}" for k in values)
        marks = ", ".join(f":from{i}" for i in range(len(from_status)))
        params = {**values, "id": id, **{f"from{i}": s for i, s in enumerate(from_status)}}
        with self._connect() as db, self._write(db):
            changed = db.execute(f"UPDATE runs SET {assign} WHERE id = :id AND status IN ({marks})",
                                 params).rowcount
            row = _row(db, id)
        return _record(row) if changed else None

    def set_measured(self, id: str, measured: dict[str, Any]) -> RunRecord | None:
        """Record what a finished run measured beside its forecast (collect_run); once."""
        with self._connect() as db, self._write(db):
            db.execute("UPDATE runs SET measured = ?, updated_at = ? WHERE id = ? AND measured IS "
                       "NULL", (_json(measured), now(), id))
            row = _row(db, id)
        return None if row is None else _record(row)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction on the registry's file, for the tables kept beside the
        runs (``whileai_core.experiments``)."""
        with self._connect() as db, self._write(db):
            yield db

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A connection to read the tables kept beside the runs (the registry must exist)."""
        with self._connect() as db:
            yield db

    def set_handle(self, id: str, handle: dict[str, Any]) -> None:
        """Record the backend handle the moment it exists (before any status change)."""
        with self._connect() as db, self._write(db):
            db.execute("UPDATE runs SET handle = ?, updated_at = ? WHERE id = ?",
                       (_json(mask_value(handle)), now(), id))


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def _row(db: sqlite3.Connection, id: str) -> sqlite3.Row | None:
    return db.execute("SELECT * FROM runs WHERE id = ?", (id,)).fetchone()


def claimable(status: str, handle: Any) -> bool:
    """Whether a launch may (re)start this run: it is only planned, or nothing of it ever ran."""
    return status == "planned" or (status == "failed" and handle is None)
