"""The judge audit's statistics: Wilson intervals, Cohen's kappa and its interval, how many
labelled failures a sample needs (the plan built on it: :mod:`.labels`). References: see the
package."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from .. import defaults as D
from ..bootstrap import z_value
from ..errors import ArgumentError
from ..bootstrap import percentile_interval
from ..bootstrap import wilson_interval as _wilson
from ..result import Result

def _check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ArgumentError(f"level must be a number strictly between 0 and 1, got {level!r}",
                            fix=f"use the default {D.CONFIDENCE_LEVEL}")
    return float(level)


def wilson_interval(successes: int, n: int, *, level: float = D.CONFIDENCE_LEVEL
                    ) -> tuple[float, float] | None:
    """Wilson score interval for ``successes`` out of ``n`` independent trials [1], its
    arguments checked; None at n=0. Unlike Wald's it stays in [0, 1] with a width at 0/n and n/n."""
    level = _check_level(level)
    if n < 0 or successes < 0 or successes > n:
        raise ArgumentError(f"successes must be in [0, n], got successes={successes}, n={n}")
    if n == 0:
        return None
    return _wilson(int(successes), int(n), level)


def cohen_kappa(labels: Sequence[bool], grades: Sequence[bool]) -> float | None:
    """Cohen's kappa for two binary raters [3]: (p_o - p_e) / (1 - p_e); None when p_e = 1."""
    a = np.asarray(labels, dtype=bool)
    b = np.asarray(grades, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ArgumentError(f"labels and grades must be two non-empty lists of equal length, "
                            f"got {a.size} and {b.size}")
    p_o = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:  # both raters constant and equal: chance explains everything
        return None
    return (p_o - p_e) / (1 - p_e)


class KappaInterval(Result):
    """Cohen's kappa with its interval and the number of items behind both."""

    kappa: float | None = Field(description="Cohen's kappa; None when both raters are constant")
    ci: tuple[float, float] | None = Field(description=(
        "interval of kappa at `level`, within [-1, 1]; None when kappa is undefined"))
    n: int = Field(description="items labelled and graded: the n of kappa and its interval")
    level: float = D.CONFIDENCE_LEVEL
    method: str = Field(D.KAPPA_CI_RULE, description="how the interval was made")

    def render(self) -> str:
        if self.kappa is None:
            return f"kappa undefined (both raters constant), n={self.n} items"
        ci = "" if self.ci is None else f" [{self.ci[0]:.3f}, {self.ci[1]:.3f}]"
        return f"kappa {self.kappa:.3f}{ci} (n={self.n} items, {self.level:.0%})"


def kappa_with_interval(labels: Sequence[bool], grades: Sequence[bool], *,
                        level: float = D.CONFIDENCE_LEVEL, seed: int | None = D.BOOTSTRAP_SEED,
                        n_resamples: int = D.BOOTSTRAP_RESAMPLES) -> KappaInterval:
    """Cohen's kappa and its interval as one typed result (:func:`kappa_interval` for the rule)."""
    kappa = cohen_kappa(labels, grades)
    ci = kappa_interval(labels, grades, level=level, seed=seed, n_resamples=n_resamples)
    return KappaInterval(kappa=kappa, ci=ci, n=len(labels), level=_check_level(level))


def kappa_interval(labels: Sequence[bool], grades: Sequence[bool], *,
                   level: float = D.CONFIDENCE_LEVEL, seed: int | None = D.BOOTSTRAP_SEED,
                   n_resamples: int = D.BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Interval of Cohen's kappa: the percentile bootstrap over items [5], widened to hold the
    Wilson interval of the observed agreement carried through kappa at the observed chance
    agreement (``D.KAPPA_CI_RULE``), and clipped to [-1, 1], kappa's range.

    Kappa depends on the items only through the 2x2 table of (label, grade), so a resample of
    items is a Multinomial(n, table / n) draw of that table. Resamples whose kappa is undefined
    are left out; None when kappa itself is undefined. The bootstrap alone collapses when the
    judge disagrees on few items (perfect agreement gives [1, 1]); kappa rises with p_o, so p_o's
    Wilson bounds give kappa bounds that keep a width (near p_e = 1 they can pass -1: the clip).
    """
    level = _check_level(level)
    a = np.asarray(labels, dtype=bool)
    b = np.asarray(grades, dtype=bool)
    if cohen_kappa(a, b) is None:
        return None
    n = a.size
    cells = np.array([np.sum(a & b), np.sum(a & ~b), np.sum(~a & b), np.sum(~a & ~b)], float)
    draws = np.random.default_rng(seed).multinomial(n, cells / n, size=n_resamples) / n
    p_o = draws[:, 0] + draws[:, 3]
    pa, pb = draws[:, 0] + draws[:, 1], draws[:, 0] + draws[:, 2]
    p_e = pa * pb + (1 - pa) * (1 - pb)
    ok = p_e < 1.0 - 1e-12
    kappas = (p_o[ok] - p_e[ok]) / (1 - p_e[ok])
    lo, hi = percentile_interval(kappas, level)
    po_lo, po_hi = _wilson(int(cells[0] + cells[3]), n, level)
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1 - pa) * (1 - pb)
    low = min(lo, (po_lo - pe) / (1 - pe))
    high = max(hi, (po_hi - pe) / (1 - pe))
    return (float(min(max(low, -1.0), 1.0)), float(min(max(high, -1.0), 1.0)))


HALF_WIDTH_MIN = 1e-6


def failures_needed(half_width: float = D.JUDGE_FALSE_PASS_HALF_WIDTH, *,
                    level: float = D.CONFIDENCE_LEVEL) -> int:
    """Labelled failures needed so the false-pass rate is known to +-``half_width`` at worst.

    Worst case p = 0.5: z sqrt(0.25 / n_fail) <= half_width, so n_fail = ceil(z^2 0.25 / hw^2).
    The sample must hold this many items the labels *fail*.
    """
    level = _check_level(level)
    if isinstance(half_width, bool) or not isinstance(half_width, (int, float)) \
            or not 0.0 < half_width < 0.5:
        raise ArgumentError(f"half_width must be in (0, 0.5), got {half_width!r}",
                            fix=f"use the default {D.JUDGE_FALSE_PASS_HALF_WIDTH}")
    if half_width < HALF_WIDTH_MIN:  # a tinier one overflows
        raise ArgumentError(f"half_width must be at least {HALF_WIDTH_MIN:g} (narrower asks for "
                            f"more than 10^11 labelled failures), got {half_width!r}", fix="use "
                            f"the default {D.JUDGE_FALSE_PASS_HALF_WIDTH}")
    return math.ceil(z_value(0.5 + level / 2.0) ** 2 * 0.25 / half_width ** 2 - 1e-9)


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])
