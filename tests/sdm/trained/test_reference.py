"""Tests of the reference optima and the recall-curve fits (assocmem.sdm.trained.reference)."""

import numpy as np
import pytest

from assocmem.sdm.capacity import optimal_radius
from assocmem.sdm.trained.reference import (between, eq26_accuracy, fit_accuracy_curves,
                                            logistic_accuracy, reference_betas)


def test_reference_betas_are_the_attention_settings_optima():
    ref = reference_betas(64, 1024)
    assert list(ref.index) == ["CD", "SNR", "Mem"]
    assert list(ref.d) == [15, 11, 5]  # Table 1, Attention setting
    for crit, short in (("critical_distance", "CD"), ("snr", "SNR"), ("memory", "Mem")):
        assert ref.loc[short, "beta_ols"] == optimal_radius(64, 2**64, 1024, crit).beta_ols
    assert abs(ref.loc["SNR", "beta_ols"] - 14.4) < 0.05  # seed 002, corrections


def test_between_takes_the_ends_in_either_order():
    assert between(5, 3, 9) and between(5, 9, 3) and not between(10, 3, 9)
    with pytest.raises(ValueError, match="value must be a real number"):
        between("5", 3, 9)


def test_the_eq26_curve_is_the_retrieval_probability_of_eq25():
    m = np.array([1, 10, 100])
    np.testing.assert_allclose(eq26_accuracy(1, 2.0, 0.5), [0.9544997361036416])  # erf(sqrt 2)
    np.testing.assert_allclose(eq26_accuracy(1e12, 2.0, 1.0, floor=0.25), [0.25], atol=1e-5)
    acc = eq26_accuracy(m, 3.0, 0.1, floor=0.25)
    assert np.all(np.diff(acc) < 0) and np.all(acc > 0.25)
    np.testing.assert_allclose(logistic_accuracy(np.e**2, 1.0, 2.0), [0.5])


def test_fits_recover_the_family_that_made_the_counts():
    m = np.array([2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    total = np.full(m.shape, 100000)
    k = np.round(eq26_accuracy(m, 2.5, 0.05, floor=1 / 64) * total)
    fits = fit_accuracy_curves(m, k, total, floor=1 / 64)
    a, b = fits["eq26"].params
    assert abs(a - 2.5) < 0.01 and abs(b - 0.05) / 0.05 < 0.01
    assert fits["eq26"].loglik > fits["logistic"].loglik
    assert fits["eq26"].r2 > 0.9999
    k2 = np.round(logistic_accuracy(m, 1.5, np.log(60), floor=1 / 64) * total)
    fits2 = fit_accuracy_curves(m, k2, total, floor=1 / 64)
    assert fits2["logistic"].loglik > fits2["eq26"].loglik
    np.testing.assert_allclose(fits2["logistic"].params, (1.5, np.log(60)), rtol=1e-3)
    np.testing.assert_allclose(fits2["logistic"].predict(m), k2 / total, atol=1e-4)


@pytest.mark.parametrize("args, match", [
    (([1, 2], [1, 1], [2, 2]), "at least three distinct m"),
    (([1, 2, 3], [1, 1], [2, 2, 2]), "must be 1-d of one length"),
    (([1, 2, 3], [3, 1, 1], [2, 2, 2]), "0 <= correct <= total"),
    (([0, 2, 3], [1, 1, 1], [2, 2, 2]), "m must be a finite number"),
])
def test_fit_refuses_bad_counts(args, match):
    with pytest.raises(ValueError, match=match):
        fit_accuracy_curves(*args)
