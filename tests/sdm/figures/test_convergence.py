"""The figures of chapter 36 (assocmem.sdm.figures.convergence): what they draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from assocmem.sdm.figures import convergence as figs


def _runs():
    rows = []
    for d in (5, 9, 11):
        for a in ("Binary_SDM", "Binary_SDM_BFit_Attention"):
            for level in (0, 4, 8):
                rows.append({"setting": "n=64", "d": d, "algorithm": a, "level": level,
                             "mean_cosine": 1 - level / 64 - (d == 5) * 0.1})
    rows.append({"setting": "n=1000", "d": 384, "algorithm": "Cont_SDM", "level": 0,
                 "mean_cosine": 1.0})
    return pd.DataFrame(rows)


def test_convergence_panels_draws_one_panel_per_radius_and_one_line_per_rule():
    fig = figs.convergence_panels(_runs(), "n=64", "random patterns")
    axes = fig.axes
    assert len(axes) == 4  # three radii on a 2 x 2 grid
    assert [ax.get_title() for ax in axes[:3]] == ["d = 5", "d = 9", "d = 11"]
    first = axes[0].get_lines()
    assert [ln.get_label() for ln in first] == ["Binary_SDM", "Binary_SDM_BFit_Attention"]
    np.testing.assert_allclose(first[0].get_xdata(), [0, 4, 8])
    np.testing.assert_allclose(first[0].get_ydata(), [0.9, 1 - 4 / 64 - 0.1, 1 - 8 / 64 - 0.1])
    assert not axes[3].get_lines()
    assert axes[2].get_xlabel() == "perturbation k (bits)"
    assert axes[0].get_ylabel() == "mean final cosine"
    assert fig._suptitle.get_text() == "random patterns"
    plt.close(fig)


def test_convergence_panels_refuses_bad_input():
    with pytest.raises(ValueError, match="no rows of setting"):
        figs.convergence_panels(_runs(), "n=7", "x")
    with pytest.raises(ValueError, match="mean_cosine"):
        figs.convergence_panels(_runs().drop(columns="mean_cosine"), "n=64", "x")
    with pytest.raises(TypeError, match="DataFrame"):
        figs.convergence_panels([1, 2], "n=64", "x")


def _shares():
    return pd.DataFrame([{"setting": "n=64", "d": d, "k": k, "SDM": 0.5 / (k + 1),
                          "softmax": 0.25 / (k + 1)} for d in (5, 19) for k in (0, 2, 4)])


def test_target_share_panels_draws_sdm_and_softmax_per_case():
    cases = [("n=64", 64, 5), ("n=64", 64, 19)]
    fig = figs.target_share_panels(_shares(), cases)
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["n = 64, d = 5", "n = 64, d = 19"]
    sdm, att = fig.axes[1].get_lines()
    np.testing.assert_allclose(sdm.get_ydata(), [0.5, 0.5 / 3, 0.1])
    np.testing.assert_allclose(att.get_ydata(), [0.25, 0.25 / 3, 0.05])
    assert fig.axes[0].get_yscale() == "log"
    assert fig.axes[-1].get_xlabel() == "query-target distance k (bits)"
    plt.close(fig)


def test_target_share_panels_refuses_bad_input():
    with pytest.raises(ValueError, match="no shares"):
        figs.target_share_panels(_shares(), [("n=64", 64, 27)])
    with pytest.raises(ValueError, match="at least one"):
        figs.target_share_panels(_shares(), [])
    with pytest.raises(ValueError, match="softmax"):
        figs.target_share_panels(_shares().drop(columns="softmax"), [("n=64", 64, 5)])


def _summary():
    rows = []
    for protocol in figs.PROTOCOLS:
        for projection in ("learnt", "identity"):
            for q in (0.5, 0.75, 1.0):
                rows.append({"protocol": protocol, "projection": projection,
                             "query_cosine": q, "cosine": q * 0.9, "cosine_sem": 0.01})
    return pd.DataFrame(rows)


def test_projection_panels_draws_four_protocols_and_the_ceiling():
    fig = figs.projection_panels(_summary(), 0.8)
    top, bottom = fig.axes
    assert top.get_title() == "learnt projection"
    assert bottom.get_title() == "identity projection"
    # one data line per protocol (errorbar) and the horizontal ceiling
    assert [c.get_label() for c in top.containers] == list(figs.PROTOCOLS)
    np.testing.assert_allclose(np.asarray(top.containers[0].lines[0].get_ydata(), float),
                               [0.45, 0.675, 0.9])
    lines = top.get_lines()
    ceiling = [ln for ln in lines if ln.get_label() == "nearest stored image (authors)"]
    assert len(ceiling) == 1
    assert np.allclose(np.asarray(ceiling[0].get_ydata(), float), 0.8)
    assert bottom.get_xlabel() == "cosine of the perturbed query to its target"
    plt.close(fig)


def test_projection_panels_refuses_bad_input():
    with pytest.raises(ValueError, match="cosine_sem"):
        figs.projection_panels(_summary().drop(columns="cosine_sem"), 0.8)
