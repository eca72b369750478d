"""CLI: describe, route, pass-at, compare, compare-many, noise-floor, holdout-size."""

from __future__ import annotations

import argparse

from ..defaults import CONFIDENCE_LEVEL, HOLDOUT_ALPHA, HOLDOUT_K, HOLDOUT_POWER, PROVE_EFFECT
from ..errors import ArgumentError


def _metric(p: argparse.ArgumentParser, auto: bool = True) -> None:
    if auto:
        p.add_argument("--metric", choices=("auto", "pass", "reward"), default="auto",
                       help="per-task pass rate or mean reward (for scores, e.g. LCS); auto "
                            "(default): the mean reward when the reward is continuous and no "
                            "--threshold is given, else the pass rate")
    else:
        p.add_argument("--metric", choices=("pass", "reward"), default="pass",
                       help="per-task pass rate (default) or mean reward (for scores, e.g. LCS)")


def _cluster(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", default=None, metavar="FIELD",
                   help="row field naming each task's family (repo, document, template): "
                        "intervals resample families, then tasks")


def _describe(args):
    from ..describe import describe_rows  # lazy: loads when the command runs, not when the parser is built
    return describe_rows(args.rows, fields=args.field, threshold=args.threshold)


def _effect(p: argparse.ArgumentParser) -> None:
    p.add_argument("--effect", type=float, default=PROVE_EFFECT,
                   help="equivalence margin: 'flat' only when the whole interval is inside "
                        "+-EFFECT (0.05)")


def _route(args):
    from ..routing import route  # lazy: loads when the command runs, not when the parser is built
    from .hacking import plotted  # lazy: loads when the command runs, not when the parser is built
    result = route(args.rows, model=args.model, teacher_rows=args.teacher, taskset=args.taskset,
                   teacher_url=args.teacher_url, threshold=args.threshold, cluster=args.cluster)

    def draw(out, overwrite):
        from ..pictures import band_picture  # lazy: loads when the command runs, not when the parser is built
        return band_picture(args.rows, out=out, overwrite=overwrite, threshold=args.threshold)
    return plotted(args, result, draw)


def _pass_at(args):
    from ..stats import pass_at  # lazy: loads when the command runs, not when the parser is built
    return pass_at(args.rows, k=args.k, level=args.level, seed=args.seed, threshold=args.threshold,
                   cluster=args.cluster)


def _arm(first: str, more: list[str] | None):
    return [first, *more] if more else first


def _compare(args):
    from ..stats import compare  # lazy: loads when the command runs, not when the parser is built
    from .hacking import plotted  # lazy: loads when the command runs, not when the parser is built
    result = compare(_arm(args.before, args.before_seed), _arm(args.after, args.after_seed),
                     level=args.level, run_std=args.run_std, noise_runs=args.noise_runs,
                     effect=args.effect, seed=args.seed, threshold=args.threshold,
                     metric=args.metric, cluster=args.cluster, selected_on=args.selected_on)

    def draw(out, overwrite):
        from ..pictures import forest_picture  # lazy: loads when the command runs, not when the parser is built
        return forest_picture(args.before, args.after, by=args.by, run_std=args.run_std,
                              metric=result.metric, level=args.level, threshold=args.threshold,
                              out=out, overwrite=overwrite)
    return plotted(args, result, draw)


def _compare_many(args):
    from ..stats import compare_many  # lazy: loads when the command runs, not when the parser is built
    options = dict(level=args.level, effect=args.effect, seed=args.seed,
                   threshold=args.threshold, metric=args.metric)
    if args.checkpoint:
        if args.after is not None or args.by is not None:
            raise ArgumentError("give --checkpoint NAME=PATH, or AFTER with --by, not both. Fix: "
                                "drop one of them")
        ckpts = {}
        for item in args.checkpoint:
            name, sep, path = item.partition("=")
            if not sep or not name or not path:
                raise ArgumentError(f"--checkpoint must be NAME=PATH, got {item!r}. Fix: e.g. "
                                    "--checkpoint step-100=evals/step100.jsonl")
            ckpts[name] = path
        return compare_many(args.before, ckpts, **options)
    if args.after is None:
        raise ArgumentError("compare-many needs AFTER with --by FIELD, or --checkpoint NAME=PATH. "
                            "Fix: e.g. compare-many before.jsonl after.jsonl --by category")
    return compare_many(args.before, args.after, by=args.by, **options)


def _noise(args):
    from ..stats import noise_floor  # lazy: loads when the command runs, not when the parser is built
    return noise_floor(*args.runs, threshold=args.threshold, metric=args.metric, level=args.level,
                       cluster=args.cluster)


def _holdout(args):
    from ..stats import holdout_size  # lazy: loads when the command runs, not when the parser is built
    return holdout_size(args.effect, k=args.k, before=args.before, after=args.after,
                        power=args.power, alpha=args.alpha, threshold=args.threshold,
                        cluster=args.cluster)


def register(sub) -> None:
    from . import add_interval_flags, add_json_flag, add_threshold_flag  # lazy: loads when the command runs, not when the parser is built

    from .hacking import add_plot_flags  # lazy: loads when the command runs, not when the parser is built

    p = sub.add_parser("describe", help="every field the rows carry: type, coverage, values or "
                                        "range, constant or varying within a task",
                       description="Describe graded rows' fields before routing them.")
    p.add_argument("rows", help="graded rows (.jsonl or .json, or another system's output)")
    p.add_argument("--field", action="append", default=None, metavar="NAME",
                   help="describe only this field; repeatable")
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_describe)

    p = sub.add_parser("route", help="ask the six questions of graded rows and pick a method",
                       description="Route graded rows (JSONL/JSON) to a training method.")
    p.add_argument("rows", help="graded rows of the model you will train (.jsonl or .json)")
    p.add_argument("--model", required=True, help="id of the model you will train")
    p.add_argument("--teacher", default=None, help="a candidate teacher's rows on the same tasks")
    p.add_argument("--teacher-url", default=None,
                   help="where the teacher is served (default http://localhost:8001/v1)")
    p.add_argument("--taskset", default=None, help="taskset name for the suggested config call")
    _cluster(p)
    add_threshold_flag(p)
    add_json_flag(p)
    add_plot_flags(p, "the per-task band (always fail / split / always pass)")
    p.set_defaults(func=_route)

    p = sub.add_parser("pass-at", help="pass@1 (and pass@k, pass^k) with task-bootstrap intervals")
    p.add_argument("rows")
    p.add_argument("-k", type=int, default=None,
                   help="k for pass@k/pass^k (default: the fewest rollouts any task has)")
    _cluster(p)
    add_interval_flags(p)
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_pass_at)

    p = sub.add_parser("compare", help="paired before/after comparison by task, with a verdict")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--before-seed", action="append", default=None, metavar="PATH",
                   help="another run of the before arm (a training seed); repeatable")
    p.add_argument("--after-seed", action="append", default=None, metavar="PATH",
                   help="another run of the after arm (a training seed); repeatable")
    p.add_argument("--run-std", type=float, default=None,
                   help="run_std of the same eval re-run (see noise-floor); sets the noise band")
    p.add_argument("--noise-runs", type=int, default=None,
                   help="re-runs behind --run-std (default: read as 3, and said)")
    p.add_argument("--selected-on", default=None, metavar="FILE",
                   help="AFTER is a checkpoint chosen among several on these tasks (a task or "
                        "rows file, e.g. a split freeze-holdout wrote): say whether that is the "
                        "set it is scored on, and the fix")
    _cluster(p)
    _effect(p)
    add_interval_flags(p)
    _metric(p)
    add_threshold_flag(p)
    add_json_flag(p)
    add_plot_flags(p, "the forest of paired deltas (overall, and per --by value)")
    p.add_argument("--by", default=None, metavar="FIELD",
                   help="with --plot: one forest row per value of this row field (e.g. category)")
    p.set_defaults(func=_compare)

    p = sub.add_parser("compare-many", help="one paired comparison per category or checkpoint, "
                                            "Benjamini-Hochberg and Holm corrected")
    p.add_argument("before")
    p.add_argument("after", nargs="?", default=None, help="the new run (with --by)")
    p.add_argument("--by", default=None, help="row field to split by, e.g. category")
    p.add_argument("--checkpoint", action="append", default=None, metavar="NAME=PATH",
                   help="a checkpoint's rows on the same tasks, instead of AFTER; repeatable")
    _effect(p)
    add_interval_flags(p)
    _metric(p, auto=False)
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_compare_many)

    p = sub.add_parser("noise-floor", help="run_std of the same eval re-run, and the band")
    p.add_argument("runs", nargs="+", help="two or more rows files of the same eval")
    p.add_argument("--level", type=float, default=CONFIDENCE_LEVEL, help="band level (0.95)")
    _cluster(p)
    _metric(p)
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_noise)

    p = sub.add_parser("holdout-size", help="held-out tasks needed to detect an effect")
    p.add_argument("--effect", type=float, default=PROVE_EFFECT, help="effect to detect (0.05)")
    p.add_argument("-k", type=int, default=HOLDOUT_K, help="rollouts per task (4)")
    p.add_argument("--before", default=None, help="pilot rows of the model before training")
    p.add_argument("--after", default=None, help="pilot rows after (pairs with --before)")
    p.add_argument("--power", type=float, default=HOLDOUT_POWER, help="power (0.8)")
    p.add_argument("--alpha", type=float, default=HOLDOUT_ALPHA, help="two-sided alpha (0.05)")
    _cluster(p)
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_holdout)
