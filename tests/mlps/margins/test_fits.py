"""Tests for assocmem.mlps.margins.fits: theory-curve fits recover known constants on synthetic
data, stay non-negative, take covariates from statistics; R^2; bad input.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set, with_spike
from tests.mlps.margins._memories import BilinearHebbian


def test_fit_isotropic_recovers_known_constants():
    F = np.geomspace(32, 2048, 30)
    truth = dict(C_s=0.55, C_x=0.12, C_L=4.0)
    gamma = M.isotropic_bound(F, 512, 32, **truth)
    fit = M.fit_theory_curve("isotropic", gamma, {"F": F, "m": 512, "d": 32})
    assert fit.free == ("C_s", "C_x", "C_L") and fit.success
    for k, v in truth.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5)
    assert fit.constants["delta"] == 0.5
    assert fit.r2 == pytest.approx(1.0, abs=1e-10) and fit.n_points == 30
    np.testing.assert_allclose(fit(F=F, m=512, d=32), gamma, atol=1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.r2 = 0.0
    with pytest.raises(TypeError):
        fit.constants["C_s"] = 1.0


def test_fit_is_bounded_to_non_negative_constants():
    F = np.geomspace(32, 512, 12)
    gamma = 0.5 + 0.01 * np.sqrt(F)  # increasing: the best non-negative C_x is 0
    cov = {"F": F, "m": 256, "d": 64}
    fit = M.fit_theory_curve("isotropic", gamma, cov, fixed={"C_L": 1.0}, free=("C_s", "C_x"))
    assert fit.constants["C_x"] == pytest.approx(0.0, abs=1e-10) and fit.constants["C_s"] > 0
    assert fit.r2 < 1


@pytest.mark.parametrize(
    ("form", "truth"),
    [
        ("keys", dict(C_s=0.8, C_x=0.3)),
        ("values", dict(C_s=0.7, C_x=0.05)),
        ("both", dict(C_s=0.6, C_x=0.4)),
        ("penalty", dict(C_s=0.45, C_x=0.2)),
        ("noisy", dict(C_n=1.7)),
        ("isotropic_eq56", dict(C_s=0.9, C_1=0.3, C_2=0.2, C_3=0.5, C_4=0.1)),
    ],
)
def test_fit_table2_forms_recover_known_constants(form, truth):
    rng = np.random.default_rng(0)
    n = 25
    cov = {
        "k_min_diag": rng.uniform(0.8, 1.2, n),
        "k_max_off": rng.uniform(0.0, 0.5, n),
        "e_k": rng.uniform(1.0, 20.0, n),
        "v_min": rng.uniform(0.3, 1.0, n),
        "v_max": rng.uniform(0.5, 1.5, n),
        "b_y": rng.uniform(0.0, 3.0, n),
        "e_v": rng.uniform(1.0, 5.0, n),
        "l_v": rng.uniform(1.0, 50.0, n),
        "kappa": rng.uniform(0.05, 0.6, n),
        "s_sig": rng.uniform(0.5, 1.5, n),
        "p_key": rng.uniform(0.5, 3.0, n),
        "p_val": rng.uniform(0.5, 3.0, n),
        "p_align": rng.uniform(0.5, 3.0, n),
        "gamma_clean": rng.uniform(0.3, 0.6, n),
        "eps": np.geomspace(0.01, 2.0, n),
        "F": rng.choice([64.0, 128.0, 256.0], n),
        "m": rng.choice([256.0, 512.0, 1024.0], n),
        "d": rng.choice([32.0, 64.0], n),
    }
    spec = M.THEORY_FORMS[form]
    args = {k: cov[k] for k in spec.covariates}
    gamma = spec.func(**args, **truth)
    fit = M.fit_theory_curve(form, gamma, args, free=tuple(truth))
    for k, v in truth.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5), k
    assert fit.r2 > 1 - 1e-10


def test_covariates_from_statistics_feed_a_fit():
    base = make_fact_set(32, 12, tied=False, seed=0)
    stats, gammas = [], []
    for beta in (0.0, 0.5, 1.0, 2.0, 3.0):
        facts = with_spike(base, beta, on="keys", seed=0)
        model = BilinearHebbian(facts, m=64, seed=0)
        stats.append(M.geometry_statistics(model, facts))
        gammas.append(M.gamma_min(model, facts))
    cov = M.covariates_from_statistics(stats, width=64)
    assert cov["F"].tolist() == [32.0] * 5 and cov["m"].tolist() == [64.0] * 5
    fit = M.fit_theory_curve("keys", gammas, cov)
    assert set(fit.free) == {"C_s", "C_x"} and all(fit.constants[k] >= 0 for k in fit.free)
    assert np.isfinite(fit.r2)
    assert fit(**{k: cov[k] for k in M.THEORY_FORMS["keys"].covariates}).shape == (5,)


def test_r_squared():
    y = np.array([1.0, 2.0, 3.0])
    assert M.r_squared(y, y) == 1.0
    assert M.r_squared(y, np.full(3, 2.0)) == 0.0
    assert math.isnan(M.r_squared(np.ones(3), np.ones(3)))


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="unknown form"):
        M.fit_theory_curve("nope", [1.0, 2.0], {})
    with pytest.raises(ValueError, match="missing"):
        M.fit_theory_curve("isotropic", [1.0, 2.0], {"F": [1.0, 2.0]})
    with pytest.raises(ValueError, match="unknown constant"):
        cov = dict(k_min_diag=1, v_min=1, e_k=1, e_v=1, kappa=1)
        M.fit_theory_curve("both", [1.0, 2.0], cov, free=("C_q",))
    with pytest.raises(ValueError, match="delta"):
        cov = {"F": [1, 2, 3], "m": 4, "d": 4}
        M.fit_theory_curve("isotropic", [1.0, 2.0, 3.0], cov, free=("delta",))
    with pytest.raises(ValueError, match="entries"):
        M.fit_theory_curve("isotropic", [1.0, 2.0, 3.0], {"F": [1, 2], "m": 4, "d": 4})
