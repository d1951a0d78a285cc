"""`memopt.core.stats` against textbook values: Student's sleep data (paired t), t quantiles and CDF from tables."""

from __future__ import annotations

import math

import pytest

from memopt.core.stats import mean_sd, paired_test, t_cdf, t_quantile, verdict

# Cushny & Peebles' sleep data as Student (1908) used it: extra hours of sleep of 10 patients under two drugs.
DRUG_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
DRUG_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_paired_t_on_students_sleep_data():
    # R: t.test(DRUG_2, DRUG_1, paired = TRUE) → t = 4.0621, df = 9, p-value = 0.002833,
    # 95 percent confidence interval 0.7001142 2.4598858, mean difference 1.58.
    test = paired_test(DRUG_2, DRUG_1)
    assert test.n == 10 and test.mean == pytest.approx(1.58)
    assert test.t == pytest.approx(4.0621, abs=1e-4) and test.p == pytest.approx(0.002833, abs=1e-6)
    assert (test.low, test.high) == (pytest.approx(0.7001142, abs=1e-6), pytest.approx(2.4598858, abs=1e-6))
    assert verdict(test) == "holds" and verdict(paired_test(DRUG_1, DRUG_2)) == "reversed"
    assert paired_test(DRUG_1, DRUG_2).p == pytest.approx(test.p)


def test_t_quantiles_and_cdf_match_the_tables():
    for df, q in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423), (1000, 1.9623)):
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-4), df
    assert t_quantile(0.95, 4) == pytest.approx(2.1318, abs=1e-4)
    assert t_quantile(0.025, 9) == pytest.approx(-2.2622, abs=1e-4)
    assert t_cdf(0.0, 5) == pytest.approx(0.5) and t_cdf(2.0, 3) == pytest.approx(0.930337, abs=1e-6)
    assert t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy: 1/2 + atan(1)/π
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def test_scaled_difference_small_samples_and_no_spread():
    noisy = paired_test([0.30, 0.10, 0.25], [0.20, 0.15, 0.20])  # differences 0.10, −0.05, 0.05: noise
    assert noisy.p > 0.05 and verdict(noisy) == "not significant" and noisy.low < 0 < noisy.high
    scaled = paired_test([0.6, 0.5, 0.55, 0.62, 0.58], [0.3, 0.32, 0.35, 0.3, 0.33], scale=1.5)  # a − 1.5 × b
    assert scaled.mean == pytest.approx(0.57 - 1.5 * 0.32)
    one = paired_test([0.5], [0.1])
    assert one.p is None and verdict(one) == "not significant" and math.isinf(one.high)
    same_gap = paired_test([0.5, 0.6, 0.7], [0.4, 0.5, 0.6])  # every seed differs by exactly 0.1
    assert same_gap.p == 0.0 and verdict(same_gap) == "holds"
    assert paired_test([0.2, 0.2], [0.2, 0.2]).p is None
    assert mean_sd([1.0, 2.0, 3.0]) == (2.0, 1.0) and mean_sd([4.0]) == (4.0, 0.0)
    with pytest.raises(ValueError, match="pair them"):
        paired_test([1.0, 2.0], [1.0])


def _with(mean: float, sd: float, n: int) -> list[float]:
    """``n`` values whose mean and sample sd are exactly ``mean`` and ``sd``."""
    z = [i - (n - 1) / 2 for i in range(n)]
    scale = sd / mean_sd(z)[1]
    return [mean + scale * v for v in z]


def test_seeds_needed_is_the_first_count_at_which_the_paired_test_turns_significant():
    from memopt.core.stats import seeds_needed

    for mean, sd in ((0.056, 0.140), (0.018, 0.148), (0.3, 0.4), (-0.05, 0.1)):
        n = seeds_needed(mean, sd)
        assert n is not None and n > 2
        assert paired_test(_with(mean, sd, n), [0.0] * n).p < 0.05
        assert paired_test(_with(mean, sd, n - 1), [0.0] * (n - 1)).p >= 0.05
    assert seeds_needed(0.056, 0.140) == 27  # the quickstart's 1.5x claim at the ceiling (docs/optimize.md)
    assert seeds_needed(0.1, 0.0) == 2 and seeds_needed(0.0, 0.1) is None
    assert seeds_needed(1e-4, 1.0) is None  # beyond MAX_SEEDS_NEEDED
    assert seeds_needed(5.0, 0.1) == 2
