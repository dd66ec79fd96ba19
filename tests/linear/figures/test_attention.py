"""The figure helpers of chapter 01 (assocmem.linear.figures.attention): what they draw, and
clear errors for bad input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from assocmem.linear.attention import gamma  # noqa: E402
from assocmem.linear.figures import attention as figures  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_score_maps_circles_the_best_key_of_every_query():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 3, generator=g, dtype=torch.float64)
    A, B = x @ x.T, torch.randn(6, 6, generator=g, dtype=torch.float64)
    fig = figures.score_maps(A, B)
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 2 and len(fig.axes) == 4  # two maps, two colour bars
    for ax, M in zip(maps, (A, B)):
        xs, ys = ax.lines[0].get_data()
        assert list(xs) == M.argmax(dim=1).tolist() and list(ys) == list(range(6))
        lo, hi = ax.images[0].get_clim()
        assert lo == -hi == -float(M.abs().max())
    assert maps[0].get_xlabel() == "key position $i$"


def test_score_maps_refuses_non_square_or_mismatched_matrices():
    with pytest.raises(ValueError, match="square"):
        figures.score_maps(torch.zeros(3, 4), torch.zeros(3, 3))
    with pytest.raises(ValueError, match="differ in shape"):
        figures.score_maps(torch.zeros(3, 3), torch.zeros(4, 4))


def _agreement():
    rows = []
    for T in (1, 4, 16):
        rows.append(dict(form="recurrent", chunk_size=0, T=T, diff_over_abs_sum=1e-16 * T))
        rows.append(dict(form="chunked", chunk_size=4, T=T, diff_over_abs_sum=0.0 if T <= 4 else 2e-16))
    return pd.DataFrame(rows)


def test_agreement_of_forms_draws_one_line_per_form_and_the_bound():
    agree = _agreement()
    fig = figures.agreement_of_forms(agree, d_k=8)
    (ax,) = fig.axes
    labels = [line.get_label() for line in ax.lines]
    assert labels[:2] == ["recurrent", "chunked, C = 4"]
    u = torch.finfo(torch.float64).eps / 2
    chunked = ax.lines[1].get_ydata()
    assert chunked[0] == u / 8  # an exact zero sits on the floor line
    bound = ax.lines[2].get_ydata()
    assert np.allclose(bound, [2 * gamma(T * 8 + 2) for T in (1, 4, 16)])
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_agreement_of_forms_refuses_bad_input():
    with pytest.raises(ValueError, match="lacks the column"):
        figures.agreement_of_forms(_agreement().drop(columns="form"), d_k=8)
    with pytest.raises(ValueError, match="positive integer"):
        figures.agreement_of_forms(_agreement(), d_k=0)


def test_time_against_length_labels_each_method_with_its_exponent():
    times = pd.DataFrame([dict(method=m, T=T, seconds=T ** p * 1e-6)
                          for m, p in (("softmax", 2), ("chunked", 1)) for T in (64, 128, 256)])
    fig = figures.time_against_length(times, {"softmax": 2.0, "chunked": 1.0}, chunk_size=32)
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.lines] == [
        "softmax attention: $p$ = 2.00", "linear, chunked (C = 32): $p$ = 1.00"]
    assert np.allclose(ax.lines[0].get_ydata(), 1e3 * times.seconds[:3])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["64", "128", "256"]
    assert any("machine-dependent" in t.get_text() for t in ax.texts)
    with pytest.raises(ValueError, match="no exponent"):
        figures.time_against_length(times, {"softmax": 2.0}, chunk_size=32)


def test_decoding_cost_draws_counts_and_times():
    t = np.arange(1, 9)
    rec_kv = pd.DataFrame(dict(t=t, numbers_held=8 * t))
    rec_state = pd.DataFrame(dict(t=t, numbers_held=np.full(8, 16)))
    per_token = pd.DataFrame(dict(decoder=["kv_cache"] * 3 + ["recurrent"] * 3,
                                  t_lo=[1, 2, 4] * 2, t_mid=[1.5, 3, 6] * 2,
                                  us_per_token=[5.0, 6.0, 8.0, 4.0, 4.0, 4.0]))
    fig = figures.decoding_cost(rec_kv, rec_state, per_token, t_memory=2.0, heads=4,
                                dtype="float32")
    ax_mem, ax_time = fig.axes
    assert np.array_equal(ax_mem.lines[0].get_ydata(), 8 * t)
    assert ax_mem.lines[2].get_xdata()[0] == 2.0  # the break-even line
    assert [line.get_label() for line in ax_time.lines] == [
        "softmax with key-value cache", "linear attention state"]
    assert list(ax_time.lines[0].get_xdata()) == [3, 6]  # the first token is left out
    assert ax_time.get_title() == "time (4 heads, float32)"
    with pytest.raises(ValueError, match="t_memory"):
        figures.decoding_cost(rec_kv, rec_state, per_token, t_memory=0, heads=4, dtype="f")
    with pytest.raises(ValueError, match="lacks the column"):
        figures.decoding_cost(rec_kv.drop(columns="t"), rec_state, per_token, 2.0, 4, "f")
