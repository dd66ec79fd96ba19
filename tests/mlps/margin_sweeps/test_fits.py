"""The analysis of the stored margin sweeps (assocmem.mlps.margin_sweeps.fits): fits on synthetic
sweeps with known constants, the noisy-query diagnostics, seed means, and the stated delta.
"""

import math

import numpy as np
import pandas as pd
import pytest

from assocmem.mlps import margin_sweeps as MS
from assocmem.mlps import margins as M
from assocmem.mlps.margin_sweeps import fits as sweep_fits


def _isotropic_frame(kernel, vary, consts, form="isotropic"):
    rows = []
    d = 32 if kernel == "exact" else 64
    values = [32, 50, 80, 128, 200, 320, 512, 800, 1280, 2048]
    for v in values:
        for rep in range(2):
            F = v if vary == "F" else 256
            m = None if kernel == "exact" else (v if vary == "m" else 512)
            m_eff = d * d if kernel == "exact" else m
            g = M.THEORY_FORMS[form].func(F=F, m=m_eff, d=d, **consts)
            other = {"m": m} if vary == "F" else {"F": F}
            rows.append({vary: v, "rep": rep, "kernel": kernel, "d": d, **other, "gamma_min": float(g)})
    return pd.DataFrame(rows)


def test_fit_isotropic_recovers_known_constants():
    consts = {"C_s": 0.55, "C_x": 2.0, "C_L": 0.5}
    fr = _isotropic_frame("sketch", "F", consts)
    fit = MS.fit_isotropic_sweep(fr, "isotropic")
    assert fit.r2_means == pytest.approx(1.0, abs=1e-10) and fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    for k, v in consts.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5)
    assert fit.vary == "F" and fit.fixed == {"m": 512.0, "d": 64.0} and fit.n_points == 10 and fit.n_runs == 20
    assert np.allclose(fit.curve([100.0, 400.0]), M.isotropic_bound([100.0, 400.0], 512, 64, **consts))
    # the exact kernel uses its feature dimension m = d^2
    fr = _isotropic_frame("exact", "F", consts)
    fit = MS.fit_isotropic_sweep(fr, "isotropic")
    assert fit.fixed["m"] == 32.0**2 and fit.r2_means == pytest.approx(1.0, abs=1e-10)


def test_fit_isotropic_eq56_along_m_and_errors():
    consts = {"C_s": 1.0, "C_1": 0.0, "C_2": 0.8, "C_3": 0.0, "C_4": 1.5}
    fr = _isotropic_frame("sketch", "m", consts, form="isotropic_eq56")
    fit = MS.fit_isotropic_sweep(fr, "isotropic_eq56")
    assert fit.vary == "m" and fit.constants["C_4"] == pytest.approx(1.5, rel=1e-5)
    assert fit.constants["C_2"] == pytest.approx(0.8, rel=1e-5) and fit.constants["C_s"] == 1.0
    assert set(fit.fit.free) == {"C_2", "C_4"}
    # along F with the exact kernel: C_2 and C_3
    consts = {"C_s": 1.0, "C_1": 0.0, "C_2": 0.6, "C_3": 2.5, "C_4": 0.0}
    fit = MS.fit_isotropic_sweep(_isotropic_frame("exact", "F", consts, form="isotropic_eq56"), "isotropic_eq56")
    assert fit.constants["C_3"] == pytest.approx(2.5, rel=1e-5) and fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match="form"):
        MS.fit_isotropic_sweep(fr, "keys")
    mixed = pd.concat([fr, fr.assign(kernel="exact")])
    with pytest.raises(ValueError, match="one kernel"):
        MS.fit_isotropic_sweep(mixed, "isotropic")


def _spike_frame(on):
    rng = np.random.default_rng(0)
    rows = []
    for beta in np.linspace(0, 3, 8):
        for rep in range(2):
            s = {
                "k_min_diag": 0.7 + 0.01 * rng.standard_normal(),
                "k_max_off": 0.3 + 0.1 * beta,
                "e_k": 0.6 + beta**2,
                "v_min": 0.55 - 0.1 * beta,
                "v_max": 1.5,
                "b_y": 6.0 + beta,
                "e_v": 8.0 + 10 * beta,
                "l_v": 95.0,
                "kappa": 0.35,
                "e_k_tilde": 0.6 + beta**2,
                "e_v_tilde": 7.0 + 10 * beta,
                "kappa_tilde": 0.34,
            }
            rows.append({"beta": float(beta), "rep": rep, "d": 64, "F": 128, "m": 512, **s})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("on", ["keys", "values", "both"])
@pytest.mark.parametrize("form", ["table2", "penalty"])
def test_fit_spike_recovers_its_own_curve(on, form):
    fr = _spike_frame(on)
    theory = "penalty" if form == "penalty" else MS.SPIKE_FORMS[on]
    truth = dict(M.THEORY_FORMS[theory].constants)
    truth.update({"C_s": 0.9, "C_x": 0.3})
    if form == "penalty":
        cov = M.covariates_from_statistics(MS.statistics_from_frame(fr), width=fr["m"].to_numpy())
    else:
        cov = {c: fr[c].to_numpy(dtype=float) for c in fr.columns if c not in ("beta", "rep")}
    cov = {k: cov[k] for k in M.THEORY_FORMS[theory].covariates}
    fr["gamma_min"] = M.THEORY_FORMS[theory].func(**cov, **truth)
    fit = MS.fit_spike_sweep(fr, on, form=form)
    assert fit.r2_runs == pytest.approx(1.0, abs=1e-8)
    assert fit.constants["C_x"] == pytest.approx(0.3, rel=1e-4)
    assert fit.vary == "beta" and len(fit.means) == 8
    with pytest.raises(ValueError):
        fit.curve([1.0])


def test_fit_spike_errors():
    fr = _spike_frame("keys")
    with pytest.raises(ValueError, match="on must be"):
        MS.fit_spike_sweep(fr, "queries")
    with pytest.raises(ValueError, match="form must be"):
        MS.fit_spike_sweep(fr, "keys", form="heuristic")
    fr["gamma_min"] = 0.5 - 0.1 * fr["beta"]
    assert MS.fit_spike_sweep(fr, "keys", free=("C_s", "C_x")).fit.free == ("C_s", "C_x")
    assert MS.fit_spike_sweep(fr, "keys").fit.free == ("C_s", "C_x", "C_v")


def test_fit_statistics_sweep_along_F_recovers_eq44():
    """The general fit behind fit_spike_sweep, along F (the sweeps on captured LM activations)."""
    fr = _spike_frame("both").rename(columns={"beta": "x"})
    fr["F"] = (4 * 2 ** (fr["x"] * 2)).round().astype(int)
    truth = {**M.THEORY_FORMS["both"].constants, "C_s": 1.1, "C_x": 0.2}
    cov = {k: fr[k].to_numpy(dtype=float) for k in M.THEORY_FORMS["both"].covariates}
    fr["gamma_min"] = M.THEORY_FORMS["both"].func(**cov, **truth)
    fit = MS.fit_statistics_sweep(fr, "both", ("C_s", "C_x"), by="F")
    assert fit.r2_means == pytest.approx(1.0, abs=1e-8) and fit.vary == "F"
    assert fit.constants["C_s"] == pytest.approx(1.1, rel=1e-4)
    with pytest.raises(ValueError, match="theory must be"):
        MS.fit_statistics_sweep(fr, "spike", ("C_s",), by="F")
    with pytest.raises(ValueError, match="lacks the columns"):
        MS.fit_statistics_sweep(fr.drop(columns="kappa"), "both", ("C_s",), by="F")


def test_power_baseline_recovers_its_curve_and_refuses_bad_frames():
    F = np.repeat([4.0, 8, 16, 32, 64, 128], 3)
    noise = 0.01 * np.random.default_rng(0).standard_normal(F.size)
    fr = pd.DataFrame({"F": F, "gamma_min": 0.5 - 0.02 * F ** 1.3 + noise})
    fit = MS.fit_power_baseline(fr)
    assert fit.c == pytest.approx(1.3, abs=0.05) and fit.r2_means > 0.999
    assert len(fit.means) == 6
    with pytest.raises(ValueError, match="lacks the column"):
        MS.fit_power_baseline(fr.drop(columns="gamma_min"))
    with pytest.raises(ValueError, match="positive"):
        MS.fit_power_baseline(fr.assign(F=-fr.F))
    with pytest.raises(ValueError, match="four runs"):
        MS.fit_power_baseline(fr.head(3))


def _noisy_frame(a, b, C=None):
    rows = []
    for rep, clean in enumerate((0.2, 0.25, 0.3)):
        for eps in (0.01, 0.05, 0.1, 0.5, 1.0, 2.0):
            drop = a * eps + b * eps**2 + 0.001 * rep * eps**2
            rows.append({"eps": eps, "rep": rep, "d": 64, "F": 256, "m": 512,
                         "gamma_clean": clean, "gamma_min": clean - drop})
    return pd.DataFrame(rows)


def test_noisy_curvature_and_constant():
    cur = MS.noisy_curvature(_noisy_frame(0.3, 0.2))
    assert cur.reps == 3 and np.allclose(cur.a, 0.3, atol=1e-10)
    assert cur.b_mean == pytest.approx(0.201, abs=1e-10) and cur.b_sem == pytest.approx(0.001 / math.sqrt(3), rel=1e-6)
    # a linear degradation needs one constant at every eps
    fr = _noisy_frame(0.3, 0.0)
    L = math.log(2 * 256**2)
    need = MS.smallest_noisy_constant(fr.assign(gamma_min=fr.gamma_clean - 0.3 * fr.eps))
    assert np.allclose(need.to_numpy(), 0.3 / math.sqrt(256 * L / 64))
    fit = MS.fit_noisy_sweep(fr.assign(gamma_min=fr.gamma_clean - 0.3 * fr.eps))
    assert fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    assert fit.constants["C_n"] == pytest.approx(0.3 / math.sqrt(256 * L / 64), rel=1e-6)
    with pytest.raises(ValueError, match="replicates"):
        MS.noisy_curvature(fr[fr.rep == 0])


def test_log2_slope_and_seed_means():
    assert MS.log2_slope([8, 16, 32, 64], [3, 4, 5, 6]) == pytest.approx(1.0)
    fr = pd.DataFrame({"F": [1, 1, 2, 2], "g": [1.0, 3.0, 5.0, 7.0]})
    out = MS.seed_means(fr, "F", ["g"])
    assert out["g"].tolist() == [2.0, 6.0] and out["n"].tolist() == [2, 2]


def test_docstrings_state_delta_instead_of_citing_a_private_file():
    import importlib
    import inspect
    import pkgutil

    modules = [importlib.import_module(f"{MS.__name__}.{m.name}") for m in pkgutil.iter_modules(MS.__path__)]
    assert all("REFERENCE" not in inspect.getsource(m) for m in (MS, *modules))
    src = inspect.getsource(sweep_fits)  # the fits state delta in their docstrings and comments
    assert "delta = 0.5" in src and "only ``C_L / delta``" in src.replace("\n    ", " ")
