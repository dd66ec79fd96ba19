"""The figure helpers of the chapter *How margins scale* draw what they are given."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import margin_scaling as figs  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _runs(x, values, reps=2, **extra):
    return pd.DataFrame([{x: v, "rep": r, "gamma_min": 0.5 - 0.01 * v + 0.01 * r, **extra}
                         for v in values for r in range(reps)])


def _fit(x, values, r2=0.99):
    values = np.asarray(values, float)
    means = pd.DataFrame({x: values, "gamma_min": 0.5 - 0.01 * values + 0.005,
                          "predicted": 0.5 - 0.01 * values})
    return SimpleNamespace(vary=x, means=means, curve=lambda g: 0.5 - 0.01 * np.asarray(g),
                           r2_means=r2)


ISO = {"f_exact": "exact", "f_sketch": "sketch", "m_sketch": "width"}


def _iso():
    frames, fits = {}, {}
    for n in ISO:
        x = "m" if n.startswith("m") else "F"
        vals = [64, 128, 256]
        frames[n] = _runs(x, vals)
        fits[(n, "isotropic")] = _fit(x, vals, 0.98)
        fits[(n, "isotropic_eq56")] = _fit(x, vals, 0.97)
    return frames, fits


def test_isotropic_margins_draws_three_panels_with_runs_means_and_both_fits():
    frames, fits = _iso()
    fig = figs.isotropic_margins(frames, fits, ISO)
    shown = [ax for ax in fig.axes if ax.axison]
    assert len(shown) == 3
    for ax, (n, title) in zip(shown, ISO.items()):
        assert ax.get_title() == title and ax.get_xscale() == "log"
        runs, means, eq9, eq56 = ax.lines[:4]
        assert list(runs.get_ydata()) == list(frames[n]["gamma_min"])
        assert len(eq9.get_xdata()) == 200 and eq56.get_linestyle() == "--"
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "eq. 9 fit, $R^2$ = 0.980" in labels and "eq. 56 fit, $R^2$ = 0.970" in labels
    assert shown[0].get_xlabel() == "number of facts $F$"
    assert shown[2].get_xlabel() == "hidden width $m$"
    assert [int(t) for t in shown[0].get_xticks()] == [64, 128, 256]


def test_isotropic_margins_refuses_a_missing_fit():
    frames, fits = _iso()
    del fits[("f_sketch", "isotropic_eq56")]
    with pytest.raises(ValueError, match="no 'isotropic_eq56' fit"):
        figs.isotropic_margins(frames, fits, ISO)
    with pytest.raises(ValueError, match="three"):
        figs.isotropic_margins(frames, fits, {"f_exact": "exact"})


SPIKES = {"keys": "keys", "values": "values", "both": "both"}


def _spikes():
    betas = [0.0, 1.0, 2.0]
    frames = {on: _runs("beta", betas) for on in SPIKES}
    fits = {(on, form): _fit("beta", betas) for on in SPIKES for form in ("table2", "penalty")}
    bounds = {on: pd.DataFrame({"beta": [0.0, 0.0, 1.0, 1.0, 2.0, 2.0],
                                "bound": [-1.0, -3.0, -2.0, -4.0, -5.0, -7.0]}) for on in SPIKES}
    return frames, fits, bounds


def test_spike_margins_draws_the_fits_and_the_mean_deterministic_bound():
    frames, fits, bounds = _spikes()
    fig = figs.spike_margins(frames, fits, bounds, SPIKES)
    shown = [ax for ax in fig.axes if ax.axison]
    assert len(shown) == 3
    for ax in shown:
        bound = [line for line in ax.lines if line.get_linestyle() == ":"]
        assert len(bound) == 1
        assert list(bound[0].get_ydata()) == pytest.approx([-2.0, -3.0, -6.0])  # means over runs
        lo, hi = ax.get_ylim()
        assert lo == pytest.approx(min(frames["keys"]["gamma_min"]) - 0.15)
        assert ax.get_xlabel() == r"spike strength $\beta$"


def test_spike_margins_needs_every_bound():
    frames, fits, bounds = _spikes()
    del bounds["both"]
    with pytest.raises(ValueError, match="bound"):
        figs.spike_margins(frames, fits, bounds, SPIKES)


def _noisy():
    eps = np.geomspace(0.01, 2.0, 5)
    rows = [{"rep": r, "eps": e, "gamma_clean": 0.5, "gamma_min": 0.5 - 0.1 * e - 0.05 * e**2}
            for r in range(3) for e in eps]
    fit = SimpleNamespace(means=pd.DataFrame({"eps": eps, "predicted": 0.5 - 0.2 * eps}),
                          r2_means=0.9)
    return pd.DataFrame(rows), fit


def test_noisy_margins_draws_the_runs_the_fit_and_the_two_reference_lines():
    noisy, fit = _noisy()
    fig = figs.noisy_margins(noisy, fit, 0.05)
    left, right = fig.axes
    assert len([ln for ln in left.lines if ln.get_marker() == "o"]) == 3  # one line per run
    assert len(left.lines) == 3 + 3 + 1 + 1  # runs, their clean margins, the fit, zero
    slope1, quad = right.lines[-2:]
    assert quad.get_ydata() == pytest.approx(0.05 * quad.get_xdata() ** 2)
    assert slope1.get_ydata()[-1] / slope1.get_xdata()[-1] == pytest.approx(0.1 + 0.05 * 0.01)
    assert right.get_xscale() == right.get_yscale() == "log"


def test_noisy_margins_refuses_bad_input():
    noisy, fit = _noisy()
    with pytest.raises(ValueError, match="finite"):
        figs.noisy_margins(noisy, fit, float("nan"))
    with pytest.raises(ValueError, match="gamma_clean"):
        figs.noisy_margins(noisy.drop(columns="gamma_clean"), fit, 0.1)


def test_bits_per_parameter_draws_runs_means_and_the_theorem_count():
    bits = pd.DataFrame({"F": [64, 64, 256, 256], "rep": [0, 1, 0, 1], "bits_min": [2, 3, 2, 2]})
    means = pd.DataFrame({"d": [32, 64], "F": [64.0, 256.0], "bits_min": [2.5, 2.0],
                          "bits_b6": [25.0, 28.0]})
    fig = figs.bits_per_parameter(bits, means)
    (ax,) = fig.axes
    runs, mean, b6 = ax.lines
    assert list(runs.get_ydata()) == [2, 3, 2, 2]
    assert list(b6.get_ydata()) == [25.0, 28.0]
    assert [t.get_text() for t in ax.texts] == ["d=32", "d=64"]
    assert ax.get_ylim() == (0, 36) and ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="bits_b6"):
        figs.bits_per_parameter(bits, means.drop(columns="bits_b6"))
