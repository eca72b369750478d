"""Families found without being asked: the interval clustered by a family field beside the task one.

When rows carry a field that groups whole tasks (``repo``, ``dataset``, ``source``: the role
``family`` of :mod:`whileai_core.roles`), tasks of one family pass and fail together and the
interval over tasks is too narrow. With ``cluster="auto"`` (the default of ``pass_at``,
``mean_reward``, ``compare`` and the route) the answer keeps its interval over tasks and gives,
beside it, the interval clustered by that field (:func:`whileai_core.stats.clustered.intervals`,
:func:`~whileai_core.stats.clustered.cluster_interval`), naming the field; a verdict is then no
stronger than the clustered interval allows (:func:`weaker`). ``cluster=None`` reads tasks only;
``cluster="<field>"`` clusters every interval by that field instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field

from ..result import Result
from ..roles import fields_report, read_fields
from ..voice import arg
from ..errors import WhileaiError
from .clustered import Families, cluster_interval, families_of, positions
from .intervals import Interval

AUTO = "auto"

# a verdict's strength: a claim (moved, flat, within the noise) stands above "cannot tell"
_CLAIMS = ("moved", "moved_the_wrong_way", "flat", "within_noise")


class FamilyInterval(Result):
    """The interval clustered by a family field the rows carry, beside the one over tasks."""

    field: str = Field(description="the row field that groups the tasks (found in the rows)")
    n_families: int
    ci: Interval | None = Field(description="interval over families, then tasks; null when the "
                                            "families are too few for any")
    family_verdict: str | None = Field(None, description="compare: the verdict this interval "
                                                         "gives")
    note: str = Field(description="what was done, how to turn it off, and the families' caveat")

    def render(self) -> str:
        sign = "+" if self.family_verdict is not None else ""   # a difference, or a rate
        ci = ("[no interval]" if self.ci is None else
              f"[{self.ci[0]:{sign}.3f}, {self.ci[1]:{sign}.3f}]")
        return f"by `{self.field}` ({self.n_families} families): {ci}; {self.note}"


@dataclass(frozen=True)
class Found(Families):
    """Families found in rows, with those rows' task ids (to pair another arm's tasks)."""

    task_ids: tuple = ()


def split_cluster(cluster: Any, *rows) -> tuple[str | None, Families | None]:
    """(the field every interval clusters by, the families found to give beside): ``cluster``
    as given, or for ``"auto"`` the family field of the first of ``rows`` that carries one
    (none: tasks only). The families are those of the rows they were found in."""
    if cluster != AUTO:
        return cluster, None
    for data in rows:
        found = read_fields(data).family
        if found is None or found.n_values is None or found.n_values < 2:
            continue
        try:
            fam = families_of(data, found.name)
            return None, Found(fam.field, fam.codes, fam.names, tuple(data.task_ids))
        except WhileaiError:  # a row without it, or it changes within a task: no family
            continue
    return None, None


def beside(families: Families, ci: Interval | None, method: str | None, ci_note: str | None,
           verdict: str | None = None) -> FamilyInterval:
    """The family interval as an answer gives it: with what was done and how to turn it off."""
    off = arg("cluster", None)
    note = (f"`{families.field}` groups the {families.codes.shape[0]} tasks into "
            f"{families.n_families} families, so this interval resamples families, then tasks"
            + (f", and the verdict reads it" if verdict is not None else "")
            + f"; {off} reads tasks only")
    if ci_note:
        note += f"; {ci_note}"
    return FamilyInterval(field=families.field, n_families=families.n_families, ci=ci,
                          family_verdict=verdict, note=note + (f" ({method})" if method else ""))


def weaker(task: str, family: str | None) -> str:
    """The verdict no stronger than either interval allows: the same when they agree, else the
    one that claims less (a claim the clustered interval does not back is 'no detectable
    change')."""
    if family is None or family == task:
        return task
    if task == "insufficient_data" or family == "insufficient_data":
        return "insufficient_data" if task == "insufficient_data" else task
    if task not in _CLAIMS:
        return task
    return family if family not in _CLAIMS else "no_detectable_change"


def judged_by_family(found: Found, shared: list[str], d: np.ndarray, verdict: str,
                     judge, *, level: float, seed: int | None, bounds
                     ) -> tuple[FamilyInterval, str]:
    """(the paired difference's interval clustered by the families ``found``, the verdict no
    stronger than it): ``d`` is per shared task, ``judge`` the verdict an interval gives."""
    fam = found.take(positions(found.task_ids, shared))
    cd = cluster_interval(d, fam, level=level, seed=seed, bounds=bounds)
    family_verdict = judge(cd.ci) if cd.ci is not None else None
    return (beside(fam, cd.ci, cd.method, cd.note, family_verdict),
            weaker(verdict, family_verdict))


def family_roles(cluster: str | None, by_family: FamilyInterval | None) -> dict[str, str]:
    """What was done with the family fields: the one clustered by, the one given beside."""
    did = {}
    if cluster:
        did[cluster] = "every interval resamples its families, then tasks"
    if by_family is not None:
        did[by_family.field] = "its families' interval is given beside (families)"
    return did


def compare_fields(runs_b: list, runs_a: list, metric: str, cluster: str | None,
            by_family: FamilyInterval | None) -> list[str]:
    """What the comparison did with each role of the rows' fields (:mod:`whileai_core.roles`)."""
    what = "per-task mean reward" if metric == "reward" else (
        f"pass rate at threshold {runs_a[0].threshold:g}")
    did = {"task": "paired by task_id; intervals resample tasks" + (
               f" within families of `{cluster}`" if cluster else ""),
           "reward": f"compared as the {what}", "model": "one writer per arm",
           **family_roles(cluster, by_family)}
    before = [f"before: read {r.origin}" for r in runs_b[:1] if r.origin]
    return before + fields_report(runs_a[0], did)
