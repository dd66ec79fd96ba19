"""The figure helpers of the chapter *MLPs are kernel Hebbians* draw what they are given."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import kernel_hebbians as figs  # noqa: E402

GATES = ["identity", "relu", "silu"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _study():
    rows = []
    for k, g in enumerate(GATES):
        rows.append(dict(gate=g, case="theorem", err_stored=1e-15 * (k + 1),
                         err_fresh=2e-15 * (k + 1), tol=1e-10))
        rows.append(dict(gate=g, case="m > F, random B", err_stored=3e-15,
                         err_fresh=0.5 + k, tol=1e-9))
    return pd.DataFrame(rows)


def test_theorem31_errors_draws_four_bars_per_gate_and_the_tolerances():
    study = _study()
    fig = figs.theorem31_errors(study, 64, 256)
    (ax,) = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 4 * len(GATES)
    # bars are drawn series by series: stored, fresh (theorem), then the wide case
    assert heights[:3] == pytest.approx([1e-15, 2e-15, 3e-15])
    assert heights[9:] == pytest.approx([0.5, 1.5, 2.5])
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"gate $\\sigma$ = {g}" for g in GATES]
    assert len(ax.collections) == 3 * len(GATES)  # one tolerance segment per bar, three per gate
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("m$ = 512" in s for s in labels) and any("tolerance" in s for s in labels)


def test_theorem31_errors_refuses_a_frame_without_the_cases():
    with pytest.raises(ValueError, match="cases"):
        figs.theorem31_errors(_study().query("case == 'theorem'"), 64, 256)
    with pytest.raises(ValueError, match="lacks"):
        figs.theorem31_errors(_study().drop(columns="tol"), 64, 256)


def _sketch(n_rho=5):
    ms = np.array([4.0, 16.0, 64.0])
    rhos = np.linspace(0, 1, n_rho)
    mean = np.tile(rhos**2, (3, 1))
    return SimpleNamespace(ms=ms, mean=mean, mean_se=np.full_like(mean, 0.01), rms=1 / np.sqrt(ms),
                           se_log_rms=np.full(3, 0.05), predicted_rms=1 / np.sqrt(ms)), rhos


def test_sketch_error_draws_one_series_per_overlap_and_the_rms_curves():
    sk, rhos = _sketch()
    fit = SimpleNamespace(slope=-0.5, slope_se=0.01, intercept=0.0)
    fig = figs.sketch_error(sk, fit, rhos, draws=100)
    ax0, ax1 = fig.axes
    assert len(ax0.containers) == len(rhos)  # one error-bar series per overlap
    assert [line.get_ydata()[0] for line in ax0.lines if line.get_linestyle() == "--"] == \
        pytest.approx(rhos**2)
    # right: measured (error bars), the fit and the exact curve
    fitted = [line for line in ax1.lines if len(line.get_xdata()) == 100]
    exact = [line for line in ax1.lines if line.get_linestyle() == "--"]
    assert len(fitted) == 1 and len(exact) == 1
    assert exact[0].get_ydata() == pytest.approx(sk.predicted_rms)
    assert ax1.get_xscale() == "log" and ax1.get_yscale() == "log"
    assert "width" in ax1.get_xlabel()


def test_sketch_error_refuses_mismatched_overlaps():
    sk, rhos = _sketch()
    with pytest.raises(ValueError, match="overlaps"):
        figs.sketch_error(sk, SimpleNamespace(slope=-0.5, slope_se=0.01, intercept=0.0),
                          rhos[:3], draws=10)


def _pre():
    rows = [dict(family="full", ratio=1.0, e_k_ratio=1.0),
            dict(family="none", ratio=2.1, e_k_ratio=3.0),
            dict(family="diag", ratio=1.8, e_k_ratio=2.0)]
    for fam in ["wishart", "diagonal", "partial", "perturbed"]:
        rows += [dict(family=fam, ratio=1.0 + 10.0**-k, e_k_ratio=1.0 + 0.01 * k) for k in range(1, 4)]
    return pd.DataFrame(rows)


def test_whitening_energy_draws_the_histograms_the_reference_lines_and_the_scatter():
    fig = figs.whitening_energy(_pre())
    ax0, ax1 = fig.axes
    xs = sorted(float(line.get_xdata()[0]) for line in ax0.lines)  # the three vertical lines
    assert xs == pytest.approx([1.0, 1.8, 2.1])
    assert len(ax1.collections) == 4  # one scatter per random family
    assert sum(len(c.get_offsets()) for c in ax1.collections) == 12
    assert ax0.get_xscale() == "log" and ax1.get_ylim() == pytest.approx((0.96, 1.12))


def test_whitening_energy_needs_the_reference_rows():
    with pytest.raises(ValueError, match="reference"):
        figs.whitening_energy(_pre().query("family != 'diag'"))


def _welch():
    rows = []
    for fam in ["gaussian", "unit rows", "anisotropic", "bilinear", "low rank", "harmonic frame",
                "simplex ETF"]:
        rows.append(dict(family=fam, bound=10.0, frobenius_sq=12.0, ratio=1.2, coherence_ratio=2.0))
    return pd.DataFrame(rows)


def test_welch_bound_draws_every_family_and_the_line_of_equality():
    fig = figs.welch_bound(_welch(), 5.0, 5.0)
    ax0, ax1 = fig.axes
    assert len(ax0.collections) == 8  # five random families, two tight frames, the whitened kernel
    assert len(ax1.collections) == 7
    (equality,) = ax0.lines
    assert list(equality.get_xdata()) == list(equality.get_ydata())
    assert ax0.get_xscale() == ax0.get_yscale() == "log"


def test_welch_bound_refuses_a_bad_whitened_kernel():
    with pytest.raises(ValueError, match="positive"):
        figs.welch_bound(_welch(), float("nan"), 1.0)
    with pytest.raises(ValueError, match="lacks"):
        figs.welch_bound(_welch().drop(columns="ratio"), 1.0, 1.0)
