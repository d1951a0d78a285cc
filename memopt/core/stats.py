"""Small statistics for the benches: mean ± sd, Student's t distribution, the paired t-test and its interval.

No scipy: the t distribution's CDF is the regularized incomplete beta function (a continued fraction,
as in Numerical Recipes §6.4), and its quantile is found by bisection on the CDF. Accurate to about
1e-10, far below what a bench's seeds can resolve.

Benches pair runs by seed (the same seed drives the same data split and SimLM behaviour), so a
comparison of two variants is a paired t-test on the per-seed differences (`paired_test`); a claim
"a > b" is stated only when the difference is significant (`verdict`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["mean_sd", "t_cdf", "t_quantile", "PairedTest", "paired_test", "verdict", "seeds_needed", "ALPHA",
           "MAX_SEEDS_NEEDED"]

ALPHA = 0.05  # two-sided significance level of every bench comparison (95 % intervals)
MAX_SEEDS_NEEDED = 10_000  # `seeds_needed` gives up beyond this


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (n − 1; 0.0 for one value)."""
    if not values:
        raise ValueError("mean_sd of no values")
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t distribution: degrees of freedom must be positive, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T ≤ t) = ``p`` (e.g. ``t_quantile(0.975, 9)`` ≈ 2.262), by bisection on `t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t quantile: p must be in (0, 1), not {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


@dataclass(frozen=True)
class PairedTest:
    """A paired t-test of ``a − b`` over ``n`` pairs: mean and sd of the differences, the 95 % interval of the mean
    difference, t and the two-sided p-value (None when n < 2, or no spread and no difference)."""

    n: int
    mean: float
    sd: float
    low: float
    high: float
    t: float | None
    p: float | None

    def to_dict(self, digits: int = 4) -> dict[str, Any]:
        """JSON form, rounded (an unbounded end or an infinite t becomes None)."""
        return {k: (round(v, digits) if math.isfinite(v) else None) if isinstance(v, float) else v
                for k, v in asdict(self).items()}


def _two_sided_p(t: float, df: float) -> float:
    return 2.0 * (1.0 - t_cdf(abs(t), df))


def paired_test(a: Sequence[float], b: Sequence[float], *, scale: float = 1.0, alpha: float = ALPHA) -> PairedTest:
    """The paired t-test of ``a[i] − scale × b[i]`` (pairs in the same order, e.g. by seed), with its
    (1 − ``alpha``) interval."""
    if len(a) != len(b):
        raise ValueError(f"paired test: {len(a)} values against {len(b)}; pair them first")
    diffs = [x - scale * y for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    if n == 0:
        raise ValueError("paired test of no pairs")
    mean, sd = mean_sd(diffs)
    if n < 2:
        return PairedTest(n, mean, 0.0, -math.inf, math.inf, None, None)
    se = sd / math.sqrt(n)
    if se == 0.0:  # every pair differs by the same amount: no noise to test against
        p = None if mean == 0.0 else 0.0
        return PairedTest(n, mean, 0.0, mean, mean, None if mean == 0.0 else math.copysign(math.inf, mean), p)
    t = mean / se
    half = t_quantile(1.0 - alpha / 2.0, n - 1) * se
    return PairedTest(n, mean, sd, mean - half, mean + half, t, _two_sided_p(t, n - 1))


def verdict(test: PairedTest, *, alpha: float = ALPHA) -> str:
    """"holds" when a > b significantly, "reversed" when a < b significantly, else "not significant"."""
    if test.p is None or test.p >= alpha:
        return "not significant"
    return "holds" if test.mean > 0 else "reversed"


def _p_at(mean: float, sd: float, n: int) -> float:
    return _two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


def seeds_needed(mean: float, sd: float, *, alpha: float = ALPHA, limit: int = MAX_SEEDS_NEEDED) -> int | None:
    """The fewest pairs at which a paired difference of ``mean`` with spread ``sd`` would be significant
    (two-sided p < ``alpha``), were the mean and sd to stay as observed; None for no difference or beyond ``limit``.

    A planning figure, for declaring a larger run before it runs: the observed mean and sd are themselves noisy.
    """
    if mean == 0.0 or not math.isfinite(mean):
        return None
    if sd <= 0.0:
        return 2
    if _p_at(mean, sd, limit) >= alpha:
        return None
    low, high = 2, limit  # p falls as n grows: the first n with p < alpha lies in (low - 1, high]
    if _p_at(mean, sd, low) < alpha:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        if _p_at(mean, sd, middle) < alpha:
            high = middle
        else:
            low = middle
    return high
