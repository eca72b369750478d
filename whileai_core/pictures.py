"""Pictures a person would rather look at than read, each with the numbers behind it.

- :func:`band_picture`: the per-task band behind the route (a histogram of per-task pass rates).
- :func:`forest_picture`: paired before/after deltas overall and per category, with intervals
  and the noise band (:func:`compare_picture`: compare's ``plot``).
- :func:`judge_picture`: the judge audit: agreement and Cohen's kappa per judge, against floors.
- :func:`watch_picture`: training reward per step beside the held-out rate and the paired delta
  against step 0 (:func:`watch_run_picture`: watch_run's ``plot``).

Each returns a :class:`Picture` result whose fields are the numbers drawn; ``picture.png()`` is
the PNG, written to ``out`` when given (atomically, never over a file unless ``overwrite``).
matplotlib is optional (``pip install 'whileai-skills[plot]'``) and slow to import, so it is
imported inside the functions that draw, with the Agg backend through its object API.
"""

from __future__ import annotations

import io
from typing import Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr

from .bootstrap import check_level
from .defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, JUDGE_MAX_FALSE_PASS,
                       JUDGE_MIN_AGREEMENT, JUDGE_MIN_KAPPA, PICTURE_DPI)
from .errors import ArgumentError
from .io import write_atomic
from .judge import audit_judge
from .result import Result, fmt_rate
from .rows import load_rows
from .stats import Rate, compare, pass_rate
from .stats import compare_many
from . import voice

Interval = tuple[float, float]
_PASS, _SPLIT, _FAIL, _INK = "#2e7d32", "#9e9e9e", "#c62828", "#1f3b73"


class Picture(Result):
    """A PNG and the numbers it shows. ``path``: where it was written (None: not written)."""

    kind: str
    title: str
    path: str | None = None
    width_px: int
    height_px: int
    _png: bytes = PrivateAttr(default=b"")

    def png(self) -> bytes:
        return self._png


def _figure(width: float = 8.0, height: float = 5.0):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ArgumentError("pictures need matplotlib, which is not installed", fix="pip install "
                            "'whileai-skills[plot]' (or pip install matplotlib)") from None
    fig = Figure(figsize=(width, height), dpi=PICTURE_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finish(fig, picture: Picture, out: Any, overwrite: bool) -> Picture:
    import matplotlib
    from matplotlib.text import Text

    # every label is the user's text, never mathtext (matplotlib parses $...$ as TeX); texts
    # made while drawing read the rc setting
    for text in fig.findobj(Text):
        text.set_parse_math(False)
    buf = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False}):
        fig.savefig(buf, format="png", dpi=PICTURE_DPI)
    data = buf.getvalue()
    path = None
    if out is not None:
        path = str(write_atomic(out, data, overwrite=overwrite))
    final = picture.model_copy(update={"path": path,
                                       "width_px": int(fig.get_figwidth() * PICTURE_DPI),
                                       "height_px": int(fig.get_figheight() * PICTURE_DPI)})
    final._png = data
    return final


# --- the per-task band -------------------------------------------------------------------------

class BandPicture(Picture):
    """Per-task pass rates binned: ``labels[i]`` has ``counts[i]`` tasks."""

    kind: Literal["band"] = "band"
    labels: list[str]
    counts: list[int]
    n_always_fail: int
    n_split: int
    n_always_pass: int
    n_tasks: int
    n_rows: int
    pass_at_1: Rate

    def render(self) -> str:
        bars = ", ".join(f"{lab}: {c}" for lab, c in zip(self.labels, self.counts))
        return (f"{self.title}\n{bars}\npass@1 {self.pass_at_1.render()}"
                + (f"\nwritten: {self.path}" if self.path else ""))


def band_picture(rows: Any, *, out: Any = None, overwrite: bool = False,
                 threshold: float | None = None, level: float = CONFIDENCE_LEVEL) -> BandPicture:
    """Histogram of per-task pass rates, coloured always-fail / split / always-pass."""
    level = check_level(level)
    data = load_rows(rows, threshold=threshold)
    p = data.pass_rate()
    edges = [0.2, 0.4, 0.6, 0.8]
    inner = (p > 0) & (p < 1)
    labels = ["0 (always fail)"] + [f"({lo:.1f}, {hi:.1f}]" if hi < 1 else f"({lo:.1f}, 1.0)" for lo, hi in
                                    zip([0.0] + edges, edges + [1.0])] + ["1 (always pass)"]
    counts = [int((p == 0).sum())]
    bins = np.digitize(p[inner], edges, right=True)
    counts += [int((bins == i).sum()) for i in range(len(edges) + 1)]
    counts.append(int((p == 1).sum()))
    rate = pass_rate(data, level, BOOTSTRAP_SEED, "pass")
    title = (f"Per-task band: {data.n_tasks} tasks, {data.n_rows} rollouts; pass@1 "
             f"{fmt_rate(rate.value, rate.ci)}")
    fig = _figure()
    ax = fig.add_subplot()
    colors = [_FAIL] + [_SPLIT] * (len(edges) + 1) + [_PASS]
    bars = ax.bar(range(len(counts)), counts, color=colors, edgecolor="black", linewidth=0.5)
    ax.bar_label(bars, labels=[str(c) for c in counts], padding=2)
    ax.set_xticks(range(len(counts)), labels, rotation=20, ha="right")
    ax.set_xlabel("per-task pass rate (share of a task's rollouts that pass)")
    ax.set_ylabel("tasks")
    ax.set_ylim(0, max(counts) * 1.15 + 1)
    ax.yaxis.get_major_locator().set_params(integer=True)  # a count of tasks: no 2.5 ticks
    split = int(inner.sum())
    ax.set_title(f"{title}\nalways fail {counts[0]}, split {split}, always pass {counts[-1]} "
                 "(only split tasks give a grouped method signal)", fontsize=10)
    picture = BandPicture(title=title, width_px=0, height_px=0, labels=labels, counts=counts,
                          n_always_fail=counts[0], n_split=split, n_always_pass=counts[-1],
                          n_tasks=data.n_tasks, n_rows=data.n_rows, pass_at_1=rate)
    return _finish(fig, picture, out, overwrite)


# --- the forest of paired deltas ---------------------------------------------------------------

class ForestRow(Result):
    group: str
    delta: float | None
    ci: Interval | None
    n_paired: int
    verdict: str
    p_bh: float | None = None
    survives_bh: bool | None = None
    survives_holm: bool | None = None


class ForestPicture(Picture):
    """Paired deltas (after - before) overall and per value of ``by``."""

    kind: Literal["forest"] = "forest"
    by: str | None
    metric: Literal["pass", "reward"]
    rows: list[ForestRow]
    noise_band: float | None
    n_groups: int
    level: float
    note: str | None = None
    shown: str | None = Field(None, description="when groups were left out: 'n of N shown'")

    def render(self) -> str:
        lines = [self.title]
        for r in self.rows:
            ci = f" [{r.ci[0]:+.3f}, {r.ci[1]:+.3f}]" if r.ci else " [no interval]"
            d = "n/a" if r.delta is None else f"{r.delta:+.3f}{ci}"
            mark = "" if r.survives_bh is None else (
                " (survives Holm)" if r.survives_holm else " (survives BH)" if r.survives_bh
                else " (not after correction)")
            lines.append(f"{r.group:<20} {d} (n={r.n_paired} paired tasks) {r.verdict}{mark}")
        if self.note:
            lines.append(f"note: {self.note}")
        if self.shown:
            lines.append(f"({self.shown})")
        return "\n".join(lines + ([f"written: {self.path}"] if self.path else []))


def forest_picture(before: Any, after: Any, *, by: str | None = None,
                   run_std: float | None = None, metric: Literal["pass", "reward"] = "pass",
                   out: Any = None, overwrite: bool = False, threshold: float | None = None,
                   level: float = CONFIDENCE_LEVEL, max_groups: int = 20) -> ForestPicture:
    """Forest plot: the paired delta with its interval overall and for each value of ``by`` (a
    row field such as ``category``), with the noise band (t x sqrt(2) x ``run_std``) shaded.
    Groups come from :func:`whileai_core.compare_many`: a group is coloured only when it
    survives the Benjamini-Hochberg correction for the number of groups."""
    level = check_level(level)
    b, a = load_rows(before, threshold=threshold), load_rows(after, threshold=threshold)
    overall = compare(b, a, level=level, run_std=run_std, metric=metric)
    rows = [ForestRow(group="overall", delta=overall.delta, ci=overall.ci,
                      n_paired=overall.n_paired, verdict=overall.verdict)]
    groups: list[str] = []
    shown = None
    if by is not None:
        groups, drawn, shown = _forest_groups(b, a, by, level, run_std, metric, max_groups)
        rows += drawn
    note = None
    if len(groups) > 1:
        kept = sum(bool(r.survives_bh) for r in rows[1:])
        note = (f"{len(groups)} groups read at once: each interval is a {level:.0%} interval on "
                f"its own; {kept} survive the Benjamini-Hochberg correction for looking at "
                f"several ({voice.name('compare_many')})")
    what = "pass rate" if metric == "pass" else "mean reward"
    title = (f"Paired {what} delta (after - before): n={overall.n_paired} tasks"
             + (f", by {by}" if by else ""))
    fig = _figure(8.0, max(3.0, 1.2 + 0.55 * len(rows)))
    _draw_forest(fig.add_subplot(), rows, overall, title,
                 f"paired delta in {what} ({level:.0%} interval, tasks resampled)")
    picture = ForestPicture(title=title, width_px=0, height_px=0, by=by, metric=metric,
                            rows=rows, noise_band=overall.noise_band, n_groups=len(groups),
                            level=level, note=note, shown=shown)
    return _finish(fig, picture, out, overwrite)


def _forest_groups(b, a, by: str, level: float, run_std: float | None, metric: str,
                   max_groups: int) -> tuple[list[str], list[ForestRow], str | None]:
    """The values of ``by`` in ``before``'s order, a row for each one drawn (at most
    ``max_groups``: compare_many's smallest p), and the 'n of N shown' note."""
    keys_b = [str(v) for v in b.column(by)]
    if not b.has_field(by):
        raise ArgumentError(f"`by` {by!r} is a field of no row in `before`", fix="name a row "
                            "field such as 'category', or omit by")
    groups = list(dict.fromkeys(keys_b))
    many = {m.name: m for m in compare_many(
        b, a, by=by, level=level, run_std=run_std, metric=metric).behaviours}
    drawn, shown = groups, None
    if len(groups) > max_groups:  # the ones that matter most: compare_many's smallest p
        first = set(list(many)[:max_groups])
        drawn = [g for g in groups if _group_name(g) in first]
        shown = (f"groups: {len(drawn)} of {len(groups)} shown (the smallest p, in the "
                 "rows' order); compare_many lists them all")
    rows = []
    for g in drawn:
        m = many.get(_group_name(g))
        rows.append(ForestRow(group=g, delta=None, ci=None, n_paired=0,
                              verdict="insufficient_data") if m is None else
                    ForestRow(group=g, delta=m.delta, ci=m.ci, n_paired=m.n_paired,
                              verdict=m.verdict, p_bh=m.p_bh, survives_bh=m.survives_bh,
                              survives_holm=m.survives_holm))
    return groups, rows, shown


def _group_name(group: str) -> str:
    """A group as compare_many names it (rows without the field: "(missing)")."""
    return "(missing)" if group == "None" else group


def _draw_forest(ax, rows: list[ForestRow], overall: Any, title: str, xlabel: str) -> None:
    ys = np.arange(len(rows))[::-1]
    band = overall.noise_band
    if band:
        ax.axvspan(-band, band, color="#ffe0b2",
                   label=f"noise band +/-{band:.3f} ({overall.noise_runs} re-runs)")
    ax.axvline(0, color="black", linewidth=0.8)
    for y, r in zip(ys, rows):
        if r.delta is None:
            continue
        called = r.survives_bh if r.survives_bh is not None else True
        color = _INK if not called else (_PASS if r.verdict == "moved" else
                                         _FAIL if r.verdict == "moved_the_wrong_way" else _INK)
        if r.ci is not None:
            ax.errorbar(r.delta, y, xerr=[[r.delta - r.ci[0]], [r.ci[1] - r.delta]],
                        fmt="s" if r.group == "overall" else "o", color=color, capsize=4,
                        markersize=8 if r.group == "overall" else 6)
        else:
            ax.plot(r.delta, y, "x", color=color)
    ax.set_yticks(ys, [f"{r.group} (n={r.n_paired})\n{r.verdict}" for r in rows])
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    if band:
        ax.legend(loc="lower right", fontsize=8)


def compare_picture(arguments: dict[str, Any], result: Any, *, out: Any = None,
                    overwrite: bool = False) -> ForestPicture:
    """compare's picture (``plot``): the forest of its call's ``arguments``."""
    before, after = arguments["before"], arguments["after"]
    if any(isinstance(v, list) and v and not all(isinstance(x, dict) for x in v)
           for v in (before, after)):
        raise ArgumentError("plot draws one run per arm, not a list of seed runs", fix="give one "
                            "rows file for `before` and for `after`, or leave plot off")
    return forest_picture(before, after, by=arguments.get("by"),
                          run_std=arguments.get("run_std"),
                          metric=getattr(result, "metric", None) or arguments.get("metric",
                                                                                  "pass"),
                          level=arguments.get("level", CONFIDENCE_LEVEL),
                          threshold=arguments.get("threshold"), out=out, overwrite=overwrite)


# --- the judge audit -------------------------------------------------------------------------

class JudgeBar(Result):
    name: str
    n: int
    agreement: float
    agreement_ci: Interval | None
    kappa: float | None
    kappa_ci: Interval | None
    n_label_fail: int = 0
    false_pass: float | None = None
    false_pass_ci: Interval | None = None
    verdict: str
    reasons: list[str] = []


class JudgePicture(Picture):
    kind: Literal["judge_audit"] = "judge_audit"
    judges: list[JudgeBar]
    n_items: int
    n_label_fail: int
    floors: dict[str, float]

    def render(self) -> str:
        lines = [self.title]
        for j in self.judges:
            k = "undefined" if j.kappa is None else (
                f"{j.kappa:.3f}" + (f" [{j.kappa_ci[0]:.3f}, {j.kappa_ci[1]:.3f}]" if j.kappa_ci else ""))
            fp = ("" if j.false_pass is None else ", false pass " + fmt_rate(
                j.false_pass, j.false_pass_ci, j.n_label_fail, "label-fail items"))
            lines.append(f"{j.name}: agreement {fmt_rate(j.agreement, j.agreement_ci, j.n, 'items')}, "
                         f"kappa {k}{fp}, {j.verdict}" + "".join(f"\n  - {r}" for r in j.reasons))
        return "\n".join(lines + ([f"written: {self.path}"] if self.path else []))


def judge_picture(items: Any, *, judges: list[str] | None = None, out: Any = None,
                  overwrite: bool = False, level: float = CONFIDENCE_LEVEL) -> JudgePicture:
    """Agreement and kappa per judge, each with its interval, against the audit's floors."""
    audit = audit_judge(items, judges=judges, level=level)
    # the audit's own kappa interval (whileai_core.judge.kappa_interval): one number per question
    bars = [JudgeBar(name=rep.name, n=rep.n, agreement=rep.agreement,
                     agreement_ci=rep.agreement_ci, kappa=rep.kappa, kappa_ci=rep.kappa_ci,
                     n_label_fail=rep.n_label_fail, false_pass=rep.false_pass,
                     false_pass_ci=rep.false_pass_ci, verdict=rep.verdict, reasons=rep.reasons)
            for rep in audit.judges]
    title = (f"Judge audit: {audit.n_items} labelled items ({audit.n_label_fail} label failures), "
             f"{len(bars)} judges")
    fig = _figure(12.0, max(3.4, 1.8 + 0.7 * len(bars)))
    axes = fig.subplots(1, 3, sharey=True)
    ys = np.arange(len(bars))[::-1]
    for ax, key, floor, xlabel in (
            (axes[0], "agreement", audit.floors.get("agreement_lower", JUDGE_MIN_AGREEMENT),
             "agreement with the labels (Wilson interval)"),
            (axes[1], "kappa", audit.floors.get("kappa", JUDGE_MIN_KAPPA),
             "Cohen's kappa (item bootstrap interval)"),
            (axes[2], "false_pass", audit.floors.get("false_pass_max", JUDGE_MAX_FALSE_PASS),
             "false pass on label-fail items\n(Wilson interval; top under the line to clear)")):
        for y, bar in zip(ys, bars):
            value = getattr(bar, key)
            ci = getattr(bar, f"{key}_ci")
            if value is None:
                ax.text(0.02, y, "undefined", va="center")
                continue
            color = _PASS if bar.verdict == "clears" else _FAIL if bar.verdict == "fails" else _INK
            err = None if ci is None else [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]]
            ax.errorbar(value, y, xerr=err, fmt="o", color=color, capsize=4)
        ax.axvline(floor, color="black", linestyle="--", linewidth=1,
                   label=f"{'ceiling' if key == 'false_pass' else 'floor'} {floor:g}")
        ax.set_xlim(min(-0.05, min((getattr(b, f'{key}_ci') or (0, 0))[0] for b in bars) - 0.05), 1.05)
        ax.set_xlabel(xlabel)
        ax.legend(loc="lower right", fontsize=8)
    axes[0].set_yticks(ys, [f"{b.name} (n={b.n})\naudit: {b.verdict}" for b in bars])
    fig.suptitle(title, fontsize=10)
    picture = JudgePicture(title=title, width_px=0, height_px=0, judges=bars,
                           n_items=audit.n_items, n_label_fail=audit.n_label_fail,
                           floors=audit.floors)
    return _finish(fig, picture, out, overwrite)


# --- the watch curve ---------------------------------------------------------------------------

class WatchPicture(Picture):
    kind: Literal["watch"] = "watch"
    decision: str
    steps: list[int]
    train_reward: list[float | None]
    eval_steps: list[int]
    held_out: list[float]
    held_out_ci: list[Interval | None]
    delta: list[float | None]
    delta_ci: list[Interval | None]
    train_climb: list[float | None] = []
    train_noise_band: list[float | None] = []
    n_tasks: int | None
    level: float

    def render(self) -> str:
        lines = [self.title]
        for s, v, ci, d in zip(self.eval_steps, self.held_out, self.held_out_ci, self.delta):
            lines.append(f"step {s}: held-out {fmt_rate(v, ci, self.n_tasks)}"
                         + ("" if d is None else f", delta {d:+.3f}"))
        return "\n".join(lines + ([f"written: {self.path}"] if self.path else []))


def _spacing(evals: list) -> float:
    """The smallest gap between evaluation steps (to set the climb marker beside the delta)."""
    gaps = np.diff([s.step for s in evals])
    return float(gaps.min()) if gaps.size else 1.0


def watch_picture(watch: Any, *, out: Any = None, overwrite: bool = False) -> WatchPicture:
    """Training reward per step and the held-out rate with its interval; below, the paired
    delta against the first evaluation. ``watch``: a :class:`~whileai_core.hacking.Watch` or
    anything :func:`~whileai_core.hacking.watch_run` takes."""
    from .hacking.watch import Watch, watch_run  # lazy: route_rows loads this module

    w = watch if isinstance(watch, Watch) else watch_run(watch)
    train = [(s.step, s.train_reward) for s in w.steps if s.train_reward is not None]
    evals = [s for s in w.steps if s.held_out is not None]
    n_tasks = evals[0].held_out.n_tasks if evals else None
    what = "pass rate" if w.metric == "pass" else "mean reward"
    title = (f"Watch: {w.decision}; training reward vs held-out {what} "
             f"(n={n_tasks} held-out tasks, {w.n_steps} steps)")
    fig = _figure(8.0, 6.0)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    if train:
        top.plot([t[0] for t in train], [t[1] for t in train], "-", color="#ef6c00",
                 label="training reward (per step)")
    for s in evals:
        ci = s.held_out.ci
        err = None if ci is None else [[s.held_out.value - ci[0]], [ci[1] - s.held_out.value]]
        top.errorbar(s.step, s.held_out.value, yerr=err, fmt="o", color=_INK, capsize=4,
                     label=f"held-out ({w.level:.0%} interval)" if s is evals[0] else None)
    top.set_ylabel(f"training reward / held-out {what}")
    top.legend(loc="best", fontsize=8)
    top.set_title(title, fontsize=10)
    bottom.axhline(0, color="black", linewidth=0.8)
    for s in evals:
        if s.delta is None:
            continue
        ci = s.delta_ci
        err = None if ci is None else [[s.delta - ci[0]], [ci[1] - s.delta]]
        color = _FAIL if s.condition else _INK
        bottom.errorbar(s.step, s.delta, yerr=err, fmt="s", color=color, capsize=4)
        if s.train_climb is not None:
            band = s.train_noise_band
            bottom.errorbar(s.step + 0.15 * max(1, _spacing(evals)), s.train_climb,
                            yerr=None if band is None else [[band], [band]], fmt="^",
                            color="#ef6c00", capsize=3, alpha=0.9)
    bottom.plot([], [], "^", color="#ef6c00",
                label="training reward climb (last - first steps) ± its noise band")
    bottom.plot([], [], "s", color=_INK,
                label=f"held-out delta vs first eval ({w.level:.0%} interval)")
    bottom.plot([], [], "s", color=_FAIL, label="stop condition holds")
    bottom.legend(loc="best", fontsize=8)
    bottom.set_xlabel("optimizer step")
    bottom.set_ylabel("change since first eval")
    picture = WatchPicture(
        title=title, width_px=0, height_px=0, decision=w.decision,
        steps=[s.step for s in w.steps], train_reward=[s.train_reward for s in w.steps],
        eval_steps=[s.step for s in evals], held_out=[s.held_out.value for s in evals],
        held_out_ci=[s.held_out.ci for s in evals], delta=[s.delta for s in evals],
        delta_ci=[s.delta_ci for s in evals], train_climb=[s.train_climb for s in evals],
        train_noise_band=[s.train_noise_band for s in evals], n_tasks=n_tasks, level=w.level)
    return _finish(fig, picture, out, overwrite)


def watch_run_picture(arguments: dict[str, Any], result: Any, *, out: Any = None,
                      overwrite: bool = False) -> WatchPicture:
    """watch_run's picture (``plot``): the curve of its answer."""
    return watch_picture(result, out=out, overwrite=overwrite)


def audit_judge_picture(arguments: dict[str, Any], result: Any, *, out: Any = None,
                        overwrite: bool = False) -> JudgePicture:
    """audit_judge's picture (``plot``): agreement and kappa per judge of its call's items."""
    return judge_picture(arguments["items"], judges=arguments.get("judges"),
                         level=arguments.get("level", CONFIDENCE_LEVEL), out=out,
                         overwrite=overwrite)
