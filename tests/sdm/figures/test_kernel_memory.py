"""The figures of chapter 35 (assocmem.sdm.figures.kernel_memory): what they draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from assocmem.sdm.figures import kernel_memory as figs


def test_ball_kernel_spectra_draws_characters_bars_and_one_pair_of_curves_per_radius():
    n = 3
    weight = np.array([0, 1, 1, 2, 1, 2, 2, 3], dtype=float)
    lam = np.array([64.0, 4.0, 4.0, 0.0, 4.0, 0.0, 0.0, 4.0])
    kraw = np.array([64.0, 4.0, 0.0, 4.0])
    ball = np.array([1.0, 0.5, 0.1, 0.5])
    log_exp = np.log([8.0, 4.0, 2.0, 1.0])
    fig = figs.ball_kernel_spectra(weight, lam, kraw, n, 1, [2], [(5, "Mem", ball, log_exp,
                                                                  30.0)])
    top, bottom = fig.axes
    (points,) = top.collections
    np.testing.assert_allclose(points.get_offsets()[:, 1], lam)
    (bars,) = top.get_lines()
    np.testing.assert_allclose(bars.get_ydata(), kraw)
    assert top.get_title() == "$n$ = 3, $d$ = 1: zeros at $w$ = [2]"
    solid, dashed = bottom.get_lines()
    np.testing.assert_allclose(solid.get_ydata(), ball)
    np.testing.assert_allclose(dashed.get_ydata(), [1.0, 0.5, 0.25, 0.125])
    assert bottom.get_yscale() == "log"
    plt.close(fig)


def test_ball_kernel_spectra_refuses_bad_input():
    with pytest.raises(ValueError, match="one shape"):
        figs.ball_kernel_spectra([0, 1], [1.0], [1.0, 1.0], 1, 0, [], [])
    with pytest.raises(ValueError, match="n \\+ 1"):
        figs.ball_kernel_spectra([0, 1], [1.0, 1.0], [1.0], 1, 0, [], [])


def _mc():
    return pd.DataFrame({"dv": [0, 1, 2, 3], "mean": [4.0, 2.1, 0.9, 0.0],
                         "binomial_se": [0.2, 0.1, 0.05, 0.0], "exact": [4.0, 2.0, 1.0, 0.0]})


def test_feature_counts_draws_the_mean_where_positive_and_the_counts():
    sample = np.array([[4, 5], [2, 1], [0, 1], [0, 0]])
    fig = figs.feature_counts(_mc(), [0, 1, 2, 3], sample, 8, 1, 100, 50,
                              np.zeros_like(sample, dtype=float))
    top, bottom = fig.axes
    (bars,) = top.containers
    np.testing.assert_allclose(np.asarray(bars.lines[0].get_ydata(), float), [4.0, 2.1, 0.9])
    (exact,) = top.get_lines()[-1:]
    np.testing.assert_allclose(np.asarray(exact.get_ydata(), float), [4.0, 2.0, 1.0])
    (points,) = bottom.collections
    np.testing.assert_allclose(points.get_offsets()[:, 1], sample.ravel())
    assert top.get_title() == "$n$ = 8, $d$ = 1, $r$ = 100"
    plt.close(fig)


def test_feature_counts_refuses_bad_input():
    with pytest.raises(ValueError, match="len\\(dvs\\)"):
        figs.feature_counts(_mc(), [0, 1], np.zeros((4, 2)), 8, 1, 100, 50, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="exact"):
        figs.feature_counts(_mc().drop(columns="exact"), [0], np.zeros((1, 2)), 8, 1, 100,
                            50, np.zeros((1, 2)))


def test_hopfield_against_sdm_draws_retrieval_and_agreement():
    retr = pd.DataFrame([{"m": m, "memory": name, "flips": k, "success": 1 - k / 24,
                          "success_se": 0.01}
                         for m in (4, 24) for name in figs.MEMORY_STYLE for k in (0, 12, 24)])
    agree = pd.DataFrame([{"family": f, "queries": q, "radius": d, "agreement": d / 10}
                          for f in list(figs.MEMORY_STYLE)[1:]
                          for q in ("near (8 bits from a pattern)", "random")
                          for d in range(5)])
    fig = figs.hopfield_against_sdm(retr, agree, 64)
    a4, a24, ag = fig.axes
    assert a4.get_title() == "$m$ = 4 patterns, $n$ = 64"
    assert len(a4.containers) == 3 and len(a24.containers) == 3
    np.testing.assert_allclose(np.asarray(a24.containers[0].lines[0].get_ydata(), float),
                               [1.0, 0.5, 0.0])
    lines = ag.get_lines()
    assert len(lines) == 4
    np.testing.assert_allclose(lines[0].get_ydata(), np.arange(5) / 10)
    assert [ln.get_label() for ln in lines] == [
        "$r = 2^n$, near", "$r = 2^n$, random", "neurons = patterns, near",
        "neurons = patterns, random"]
    plt.close(fig)


def test_hopfield_against_sdm_refuses_bad_input():
    with pytest.raises(ValueError, match="success_se"):
        figs.hopfield_against_sdm(pd.DataFrame({"m": [4]}), pd.DataFrame(), 64)
