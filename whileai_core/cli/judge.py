"""CLI: audit-judge, order-reversal (the audit-your-judge skill from a shell)."""

from __future__ import annotations

from ..defaults import (JUDGE_FALSE_PASS_HALF_WIDTH, JUDGE_MAX_FALSE_PASS,
                       JUDGE_MAX_ORDER_FLIPS, JUDGE_MIN_AGREEMENT, JUDGE_MIN_KAPPA)


def _audit(args):
    from ..judge import audit_judge  # lazy: loads when the command runs, not when the parser is built
    from .hacking import plotted  # lazy: loads when the command runs, not when the parser is built
    result = audit_judge(args.items, judges=args.judges, min_agreement=args.min_agreement,
                         min_kappa=args.min_kappa, max_false_pass=args.max_false_pass,
                         half_width=args.half_width, level=args.level)

    def draw(out, overwrite):
        from ..pictures import judge_picture  # lazy: loads when the command runs, not when the parser is built
        return judge_picture(args.items, judges=args.judges, level=args.level, out=out,
                             overwrite=overwrite)
    return plotted(args, result, draw)


def _order(args):
    from ..judge import order_reversal  # lazy: loads when the command runs, not when the parser is built
    return order_reversal(args.pairs, max_flips=args.max_flips, level=args.level)


def register(sub) -> None:
    from . import add_interval_flags, add_json_flag  # lazy: loads when the command runs, not when the parser is built
    from .hacking import add_plot_flags  # lazy: loads when the command runs, not when the parser is built

    p = sub.add_parser(
        "audit-judge", help="read candidate LLM judges against blind human labels",
        description="Per judge: agreement, Cohen's kappa, false-pass rate (with intervals and "
                    "n), length bias and a verdict (clears / label_more / fails); the judge to "
                    "use, if any, and the next step.")
    p.add_argument("items", help='labelled items (.jsonl or .json), one per reply: {"id": "t1", '
                                 '"label": true, "grades": {"judge-a": true}, "reply": "..."}')
    p.add_argument("--judge", dest="judges", action="append", metavar="NAME", default=None,
                   help="a judge to audit (repeatable; default: every name found in grades)")
    p.add_argument("--min-agreement", type=float, default=JUDGE_MIN_AGREEMENT,
                   help="floor on agreement's interval lower bound (default %(default)s)")
    p.add_argument("--min-kappa", type=float, default=JUDGE_MIN_KAPPA,
                   help="floor on Cohen's kappa (default %(default)s)")
    p.add_argument("--max-false-pass", type=float, default=JUDGE_MAX_FALSE_PASS,
                   help="ceiling on the share of label-fail replies passed (default %(default)s)")
    p.add_argument("--half-width", type=float, default=JUDGE_FALSE_PASS_HALF_WIDTH,
                   help="false-pass precision the sample is sized for (default %(default)s)")
    add_interval_flags(p, seed=False)
    add_json_flag(p)
    add_plot_flags(p, "agreement and kappa per judge with intervals")
    p.set_defaults(func=_audit)

    p = sub.add_parser(
        "order-reversal", help="does a pairwise judge's pick flip with the order?",
        description="Read a pairwise judge's picks with each pair shown in both orders: flips "
                    "with an interval, and whether its order can rank or only its top pick.")
    p.add_argument("pairs", help='pairs (.jsonl or .json): {"id": ..., "forward": '
                                 '"first"|"second"|"tie", "reversed": "first"|"second"|"tie"}')
    p.add_argument("--max-flips", type=float, default=JUDGE_MAX_ORDER_FLIPS,
                   help="largest flip share for the order to rank (default %(default)s)")
    add_interval_flags(p, seed=False)
    add_json_flag(p)
    p.set_defaults(func=_order)
