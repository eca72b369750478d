"""The run registry's tables (runs, experiments, each run's records) and the schema version a
registry file carries (``PRAGMA user_version``); an older registry gains what it lacks, empty.
"""

from __future__ import annotations

import sqlite3
from typing import Any

# 2: the forecast and measured columns; 3: a run's experiment and arm, the experiments table and
# the runs' five-line records (whileai_core.experiments). An older registry gains them, empty.
SCHEMA_VERSION = 3

STATUSES: tuple[str, ...] = ("planned", "launching", "running", "succeeded", "failed", "cancelled")
BACKENDS: tuple[str, ...] = ("modal", "local")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    target      TEXT NOT NULL,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('recipe', 'config')),
    recipe      TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    backend     TEXT NOT NULL CHECK (backend IN {BACKENDS!r}),
    gpu         TEXT,
    status      TEXT NOT NULL CHECK (status IN {STATUSES!r}),
    handle      TEXT,
    error       TEXT,
    results     TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    launched_at TEXT,
    finished_at TEXT,
    forecast    TEXT,
    measured    TEXT,
    experiment  TEXT,
    arm         TEXT,
    UNIQUE (sha256, name, backend)
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
CREATE TABLE IF NOT EXISTS experiments (
    name          TEXT PRIMARY KEY,
    registration  TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    archived_at   TEXT
);
CREATE TABLE IF NOT EXISTS run_records (
    run_id     TEXT NOT NULL,
    written_at TEXT NOT NULL,
    record     TEXT NOT NULL,
    PRIMARY KEY (run_id, written_at)
);
"""

_COLUMNS = ("id", "name", "target", "target_kind", "recipe", "sha256", "backend", "gpu",
            "status", "handle", "error", "results", "created_at", "updated_at", "launched_at",
            "finished_at", "forecast", "measured", "experiment", "arm")
# columns added after version 1: a registry written before them gains them, empty
_ADDED_COLUMNS = ("forecast", "measured", "experiment", "arm")


def _add_columns(db: sqlite3.Connection) -> None:
    have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    for column in _ADDED_COLUMNS:
        if column not in have:
            db.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")


def _blank() -> dict[str, Any]:
    return dict.fromkeys(_COLUMNS)


def _insert_sql() -> str:
    return (f"INSERT INTO runs ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join(':' + c for c in _COLUMNS)})")
