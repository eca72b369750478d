"""whileai_core.judge against hand counts, scipy, and constructed judges."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from whileai_core import defaults as D
from whileai_core.errors import ArgumentError, RowsError
from whileai_core.judge import (audit_judge, cohen_kappa, failures_needed, order_reversal,
                                rubric_ablation, wilson_interval)

# Ten labelled items, counted by hand:
#   labels  P P P P P P F F F F   (6 pass, 4 fail)
#   judge   P P P P P F P F F F
# agreement 8/10; judge pass share 6/10, label pass share 6/10;
# p_e = .6*.6 + .4*.4 = .52; kappa = (.8 - .52) / (1 - .52) = .28/.48 = 7/12;
# false pass = 1 of 4 label-fails; false fail = 1 of 6 label-passes.
LABELS = [True] * 6 + [False] * 4
JUDGE = [True] * 5 + [False, True] + [False] * 3


def _items(labels, **judges):
    return [{"id": f"i{i}", "label": lab, "grades": {n: g[i] for n, g in judges.items()}}
            for i, lab in enumerate(labels)]


def test_kappa_agreement_false_pass_match_hand_counts():
    assert cohen_kappa(LABELS, JUDGE) == pytest.approx(7 / 12, abs=1e-12)
    audit = audit_judge(_items(LABELS, j=JUDGE))
    (rep,) = audit.judges
    assert rep.agreement == pytest.approx(0.8)
    assert rep.kappa == pytest.approx(7 / 12)
    assert rep.false_pass == pytest.approx(0.25)
    assert rep.false_fail == pytest.approx(1 / 6)
    assert rep.n_label_fail == 4 and audit.n_label_fail == 4
    # kappa 0.583 < 0.6: fails its floor on the hand count alone
    assert rep.verdict == "fails"


@pytest.mark.parametrize("x,n", [(0, 10), (10, 10), (8, 10), (1, 4), (56, 127), (388, 400)])
def test_wilson_matches_scipy(x, n):
    ref = stats.binomtest(x, n).proportion_ci(0.95, method="wilson")
    lo, hi = wilson_interval(x, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_kappa_matches_definition_on_random_raters():
    # cross-check against a from-the-definition 2x2 table computation
    rng = np.random.default_rng(3)
    a = rng.random(200) < 0.6
    b = np.where(rng.random(200) < 0.8, a, ~a)
    table = np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]) / 200
    p_o = np.trace(table)
    p_e = float(table.sum(1) @ table.sum(0))
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-12)


def test_kappa_undefined_when_both_constant():
    assert cohen_kappa([True] * 5, [True] * 5) is None
    audit = audit_judge(_items([True] * 5, j=[True] * 5))
    assert audit.judges[0].verdict == "fails"
    assert "undefined" in audit.judges[0].reasons[0]


def test_failures_needed_closed_form():
    # 1.959964^2 * 0.25 / 0.1^2 = 96.04 -> 97; at 0.05: 384.15 -> 385
    assert failures_needed(0.1) == 97
    assert failures_needed(0.05) == 385
    z = stats.norm.ppf(0.975)
    assert failures_needed(0.1) == math.ceil(z * z * 0.25 / 0.01)


def _population(seed=0, n=400):
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.65
    accurate = np.where(rng.random(n) < 0.95, labels, ~labels)
    generous = labels | (rng.random(n) < 0.5)
    return labels, accurate, generous


def test_always_pass_and_generous_fail_accurate_clears():
    labels, accurate, generous = _population()
    audit = audit_judge(_items(labels.tolist(), always=[True] * len(labels),
                               generous=generous.tolist(), accurate=accurate.tolist()))
    by = {r.name: r for r in audit.judges}
    assert by["always"].verdict == "fails"
    assert by["always"].kappa == pytest.approx(0.0)      # p_o = p_e when one rater is constant
    assert by["always"].false_pass == 1.0
    assert by["generous"].verdict == "fails"
    assert by["generous"].false_pass > D.JUDGE_MAX_FALSE_PASS
    assert by["accurate"].verdict == "clears"
    assert by["accurate"].agreement_ci[0] >= D.JUDGE_MIN_AGREEMENT
    assert audit.best == "accurate"
    # hand count of the accurate judge's false passes, independent of the module
    fails = ~labels
    assert by["accurate"].false_pass == pytest.approx((accurate & fails).sum() / fails.sum())


def test_small_sample_says_label_more():
    labels, accurate, _ = _population(seed=1, n=60)
    accurate = labels.copy()                     # perfect judge, but only ~21 failures
    audit = audit_judge(_items(labels.tolist(), perfect=accurate.tolist()))
    assert audit.judges[0].verdict == "label_more"
    assert "label more" in audit.next_step


def test_length_bias_flags_a_judge_that_likes_long_replies():
    rng = np.random.default_rng(5)
    n = 300
    labels = rng.random(n) < 0.5
    length = rng.integers(50, 500, n)
    long_lover = length > 275                    # grades by length alone
    items = [{"id": str(i), "label": bool(labels[i]), "length": int(length[i]),
              "grades": {"long": bool(long_lover[i]), "fair": bool(labels[i])}}
             for i in range(n)]
    by = {r.name: r for r in audit_judge(items).judges}
    r_label = np.corrcoef(length, labels)[0, 1]
    r_long = np.corrcoef(length, long_lover)[0, 1]
    assert by["long"].length_bias == pytest.approx(r_long - r_label)
    assert any("length bias" in r for r in by["long"].reasons)
    assert by["fair"].length_bias == pytest.approx(0.0, abs=1e-12)


def test_reads_jsonl_and_names_bad_fields(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _items(LABELS, j=JUDGE)) + "\n")
    assert audit_judge(str(path)).judges[0].kappa == pytest.approx(7 / 12)
    with pytest.raises(RowsError, match=r"item 2.*`label`.*Fix"):
        audit_judge([{"label": True, "grades": {"j": 1}}, {"grades": {"j": 1}}])
    with pytest.raises(RowsError, match=r"'b' did not grade"):
        audit_judge([{"label": True, "grades": {"a": 1}}, {"label": 0, "grades": {"a": 1, "b": 0}}])
    with pytest.raises(RowsError, match=r"`grades.j` is 0.7"):
        audit_judge([{"label": True, "grades": {"j": 0.7}}])
    with pytest.raises(ArgumentError, match="min_kappa"):
        audit_judge(_items(LABELS, j=JUDGE), min_kappa=1.5)


def test_order_reversal_counts_flips():
    pairs = ([{"forward": "first", "reversed": "second"}] * 7      # consistent
             + [{"forward": "tie", "reversed": "tie"}]              # consistent
             + [{"forward": "first", "reversed": "first"}]          # position bias
             + [{"forward": "tie", "reversed": "first"}])           # tie flip
    res = order_reversal(pairs)
    assert (res.n_pairs, res.consistent, res.flips, res.tie_flips) == (10, 8, 2, 1)
    assert res.verdict == "top_pick_only"
    assert order_reversal(pairs[:8]).verdict == "ranking"
    with pytest.raises(RowsError, match="`reversed`"):
        order_reversal([{"forward": "first", "reversed": "A"}])


def test_rubric_ablation_finds_needed_and_harmful_clauses():
    # items carry the facts each clause checks; the label is "correct and cites a source"
    items = [{"id": str(i), "correct": c, "cites": s, "polite": p, "label": c and s}
             for i, (c, s, p) in enumerate([(c, s, p) for c in (0, 1) for s in (0, 1)
                                            for p in (0, 1)] * 3)]

    def grade(clauses, rows):
        return [all(r[c] for c in clauses) for r in rows]

    res = rubric_ablation(items, grade, ["correct", "cites", "polite"])
    by = {c.clause: c for c in res.clauses}
    # hand count over the 8 combinations: the full rubric also demands politeness, so it
    # disagrees on (1,1,0): 7/8. Dropping "polite" gives 8/8 (hurts); dropping "correct"
    # passes (0,1,1) too: 6/8; dropping "cites" passes (1,0,1): 6/8.
    assert res.agreement == pytest.approx(7 / 8)
    assert by["polite"].effect == "hurts" and by["polite"].agreement == pytest.approx(1.0)
    assert by["correct"].effect == "needed" and by["correct"].agreement == pytest.approx(6 / 8)
    assert by["cites"].delta == pytest.approx(-1 / 8)
    # 24 items at 7/8: Wilson(21, 24) half-width ~0.14, so every 1/8 change is within noise
    lo, hi = wilson_interval(21, 24)
    assert all(c.within_noise == (abs(c.delta) < (hi - lo) / 2) for c in res.clauses)
