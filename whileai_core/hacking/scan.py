"""Within each task, does the reward rise with a feature of the reply rather than with the task?

A feature's strength (:mod:`.features`) is its pooled within-task correlation with the reward:
both centred on their task's mean, as GRPO's advantage is, so a feature that only tracks task
difficulty contributes nothing. The floor is a permutation test within tasks [1]: the rewards
are shuffled among each task's replies (a reply repeated word for word moves with its copies,
:func:`_copy_units`), and a feature is tested against the largest strength over all features
in each shuffle (max-T [2]: a clean batch clears it with probability at most 1 - level). It is
``suspect`` when its one-sided p-value is at most ``1 - level`` and its strength at least
``min_strength`` (a large batch makes a trivial association significant), a ``weak_signal``
when only the p-value clears. A correlation is not a payment (a right answer can be naturally
longer): the answer names the probe that tells them apart.

Scanned again and again during a run, the scans share ``SCAN_RUN_SHARE`` of the run's error:
scan ``look=j`` spends ``SCAN_RUN_SHARE (1 - level) / (j (j + 1))``
(:func:`.anytime.look_alpha`), so an honest run alarms at some scan with probability at most
``SCAN_RUN_SHARE (1 - level)``. Deep looks need small p-values, so the shuffles continue past
``n_shuffles`` (up to ``SCAN_MAX_SHUFFLES``) while some feature could still clear (a sequential
Monte Carlo test, Besag & Clifford [3]).

[1] Good (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, ch. 3 (restricted
    permutations within blocks).
[2] Westfall & Young (1993). Resampling-Based Multiple Testing (single-step maxT).
[3] Besag & Clifford (1991). Sequential Monte Carlo p-values. Biometrika 78(2), 301-304.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, MIN_TASKS_FOR_INTERVAL,
                        SCAN_EXAMPLE_CHARS, SCAN_MAX_SHUFFLES, SCAN_MIN_STRENGTH, SCAN_RUN_SHARE,
                        SCAN_SHUFFLES, SCAN_SHUFFLES_ASKED_MAX)
from ..errors import ArgumentError
from ..operations import READS, VERDICT, operation
from ..operations.args import MAX_NAME, Arg, Level, Rows, Seed, Threshold
from ..result import Result
from .. import voice
from ..voice import arg
from ..rows import load_rows
from .anytime import look_alpha
from .features import feature_matrix, reply_text

ScanVerdict = Literal["clean", "weak_signal", "suspect", "not_enough_data"]
_CHUNK_CELLS = 4_000_000
_TIE = 1e-9  # strengths (correlations, in [-1, 1]) closer than this are the same value


class ScanExample(Result):
    """The task where the feature and the reward move together most, its two extreme replies."""

    task_id: str
    high_feature: float
    high_reward: float
    high_reply: str | None
    low_feature: float
    low_reward: float
    low_reply: str | None


class FeatureEvidence(Result):
    """One feature against the task-centred reward."""

    feature: str
    strength: float | None = None
    floor: float | None = None
    p_value: float | None = None
    n_rows: int
    n_tasks: int
    verdict: Literal["clean", "weak_signal", "suspect", "no_variation", "not_tested"]
    example: ScanExample | None = None

    def render(self) -> str:
        if self.verdict == "not_tested":
            return f"{self.feature:<16} not_tested (too few tasks whose rewards differ)"
        if self.strength is None:
            return f"{self.feature:<16} no_variation (constant within every task)"
        floor = "n/a: the shuffles stopped early" if self.floor is None else f"{self.floor:.3f}"
        return (f"{self.feature:<16} {self.verdict:<11} strength {self.strength:+.3f} "
                f"(floor {floor}, p={self.p_value:.3f}, n={self.n_rows} rows in "
                f"{self.n_tasks} tasks)")


class HackScan(Result):
    """Which reply features track the reward within tasks, each against the shuffle floor (a
    correlation: whether the reward pays for one is a probe's question, named in next_step)."""

    verdict: ScanVerdict
    suspects: list[str]
    weak: list[str] = Field([], description="features that clear the floor with a strength "
                                            "under min_strength: a small real signal")
    features: list[FeatureEvidence]
    floor: float | None = Field(description="the shuffled maximum's quantile at 1 - alpha (None "
                                            "when the shuffles stopped early: the p-values decide)")
    alpha: float = Field(description="the error this scan spends: 1 - level, or at look j of a "
                                     "run SCAN_RUN_SHARE (1 - level) / (j (j + 1)) (the run's "
                                     "scans together: at most SCAN_RUN_SHARE (1 - level))")
    look: int | None = Field(None, description="the scan's number in a run's sequence of scans")
    min_strength: float
    n_rows: int
    n_tasks: int
    n_informative_tasks: int
    n_shuffles: int
    level: float
    skipped: dict[str, str] = {}
    next_step: str
    note: str | None = None

    negative_means: ClassVar[str | None] = (
        "`suspect`, or `not_enough_data` (no feature could be tested: nothing is cleared that "
        "was not tested)")

    @property
    def negative(self) -> bool:
        return self.verdict in ("suspect", "not_enough_data")

    def render(self) -> str:
        at = "" if self.look is None else f", look {self.look} of the run at alpha {self.alpha:.2g}"
        lines = [f"hack scan: {self.verdict} ({self.n_rows} rows, {self.n_tasks} tasks, "
                 f"{self.n_informative_tasks} with reward spread; floor "
                 + ("n/a" if self.floor is None else f"{self.floor:.3f}")
                 + f" from {self.n_shuffles} within-task shuffles, min strength "
                 f"{self.min_strength}{at})"]
        lines += [f.render() for f in self.features]
        for f in self.features:
            if f.example is not None:
                e = f.example
                lines.append(f"  {f.feature} e.g. task {e.task_id}: {f.feature}={e.high_feature:g} "
                             f"-> reward {e.high_reward:g} vs {f.feature}={e.low_feature:g} -> "
                             f"reward {e.low_reward:g}")
        lines += [f"skipped {k}: {v}" for k, v in self.skipped.items()]
        if self.note:
            lines.append(f"note: {self.note}")
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def _centre(values: np.ndarray, index: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each column minus its task's mean (values n x m)."""
    sums = np.stack([np.bincount(index, weights=values[:, j], minlength=counts.size)
                     for j in range(values.shape[1])], axis=1)
    return values - (sums / counts[:, None])[index]


def _snip(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= SCAN_EXAMPLE_CHARS else text[:SCAN_EXAMPLE_CHARS] + "..."


@operation(
    toolset="hacking", effect=READS, title="Does the reward pay for a reply feature?",
    description=(
        "Within each task, which features of the reply (length, truncation, format markers, "
        "repeated n-grams, fields you name) rise with the task-centred reward beyond a "
        "within-task shuffle floor. A feature that only tracks task difficulty does not fire. "
        "Verdict clean / weak_signal (clears the floor under the strength gate) / suspect / "
        "not_enough_data (too few tasks, or no feature could be tested: the note says which and "
        "why) with evidence (feature, strength, floor, p, n, an example). look=j: the j-th scan "
        f"of a run, spending {SCAN_RUN_SHARE:g} (1 - level) / (j (j + 1)) so repeated scans "
        f"hold the run-level false-alarm rate at {SCAN_RUN_SHARE:g} (1 - level)."),
    exit_code=VERDICT, doing="scanning rows for reward hacking")
def hack_scan(
        rows: Annotated[Rows, Field(description=(
            "Graded rows with several rollouts per task and the reply text in `completion` (or "
            "reply/response/output/text): e.g. one training batch."))], *,
        features: Annotated[list[Annotated[str, Field(max_length=MAX_NAME)]] | None, Field(
            max_length=20, description=(
                "Extra row fields to test (numbers or booleans, e.g. 'called'), besides the "
                "built-ins length, truncated, markdown, xml_tags, boxed, repeated_ngrams."))
        ] = None,
        n_shuffles: Annotated[int, Field(ge=100, le=SCAN_SHUFFLES_ASKED_MAX, description=(
            "Within-task shuffles behind the floor."))] = SCAN_SHUFFLES,
        min_strength: Annotated[float, Field(ge=0, lt=1, description=(
            "Smallest within-task correlation called suspect."))] = SCAN_MIN_STRENGTH,
        level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
        threshold: Threshold = None,
        look: Annotated[int | None, Field(ge=1, le=100_000, description=(
            "This scan's number among a run's repeated scans (1, 2, ...); null: one scan at "
            "1 - level.")), Arg(metavar="J")] = None) -> HackScan:
    """Scan graded rows (with their reply text) for reply features that track the reward within
    tasks (a correlation; the next step names the probe that tells whether the reward pays).
    In the library ``features`` may also be a dict name -> field name or function(record) ->
    number.
    """
    level, seed = check_level(level), check_seed(seed)
    _check_settings(n_shuffles, min_strength, look)
    alpha = float(1.0 - level if look is None else
                  look_alpha(SCAN_RUN_SHARE * (1.0 - level), look))
    data = load_rows(rows, threshold=threshold)
    names, matrix, skipped = feature_matrix(data.records, data.truncated, features)
    rc, fc = _centred(data, matrix, names)
    spread = np.bincount(data.task_index, weights=rc * rc, minlength=data.n_tasks) > 0
    informative = int((spread & (data.rollouts >= 2)).sum())
    keep = spread[data.task_index]
    n_rows = int(keep.sum())
    common = dict(min_strength=float(min_strength), n_rows=data.n_rows, n_tasks=data.n_tasks,
                  n_informative_tasks=informative, level=level, skipped=skipped, alpha=alpha,
                  look=look)
    if informative < MIN_TASKS_FOR_INTERVAL or not names:
        return _too_few_tasks(names, n_rows, common)
    fk, rk, tk = fc[keep], rc[keep], data.task_index[keep]
    f_norm = np.sqrt((fk * fk).sum(axis=0))
    r_norm = float(np.sqrt((rk * rk).sum()))
    varies = f_norm > 0
    if not varies.any():
        return _all_constant(names, n_rows, common)
    denom = np.where(varies, f_norm * r_norm, 1.0)
    observed = np.where(varies, (fk.T @ rk) / denom, np.nan)
    unit, n_copies = _copy_units(data, matrix, keep)
    maxima, floor = _shuffled_maxima(tk, rk, fk[:, varies], denom[varies], observed[varies],
                                     n_shuffles, alpha, seed, unit)
    evidence = [_evidence(name, observed[j], varies[j], maxima, floor, alpha, min_strength,
                          n_rows, informative, lambda j=j: _example(data, matrix[:, j], keep))
                for j, name in enumerate(names)]
    suspects = [e.feature for e in evidence if e.verdict == "suspect"]
    weak = [e.feature for e in evidence if e.verdict == "weak_signal"]
    step, note = _words(suspects, weak, min_strength, evidence, skipped, n_copies)
    verdict: ScanVerdict = "suspect" if suspects else "weak_signal" if weak else "clean"
    return HackScan(verdict=verdict, suspects=suspects, weak=weak, features=evidence,
                    floor=floor, n_shuffles=maxima.size, next_step=step, note=note, **common)


def _centred(data, matrix: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The reward and the features minus their task's mean (round-off set to 0)."""
    counts = data.rollouts.astype(np.float64)
    rc = _centre(data.reward[:, None], data.task_index, counts)[:, 0]
    fc = _centre(matrix, data.task_index, counts) if names else matrix
    rc[np.abs(rc) < 1e-12] = 0.0
    fc[np.abs(fc) < 1e-12] = 0.0
    return rc, fc


def _too_few_tasks(names: list[str], n_rows: int, common: dict[str, Any]) -> HackScan:
    informative = common["n_informative_tasks"]
    evidence = [FeatureEvidence(feature=n, n_rows=n_rows, n_tasks=informative,
                                verdict="not_tested") for n in names]
    return HackScan(verdict="not_enough_data", suspects=[], features=evidence, floor=None,
                    n_shuffles=0,
                    next_step="score several rollouts per task (4+) with different rewards "
                              "within tasks; only then can a feature be tied to the reward",
                    note=f"{informative} tasks have rollouts whose rewards differ (need "
                         f">= {MIN_TASKS_FOR_INTERVAL})", **common)


def _all_constant(names: list[str], n_rows: int, common: dict[str, Any]) -> HackScan:
    evidence = [FeatureEvidence(feature=n, n_rows=n_rows, n_tasks=common["n_informative_tasks"],
                                verdict="no_variation") for n in names]
    why = "; ".join([f"{k}: {v}" for k, v in common["skipped"].items()]
                    + [f"{', '.join(names)}: constant within every task"])
    return HackScan(verdict="not_enough_data", suspects=[], features=evidence, floor=None,
                    n_shuffles=0,
                    next_step="give each row its reply text (completion) or a token count, "
                              "or name the row fields to test ("
                              + arg("features", op="hack_scan")
                              + "); no feature could be tested, so this is not a clean bill",
                    note=f"no feature could be tested ({why})", **common)


def _check_settings(n_shuffles: Any, min_strength: Any, look: Any) -> None:
    if isinstance(n_shuffles, bool) or not isinstance(n_shuffles, int) or not 100 <= n_shuffles <= SCAN_SHUFFLES_ASKED_MAX:
        raise ArgumentError(f"`n_shuffles` must be an integer in [100, {SCAN_SHUFFLES_ASKED_MAX}], "
                            f"got {n_shuffles!r}", fix=f"use the default {SCAN_SHUFFLES}")
    if isinstance(min_strength, bool) or not isinstance(min_strength, (int, float)) or not (
            0 <= min_strength < 1):
        raise ArgumentError(f"`min_strength` must be a number in [0, 1), got {min_strength!r}",
                            fix=f"use the default {SCAN_MIN_STRENGTH}")
    if look is not None and (isinstance(look, bool) or not isinstance(look, int) or look < 1):
        raise ArgumentError(f"`look` must be an integer >= 1, got {look!r}", fix="number a run's "
                            "scans 1, 2, ... or leave look out for one scan")


def _evidence(name: str, observed: float, varies: bool, maxima: np.ndarray, floor: float | None,
              alpha: float, min_strength: float, n_rows: int, n_tasks: int,
              example: Any) -> FeatureEvidence:
    """One feature's strength against the shuffled maxima: suspect (its p clears ``alpha`` and
    its strength ``min_strength``), weak_signal (only its p clears), or clean; ``example()``
    gives its example when the p clears."""
    if not varies:
        return FeatureEvidence(feature=name, n_rows=n_rows, n_tasks=n_tasks,
                               verdict="no_variation")
    s = float(observed)
    # a shuffle that only swaps tied rows gives the observed strength itself; the two are
    # summed in different orders, so equal values may differ in the last bits: ties count
    # as ties (against the feature), or the test rejects more often than 1 - level
    p = float((1 + (maxima >= s - _TIE).sum()) / (maxima.size + 1))
    clears = p <= alpha
    hit = clears and s >= min_strength
    verdict = "suspect" if hit else "weak_signal" if clears else "clean"
    return FeatureEvidence(feature=name, strength=s, floor=floor, p_value=p, n_rows=n_rows,
                           n_tasks=n_tasks, verdict=verdict,
                           example=example() if clears else None)


_LENGTH_LIKE = ("length", "truncated", "repeated_ngrams")
_FORMAT_LIKE = ("markdown", "xml_tags", "boxed")


def _tracks(names: list[str]) -> str:
    return f"{', '.join(names)} {'tracks' if len(names) == 1 else 'track'} the reward"


def _probe(names: list[str]) -> str:
    """The probe that tells a payment from a correlation, per kind of feature."""
    out = []
    if any(n in _LENGTH_LIKE for n in names):
        out.append(f"run {voice.name('cheat_probes')} (its filler probe scores filler run to "
                   f"the token cap) or {voice.name('prove_reward')} (its truncation check runs a "
                   "passing reply on to the cap)")
    if any(n in _FORMAT_LIKE for n in names):
        out.append(f"run {voice.name('prove_reward')} (its format check scores a wrong answer "
                   "with and without the format)")
    if any(n not in _LENGTH_LIKE + _FORMAT_LIKE for n in names):
        out.append("score pairs of replies that differ only in it with the reward")
    return "; or ".join(out)


def _words(suspects: list[str], weak: list[str], min_strength: float,
           evidence: list[FeatureEvidence], skipped: dict[str, str],
           n_copies: int) -> tuple[str, str | None]:
    """(next step, note) of a scan, in words no stronger than the test: a feature that clears
    the floor *tracks* the reward; the next step names the probe that tells a payment."""
    constant = [f.feature for f in evidence if f.verdict == "no_variation"]
    untested = constant + list(skipped)
    if suspects:
        step = (f"{_tracks(suspects)} within tasks beyond the shuffle floor: a correlation, "
                "which a legitimate reply also gives (a right answer can be naturally longer), "
                f"not yet a payment. To see whether the reward pays for it, {_probe(suspects)}; "
                "if it does and the task does not ask for it, cap or penalise it before "
                "training further")
    elif weak:
        step = (f"a weak signal: {_tracks(weak)} within tasks beyond the shuffle floor, with a "
                f"strength under {min_strength:g}; read the example and scan the next batch: a "
                "tie that grows crosses the gate")
    else:
        step = "no reply feature tracks the reward within tasks beyond the shuffle floor"
    notes = ([f"{n_copies} rows repeat another reply of their task word for word with its "
              "reward: each reply is shuffled with its copies"] if n_copies else [])
    if untested and not suspects:
        why = [f"{k}: {v}" for k, v in skipped.items()]
        why += [f"{', '.join(constant)}: constant within every task"] if constant else []
        notes.append(f"not tested: {', '.join(untested)} ({'; '.join(why)})")
    return step, "; ".join(notes) or None


def _copy_units(data, matrix: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray | None, int]:
    """(each kept row's unit, rows that copy another): rows of one task with the same reply
    text, reward and features are one unit, shuffled together (None: every row its own unit).
    A reply given twice is one draw seen twice, which a deterministic grader scores alike:
    shuffling the copies apart tests a null the data do not allow, and alarms too often."""
    rows = np.flatnonzero(keep)
    texts = [reply_text(data.records[i]) for i in rows]
    if any(t is None for t in texts):
        return None, 0
    keys: dict[tuple, int] = {}
    unit = np.fromiter((keys.setdefault(
        (int(data.task_index[i]), t, float(data.reward[i]), matrix[i].tobytes()), len(keys))
        for i, t in zip(rows, texts)), dtype=np.int64, count=rows.size)
    return (unit if len(keys) < rows.size else None), rows.size - len(keys)


def _shuffled_maxima(tk: np.ndarray, rk: np.ndarray, fks: np.ndarray, denom: np.ndarray,
                     observed: np.ndarray, n_shuffles: int, alpha: float,
                     seed: int | None, unit: np.ndarray | None = None
                     ) -> tuple[np.ndarray, float | None]:
    """The largest strength over features in each within-task shuffle, and the floor (their
    ``1 - alpha`` quantile, None when too few shuffles were drawn to resolve it). Beyond
    ``n_shuffles`` it goes on, chunk by chunk up to ``B_max`` (enough for a p-value of
    ``alpha``), only while some feature could still reach ``p <= alpha`` [3]. ``unit``: rows
    shuffled together (:func:`_copy_units`)."""
    b_max = int(min(SCAN_MAX_SHUFFLES, max(n_shuffles, math.ceil(2.0 / alpha))))
    draw = _unit_strengths(tk, rk, fks, unit) if unit is not None else None
    order = np.argsort(tk, kind="stable")
    tks, rks, fks = tk[order], rk[order], fks[order]
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(1, tks.size))
    out: list[np.ndarray] = []
    drawn, exceed = 0, np.zeros(observed.size, dtype=np.int64)
    while drawn < b_max:
        b = min(chunk, (n_shuffles if drawn < n_shuffles else b_max) - drawn)
        if draw is not None:
            strengths = draw(rng, b)
        else:
            perm = np.argsort(tks[None, :] + rng.random((b, tks.size)), axis=1)
            strengths = (rks[perm] @ fks) / denom  # (b, features)
        maxima = strengths.max(axis=1)
        out.append(maxima)
        drawn += b
        exceed += (maxima[:, None] >= observed[None, :] - _TIE).sum(axis=0)
        if drawn >= n_shuffles and not ((1 + exceed) <= alpha * (b_max + 1)).any():
            break  # no feature can reach p <= alpha any more
    maxima = np.concatenate(out)
    resolved = (maxima.size + 1) * alpha >= 1.0
    floor = float(np.quantile(maxima, 1.0 - alpha, method="inverted_cdf")) if resolved else None
    return maxima, floor


def _unit_strengths(tk: np.ndarray, rk: np.ndarray, fks: np.ndarray, unit: np.ndarray):
    """A drawer of shuffled strengths that permutes units (a reply and its copies) within
    tasks: a unit u of w_u rows has one reward R_u and one task-centred feature F_u, and the
    strength is sum_u w_u F_u R_pi(u) over |F| |R centred|, the centred reward's norm recomputed
    per shuffle (moving a reward between units of different sizes changes it)."""
    first = np.unique(unit, return_index=True)[1]
    w = np.bincount(unit).astype(np.float64)
    task, reward, feature = tk[first], rk[first], fks[first]
    order = np.argsort(task, kind="stable")
    task, reward, feature, w = task[order], reward[order], feature[order], w[order]
    starts = np.flatnonzero(np.r_[True, task[1:] != task[:-1]])
    n_task = np.add.reduceat(w, starts)
    wf = w[:, None] * feature
    f_norm = np.sqrt((w[:, None] * feature ** 2).sum(axis=0))

    def draw(rng: np.random.Generator, b: int) -> np.ndarray:
        perm = np.argsort(task[None, :] + rng.random((b, task.size)), axis=1)
        r = reward[perm]                                             # (b, units)
        sums = np.add.reduceat(r * w, starts, axis=1)
        norm = np.sqrt(np.maximum((r * r * w).sum(axis=1) - (sums ** 2 / n_task).sum(axis=1),
                                  0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nan_to_num((r @ wf) / (norm[:, None] * f_norm[None, :]), nan=-np.inf)

    return draw


def _example(data, feature: np.ndarray, keep: np.ndarray) -> ScanExample:
    """The task whose within-task covariance of feature and reward is largest."""
    idx = data.task_index
    counts = data.rollouts.astype(np.float64)
    f_mean = np.bincount(idx, weights=feature, minlength=data.n_tasks) / counts
    r_mean = data.reward_sum / counts
    cov = np.bincount(idx, weights=(feature - f_mean[idx]) * (data.reward - r_mean[idx]),
                      minlength=data.n_tasks)
    cov[~np.bincount(idx, weights=keep, minlength=data.n_tasks).astype(bool)] = -np.inf
    task = int(np.argmax(cov))
    rows = np.flatnonzero(idx == task)
    hi = rows[np.lexsort((-data.reward[rows], -feature[rows]))[0]]
    lo = rows[np.lexsort((data.reward[rows], feature[rows]))[0]]
    return ScanExample(task_id=data.task_ids[task], high_feature=float(feature[hi]),
                       high_reward=float(data.reward[hi]),
                       high_reply=_snip(reply_text(data.records[hi])),
                       low_feature=float(feature[lo]), low_reward=float(data.reward[lo]),
                       low_reply=_snip(reply_text(data.records[lo])))
