"""Experiments registered before their runs, and each run's five-line record, in the run registry.

A registration is written once, before the first launch of any of its arms, and never changed.
A run joins an experiment when it is launched (``launch_run(..., experiment=, arm=)``), so its
registration is older than the run by construction; ``collect_run`` then reads the verdict by
the registered rule (:mod:`.decide`). An experiment is archived, never deleted; a run's record
can be written again (a revision), and every revision is kept. The tables live in the registry's
SQLite file beside the runs (``whileai_core.runs.registry``), with its one-writer transactions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from .. import voice
from ..defaults import CONFIDENCE_LEVEL, EXPERIMENT_TEXT_MAX, PROVE_EFFECT
from ..errors import ArgumentError
from ..evalset import eval_fingerprint
from ..operations import READS, RECORDS, operation
from ..operations.args import (Arg, EffectSize, HoldoutSet, Level, Metric, NoiseRuns, Rule, RunId,
                               RunStd, StateDir, WorkspaceRoot)
from ..result import Result
from ..runs.registry import Registry, RunRecord, _check_id, now
from ..voice import arg, call
from .rule import DecisionRule, parse_rule
from ..rows import TASK_ALIASES, TASK_FIELD, read_records
from ..safepath import UserPath, as_user_path
from ..bootstrap import check_level

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FINGERPRINT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}-[0-9a-f]{12}")
RECORD_LINES = ("changed", "moved", "why", "learned", "reproduce")

# the argument types of the operations here (and export_experiments's `name`: one experiment)
Sentence = Annotated[str, Field(min_length=1, max_length=EXPERIMENT_TEXT_MAX)]
Name = Annotated[str, Field(
    min_length=1, max_length=64, description="The experiment's name (letters, digits, '.', '_', "
                                             "'-').", examples=["dpo-round-1"]),
    Arg(positional=True, metavar="NAME")]


class Registration(Result):
    """What was decided before the first run; never changed once written."""

    question: str
    hypothesis: str
    arms: dict[str, str] = Field(description="arm name -> what that arm changes")
    metric: Literal["pass", "reward"]
    holdout: str = Field(description="the held-out set's content name (eval_fingerprint)")
    holdout_tasks: int | None = Field(None, description="its number of tasks, when read from "
                                                        "the file")
    holdout_ids_sha256: str | None = Field(None, description="sha256 of its sorted task ids, "
                                                             "when read from the file")
    holdout_fields_sha256: dict[str, str] | None = Field(None, description=(
        "per field every task carries (prompt, answer, category...): sha256 of each task's "
        "value of it, when read from the file; a run's rows under the same task ids are "
        "checked against these, so other asks under the same ids are seen"))
    min_effect: float = Field(description="the smallest change that matters")
    rule: DecisionRule
    run_std: float | None = Field(None, description="the registered noise floor's run_std")
    noise_runs: int | None = Field(None, description="the re-runs run_std rests on")
    level: float = CONFIDENCE_LEVEL

    def noise(self) -> str:
        return ("none registered" if self.run_std is None else
                f"run_std {self.run_std:.4f} from {self.noise_runs} re-runs")

    def render(self) -> str:
        return "\n".join([f"question:   {self.question}", f"hypothesis: {self.hypothesis}",
                          "arms:       " + "; ".join(f"{k}: {v}" for k, v in self.arms.items()),
                          f"metric:     {self.metric} on {self.holdout}"
                          + (f" ({self.holdout_tasks} tasks)" if self.holdout_tasks else ""),
                          f"matters:    a change of {self.min_effect:.3f} or more",
                          f"noise:      {self.noise()}", f"rule:       {self.rule.sentence()}"])


class RunNote(Result):
    """A run's five-line record: what changed, what moved, why, what was learned, how to
    reproduce it. ``revision`` counts from 1; earlier revisions stay in the registry."""

    run_id: str
    changed: str
    moved: str
    why: str
    learned: str
    reproduce: str
    written_at: str
    revision: int = 1

    def render(self) -> str:
        return "\n".join(f"{k + ':':<10} {getattr(self, k)}" for k in RECORD_LINES)


class ExperimentRun(Result):
    id: str
    arm: str | None
    name: str
    status: str
    created_at: str
    record: RunNote | None = None


class Experiment(Result):
    name: str
    registration: Registration
    registered_at: str
    archived_at: str | None = None
    runs: list[ExperimentRun] = []
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("runs",)

    def render(self) -> str:
        state = f"archived {self.archived_at[:19]}Z" if self.archived_at else "open"
        lines = [f"experiment {self.name} (registered {self.registered_at[:19]}Z, {state})",
                 self.registration.render()]
        for run in self.runs:
            lines.append(f"  {run.id} {run.arm or '-'} {run.status} ({run.name})")
            if run.record is not None:
                lines += ["    " + line for line in run.record.render().splitlines()]
        if not self.runs:
            first = next(iter(self.registration.arms))
            lines.append("  no runs yet: " + call("launch_run", config_or_recipe="<recipe>",
                                                  experiment=self.name, arm=first))
        if self.shown:
            lines.append(f"({self.shown})")
        return "\n".join(lines)


class ExperimentList(Result):
    state_dir: str
    experiments: list[Experiment]
    n_archived_hidden: int = 0
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("experiments",)

    def bounded(self, limit: int) -> ExperimentList:
        """Each experiment's runs cut too (n of N), then the list of experiments."""
        inner = [e.bounded(limit) for e in self.experiments]
        return Result.bounded(self.model_copy(update={"experiments": inner}), limit)

    def render(self) -> str:
        if not self.experiments and not self.n_archived_hidden:
            return f"no experiments registered in {self.state_dir}"
        out = [e.render() for e in self.experiments] or [f"no open experiments in "
                                                         f"{self.state_dir}"]
        if self.n_archived_hidden:
            out.append(f"({self.n_archived_hidden} archived not shown: "
                       f"{arg('include_archived', True)})")
        if self.shown:
            out.append(f"({self.shown})")
        return "\n\n".join(out)


# --- checks ------------------------------------------------------------------------------------

def _text(value: Any, argument: str, *, one_line: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"`{argument}` must be a non-empty sentence, got {value!r}",
                            fix="write it before the run, in your own words")
    value = value.strip()
    if len(value) > EXPERIMENT_TEXT_MAX:
        raise ArgumentError(f"`{argument}` is {len(value)} characters; at most "
                            f"{EXPERIMENT_TEXT_MAX}", fix="say it in one or two sentences")
    if one_line and "\n" in value:
        raise ArgumentError(f"`{argument}` holds a line break: each of the five lines of a run's "
                            "record is one line", fix="join it into one sentence")
    return value


def check_name(name: Any, argument: str = "name") -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ArgumentError(f"`{argument}` must be 1-64 letters, digits, '.', '_' or '-' "
                            f"(starting with a letter or digit), got {name!r}", fix="e.g. "
                            "'dpo-round-1'")
    return name


def _arms(arms: Any) -> dict[str, str]:
    if isinstance(arms, (list, tuple)):
        raise ArgumentError("`arms` must map each arm's name to what it changes, got a list",
                            fix="e.g. {'dpo': 'one DPO round on on-policy pairs', 'control': "
                            "'the same steps on randomly chosen tasks'}")
    if not isinstance(arms, dict) or not arms or len(arms) > 16:
        raise ArgumentError(f"`arms` must be 1-16 arms, name -> what it changes, got {arms!r:.80}")
    return {check_name(k, "arms"): _text(v, f"arms.{k}") for k, v in arms.items()}


def _holdout(holdout: Any, root: Any) -> dict[str, Any]:
    """The held-out set's name: a content name as given, or read from the frozen file."""
    if isinstance(holdout, str) and _FINGERPRINT.fullmatch(holdout) and "/" not in holdout:
        return {"holdout": holdout}
    if not isinstance(holdout, (str, os.PathLike, UserPath)):
        raise ArgumentError(f"`holdout` must be the frozen held-out file or its content name "
                            f"(eval_fingerprint's, e.g. 'holdout-b7c37b988f77'), got {holdout!r}")
    path = as_user_path(holdout, root, argument="holdout")
    print_name = eval_fingerprint(path)
    if print_name.file_matches is False:
        raise ArgumentError(f"`holdout` {holdout}: its content hashes to {print_name.name}, not "
                            "the name the file carries: it was edited after it was frozen",
                            fix="restore it, or freeze the edited set (a new name) and register "
                                "that")
    tasks = [_with_id(r) for r in read_records(path, noun="task").items]
    ids = sorted(str(r.get("task_id")) for r in tasks)
    return {"holdout": print_name.name, "holdout_tasks": print_name.n_tasks,
            "holdout_ids_sha256": ids_sha256(ids),
            "holdout_fields_sha256": fields_sha256(tasks) or None}


def _with_id(task: dict) -> dict:
    """A frozen task with its id under ``task_id`` (as the fingerprint reads an alias)."""
    if task.get(TASK_FIELD) is not None:
        return task
    alias = next((a for a in TASK_ALIASES if task.get(a) is not None), None)
    return {**task, TASK_FIELD: task[alias]} if alias else task


def ids_sha256(ids: Any) -> str:
    """sha256 of a set of task ids (sorted, one a line): what a run's held-out rows are checked
    against."""
    return hashlib.sha256(("\n".join(sorted(set(map(str, ids)))) + "\n").encode()).hexdigest()


CONFLICT = "conflict"  # a field whose rows of one task disagree: it matches no registered digest


def fields_sha256(records: list[dict], fields: Any = None) -> dict[str, str]:
    """Per field carried by every record (or each of ``fields`` that is): sha256 of the lines
    ``<task id>\t<value as canonical JSON>``, one per task, sorted; a task's value is its
    first record's, and a task whose records disagree on a field makes it ``CONFLICT``.
    A frozen set (one record per task) and a run's rows (many per task) give the same digest
    exactly when every task carries the same value."""
    names = set.intersection(*(set(r) for r in records)) if records else set()
    names = (names if fields is None else names & set(fields)) - {TASK_FIELD}
    out: dict[str, str] = {}
    for name in sorted(names):
        values: dict[str, str] = {}
        conflict = False
        for r in records:
            value = json.dumps(r[name], sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False, default=str)
            if values.setdefault(str(r.get(TASK_FIELD)), value) != value:
                conflict = True
                break
        text = "".join(f"{t}\t{v}\n" for t, v in sorted(values.items()))
        out[name] = CONFLICT if conflict else hashlib.sha256(text.encode()).hexdigest()
    return out


# --- the calls ---------------------------------------------------------------------------------

_ADDED_LATER = ("holdout_fields_sha256",)  # registration fields older registrations lack


def _without_new(stored: dict, given: dict) -> dict:
    """``given`` less the fields ``stored`` predates (the same plan registered again after an
    upgrade is the same registration)."""
    return {k: v for k, v in given.items() if k in stored or k not in _ADDED_LATER}


@operation(
    toolset="experiments", effect=RECORDS, title="Register an experiment before its first run",
    description=(
        "Write down, before any launch: the question, the hypothesis, the arms, the metric, the "
        "held-out set (its frozen file or content name), the smallest effect that matters, the "
        "noise floor and the decision rule (data, validated now). Launch each arm with "
        "launch_run, giving its `experiment` and `arm`; collect_run then gives the verdict by "
        "this rule and "
        "flags any other reading. Never changed once written."),
    doing="registering an experiment")
def register_experiment(
        name: Name, *,
        question: Annotated[Sentence, Field(description="The question the experiment answers.")],
        hypothesis: Annotated[Sentence, Field(description="What you expect, before any run.")],
        arms: Annotated[dict[str, Sentence], Field(
            min_length=1, max_length=16, description=(
                "Each arm's name -> what that arm changes (at the shell: NAME=CHANGE words).")),
            Arg(metavar="NAME=CHANGE")],
        holdout: HoldoutSet, rule: Rule, metric: Metric = "pass",
        min_effect: Annotated[EffectSize, Field(description=(
            "The smallest change that matters, in (0, 1): 0.05 = 5 points."))] = PROVE_EFFECT,
        run_std: Annotated[RunStd, Field(le=1, description=(
            "Optional: noise_floor's run_std on re-runs of the held-out set (a noise_band "
            "clause needs it)."))] = None,
        noise_runs: NoiseRuns = None, level: Level = CONFIDENCE_LEVEL,
        state_dir: StateDir = None, root: WorkspaceRoot = None) -> Experiment:
    """Register an experiment before its first run. The same name with the same registration
    again returns it; with anything different it is refused (register a new name)."""
    name = check_name(name)
    if metric not in ("pass", "reward"):
        raise ArgumentError(f"`metric` must be 'pass' or 'reward', got {metric!r}")
    if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) \
            or not 0 < min_effect < 1:
        raise ArgumentError(f"`min_effect` must be a number in (0, 1), got {min_effect!r}",
                            fix=f"the smallest change worth shipping, e.g. {PROVE_EFFECT}")
    parsed = parse_rule(rule)
    if run_std is not None and (isinstance(run_std, bool) or not isinstance(run_std, (int, float))
                                or not 0 <= run_std <= 1):
        raise ArgumentError(f"`run_std` must be a number in [0, 1], got {run_std!r}",
                            fix="noise_floor(...).run_std")
    if run_std is not None and (isinstance(noise_runs, bool) or not isinstance(noise_runs, int)
                                or noise_runs < 2):
        raise ArgumentError(f"`noise_runs` must be the number of re-runs behind run_std (>= 2), "
                            f"got {noise_runs!r}", fix="noise_floor(...).n_runs")
    if parsed.needs_noise_band() and run_std is None:
        raise ArgumentError("the rule names the noise band, and no noise floor is registered",
                            fix=f"pass {arg('run_std')} and {arg('noise_runs')} from noise_floor "
                            "on re-runs of the held-out set, or give the clause a number "
                            "(beyond: 0.05)")
    registration = Registration(
        question=_text(question, "question"), hypothesis=_text(hypothesis, "hypothesis"),
        arms=_arms(arms), metric=metric, min_effect=float(min_effect), rule=parsed,
        run_std=None if run_std is None else float(run_std),
        noise_runs=None if run_std is None else noise_runs, level=check_level(level),
        **_holdout(holdout, root))
    registry = Registry(state_dir)
    text = json.dumps(registration.to_dict(), sort_keys=True)
    with registry.transaction() as db:
        row = db.execute("SELECT registration FROM experiments WHERE name = ?", (name,)).fetchone()
        if row is None:
            db.execute("INSERT INTO experiments (name, registration, registered_at) VALUES "
                       "(?, ?, ?)", (name, text, now()))
        elif _without_new(json.loads(row[0]), json.loads(text)) != json.loads(row[0]):
            raise ArgumentError(f"experiment {name!r} is already registered, with another "
                                "registration; a registration is never changed after it is "
                                "written", fix="register the new plan under a new name (e.g. "
                                f"'{name}-v2') and say in the record why it changed")
    return get_experiment(name, state_dir=state_dir)


def get_experiment(name: str, *, state_dir: str | os.PathLike | None = None,
                   registry: Registry | None = None) -> Experiment:
    """One experiment with its runs and their latest records."""
    name = check_name(name, "experiment")
    registry = registry or Registry(state_dir, create=False)
    row = None
    if registry.exists:
        with registry.reading() as db:
            row = db.execute("SELECT * FROM experiments WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise ArgumentError(f"no experiment {name!r} is registered in {registry.path}",
                            fix=f"{call('register_experiment', name=name)} before its first run "
                            f"(list_experiments shows the registered ones)")
    runs = [r for r in registry.all() if r.experiment == name]
    notes = latest_records(registry, [r.id for r in runs])
    return Experiment(name=name, registration=Registration(**json.loads(row["registration"])),
                      registered_at=row["registered_at"], archived_at=row["archived_at"],
                      runs=[ExperimentRun(id=r.id, arm=r.arm, name=r.name, status=r.status,
                                          created_at=r.created_at, record=notes.get(r.id))
                            for r in runs])


def latest_records(registry: Registry, ids: list[str]) -> dict[str, RunNote]:
    """Each run's latest five-line record, with its revision number."""
    out: dict[str, RunNote] = {}
    if not ids or not registry.exists:
        return out
    with registry.reading() as db:
        rows = db.execute("SELECT run_id, written_at, record FROM run_records ORDER BY "
                          "run_id, written_at").fetchall()
    wanted = set(ids)
    for run_id, written_at, record in rows:
        if run_id in wanted:
            revision = out[run_id].revision + 1 if run_id in out else 1
            out[run_id] = RunNote(run_id=run_id, written_at=written_at, revision=revision,
                                  **json.loads(record))
    return out


@operation(
    toolset="experiments", effect=RECORDS, title="Archive an experiment (never delete)",
    description=("Mark an experiment archived: it leaves the default list and takes no new "
                 "runs; its registration, runs and records stay."),
    doing="archiving an experiment")
def archive_experiment(name: Name, *, state_dir: StateDir = None) -> Experiment:
    """Archive an experiment (nothing of it is deleted)."""
    found = get_experiment(name, state_dir=state_dir)
    if found.archived_at is None:
        with Registry(state_dir).transaction() as db:
            db.execute("UPDATE experiments SET archived_at = ? WHERE name = ? AND archived_at IS "
                       "NULL", (now(), found.name))
    return get_experiment(name, state_dir=state_dir)


@operation(
    toolset="experiments", effect=RECORDS, title="A run's five-line record",
    description=(
        "What changed, what moved (verdict, interval, n), why, what was learned, how to "
        "reproduce: one line each, kept in the registry; writing again adds a revision."),
    doing="recording a run")
def record_run(
        id: RunId, *,
        changed: Annotated[Sentence, Field(description="What changed in this run (one line).")],
        moved: Annotated[Sentence, Field(description=(
            "What moved: the verdict with its interval and n (one line)."))],
        why: Annotated[Sentence, Field(description="Why it moved, or did not (one line).")],
        learned: Annotated[Sentence, Field(description="What was learned (one line).")],
        reproduce: Annotated[Sentence, Field(description=(
            "How to reproduce it: the launch call (one line)."))],
        state_dir: StateDir = None) -> RunNote:
    """Write a run's five-line record; writing it again adds a revision."""
    run = _check_id(id)
    registry = Registry(state_dir, create=False)
    if registry.get(run) is None:
        raise ArgumentError(f"no run {run!r} in {registry.path}",
                            fix=f"{voice.name('list_runs')} shows the runs")
    lines = {k: _text(v, k, one_line=True) for k, v in
             zip(RECORD_LINES, (changed, moved, why, learned, reproduce))}
    stamp = now()
    with registry.transaction() as db:
        db.execute("INSERT INTO run_records (run_id, written_at, record) VALUES (?, ?, ?)",
                   (run, stamp, json.dumps(lines, sort_keys=True)))
    return latest_records(registry, [run])[run]


@operation(
    cli="experiments", toolset="experiments", effect=READS, title="List experiments",
    description=("Every registered experiment, oldest first, with its registration, runs and "
                 "records (archived ones only when asked)."),
    doing="listing experiments")
def list_experiments(
        *, include_archived: Annotated[bool, Field(description=(
            "Also list archived experiments."))] = False,
        state_dir: StateDir = None) -> ExperimentList:
    """Every registered experiment, oldest first, with its runs and their records."""
    registry = Registry(state_dir, create=False)
    names: list[tuple[str, str | None]] = []
    if registry.exists:
        with registry.reading() as db:
            names = [(r[0], r[1]) for r in db.execute(
                "SELECT name, archived_at FROM experiments ORDER BY registered_at, name")]
    shown = [n for n, archived in names if include_archived or archived is None]
    return ExperimentList(state_dir=str(registry.dir),
                          experiments=[get_experiment(n, registry=registry) for n in shown],
                          n_archived_hidden=len(names) - len(shown))


def experiment_of(record: RunRecord, registry: Registry) -> Experiment | None:
    """The experiment a run was launched as an arm of, or None."""
    if not record.experiment:
        return None
    return get_experiment(record.experiment, registry=registry)


def arm_for_launch(experiment: Any, arm: Any,
                   state_dir: str | os.PathLike | None) -> tuple[Experiment, str]:
    """(experiment, arm) a launch joins, checked: registered, not archived, a registered arm (the
    only arm when there is one)."""
    if experiment is None:
        raise ArgumentError(f"`arm` {arm!r} was given without `experiment`", fix="pass the "
                            "registered experiment's name too")
    found = get_experiment(experiment, state_dir=state_dir)
    if found.archived_at is not None:
        raise ArgumentError(f"experiment {found.name!r} is archived ({found.archived_at[:19]}Z): "
                            "it takes no new runs", fix="register a new experiment for new runs")
    arms = list(found.registration.arms)
    if arm is None and len(arms) == 1:
        return found, arms[0]
    if arm not in arms:
        raise ArgumentError(f"`arm` must be one of the arms registered for {found.name!r} "
                            f"({', '.join(arms)}), got {arm!r}", fix="name the arm this run is; "
                            "a new arm needs a new registration")
    return found, arm
