"""The verdict of a collected run, read by its experiment's registered rule, deviations flagged.

``collect_run`` calls :func:`decide` for every run launched as an arm of an experiment: the
paired comparison on the registered metric and noise floor, each category on its own line, and
the rule's ship / do not ship / undecided. A reading another way (metric, held-out set, rule) is
still given, with ``basis`` ``deviates`` and every difference named, so a post-hoc reading is
never taken for the registered decision; a rule without an experiment is ``not_registered``.
"""

from __future__ import annotations

from typing import Any

from .. import voice
from ..defaults import CATEGORY_FIELD
from ..runs.registry import RunRecord
from ..stats import Comparison, ManyComparisons
from .rule import Basis, ExperimentDecision, apply_rule, parse_rule
from .store import Experiment, Registration, _holdout, fields_sha256, ids_sha256
from ..stats import compare, compare_many


def holdout_of(results: dict[str, Any]) -> str | None:
    """The held-out set's content name a recipe wrote into its results (``data.holdout_name``)."""
    data = results.get("data")
    name = data.get("holdout_name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else results.get("holdout_name")


def _holdout_check(reg: Registration, results: dict, before: list[dict], holdout: Any,
                   root: Any, notes: list[str]) -> tuple[str | None, list[str]]:
    # The run's own record of its held-out set (the name in its results, else its rows' task
    # ids) is checked whatever the caller gives: a name given at collection cannot stand in for
    # the set the run was scored on.
    named = holdout_of(results)
    read = _holdout(holdout, root)["holdout"] if holdout is not None else named
    found = [f"held-out set: read on {read}, registered {reg.holdout}"] \
        if read is not None and read != reg.holdout else []
    if named is not None and named != reg.holdout and named != read:
        found.append(f"held-out set: the run's results name {named}, registered {reg.holdout}")
    if named is not None:
        return read, found
    if reg.holdout_ids_sha256 is not None:
        ids = {str(r.get("task_id")) for r in before}
        if ids_sha256(ids) != reg.holdout_ids_sha256:
            found.append(f"held-out set: the run's held-out rows are {len(ids)} tasks that are "
                         f"not the {reg.holdout_tasks} tasks of {reg.holdout}")
            return read, found
        found += _asks_check(reg, before, len(ids))
        return read or reg.holdout, found
    if read is None:
        notes.append(f"the run does not name its held-out set and the registration holds only "
                     f"the name {reg.holdout}: the held-out set was not checked (register the "
                     "frozen file, not its name, to check the tasks)")
    return read, found


def _asks_check(reg: Registration, before: list[dict], n: int) -> list[str]:
    """The deviation, if any, of a run whose rows are the registered task ids: the same ids
    can carry other asks, so each registered field the rows carry is compared by content
    (``store.fields_sha256``); a run whose rows carry none of them, or not all, was read on
    ids alone and is not the registered reading."""
    registered = reg.holdout_fields_sha256 or {}
    carried = fields_sha256(before, registered)
    differ = [f for f in carried if carried[f] != registered[f]]
    if differ:
        return [f"held-out set: the run's rows carry other {_named(differ)} than {reg.holdout} "
                f"under the same {n} task ids: it was scored on other asks"]
    missing = [f for f in registered if f not in carried]
    if registered and not missing:
        return []
    checked = "task ids" + (f" and {_named(list(carried))}" if carried else "")
    why = (f"its rows do not carry {_named(missing)}" if registered else
           "its registration holds no digest of the asks (registered before they were kept)")
    return [f"held-out set: checked by its {checked} only: the run names no held-out set and "
            f"{why}, so other asks under the same ids would read the same as {reg.holdout}. Fix: "
            "have the recipe name the set it scored (its results' data.holdout_name), or keep "
            "the asks' fields in its held-out rows"]


def _named(fields: list[str]) -> str:
    return ", ".join(f"`{f}`" for f in fields)


def holdout_before_launch(experiment: Experiment, holdout: str | None, *, names_holdout: bool,
                          recipe: str, data: str) -> tuple[str | None, str | None]:
    """What the plan of an arm's launch says of the data folder's held-out set, before anything
    runs: (why it is not ready, or None; a note, or None). ``holdout``: the content name the
    recipe reads from the folder (``names_holdout``: whether it can). The check is collect_run's
    (:func:`_holdout_check`), so a plan refuses exactly what it would read NOT AS REGISTERED.
    """
    reg, name = experiment.registration, experiment.name
    if not names_holdout:
        return None, (f"the {recipe} recipe does not say which held-out set its data folder "
                      f"holds: it was not checked against {reg.holdout}, the set experiment "
                      f"{name!r} registered; {voice.name('collect_run')} checks the run's own")
    if holdout is None:
        return None, (f"the data folder names no held-out set (its held-out file is not one "
                      f"record per task, so it has no content name): it was not checked against "
                      f"{reg.holdout}, the set experiment {name!r} registered. Fix: freeze the "
                      f"held-out tasks into the folder ({voice.name('freeze_holdout')}) to check "
                      "it before the run")
    _, found = _holdout_check(reg, {"holdout_name": holdout}, [], None, None, [])
    if not found:
        return None, f"held-out set {holdout}: the one experiment {name!r} registered"
    return (f"the data folder {data} holds the held-out set {holdout}, and experiment {name!r} "
            f"registered {reg.holdout}: the run would be scored on another set and "
            f"{voice.name('collect_run')} would read it NOT AS REGISTERED. Fix: make the registered "
            f"set the folder's only held-out file ({voice.name('freeze_holdout')} of the "
            f"registered tasks names it {reg.holdout}), or register a new experiment on this "
            f"set, with its question, arms and rule: "
            f"{voice.call('register_experiment', name=f'{name}-v2', holdout=holdout)}"), None


def decide(record: RunRecord, experiment: Experiment | None, results: dict[str, Any],
           before: list[dict], after: list[dict], *, metric: str | None = None,
           holdout: Any = None, rule: Any = None, root: Any = None
           ) -> tuple[Comparison, ManyComparisons | None, ExperimentDecision | None]:
    """(the paired comparison, the by-category comparison, the decision) for one collected run;
    no decision without an experiment or a ``rule``."""
    reg = experiment.registration if experiment is not None else None
    deviations: list[str] = []
    notes: list[str] = []
    use_metric = metric or (reg.metric if reg else "pass")
    if reg is not None and metric is not None and metric != reg.metric:
        deviations.append(f"metric: read on {metric!r}, registered {reg.metric!r}")
    chosen = parse_rule(rule) if rule is not None else (reg.rule if reg else None)
    if reg is not None and rule is not None and chosen != reg.rule:
        deviations.append(f"rule: read by '{chosen.sentence()}', registered "
                          f"'{reg.rule.sentence()}'")
    read_holdout = None
    if reg is not None:
        read_holdout, found = _holdout_check(reg, results, before, holdout, root, notes)
        deviations += found
        if experiment.registered_at > record.created_at:
            deviations.append(f"registered {experiment.registered_at[:19]}Z, after the run was "
                              f"created {record.created_at[:19]}Z")
    elif holdout is not None:
        read_holdout = _holdout(holdout, root)["holdout"]
    else:
        read_holdout = holdout_of(results)
    noise = dict(run_std=reg.run_std, noise_runs=reg.noise_runs, level=reg.level) if reg else {}
    comparison = compare(before, after, metric=use_metric, **noise)
    field = (chosen.category_field() if chosen else None) or CATEGORY_FIELD
    by_category = None
    if before and after and all(r.get(field) is not None for r in (*before, *after)):
        by_category = compare_many(before, after, by=field, metric=use_metric, **noise)
    if chosen is None:
        return comparison, by_category, None
    decision, clauses = apply_rule(chosen, comparison, by_category, band=comparison.noise_band)
    basis: Basis = ("not_registered" if reg is None else
                    "deviates" if deviations else "as_registered")
    if reg is None:
        deviations.append("no experiment was registered before this run: the rule was chosen "
                          "after it, so this is an exploratory reading, not a decision")
    return comparison, by_category, ExperimentDecision(
        decision=decision, basis=basis, deviations=deviations,
        experiment=record.experiment, arm=record.arm, rule=chosen.sentence(), clauses=clauses,
        metric=use_metric, holdout=read_holdout,
        registered_holdout=reg.holdout if reg else None,
        min_effect=reg.min_effect if reg else None, notes=notes)
