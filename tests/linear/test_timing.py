"""Tests for assocmem.linear.timing: presets, the log-log fit, and the shape (not the values) of timings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.benchmarking import time_call
from assocmem.linear.timing import (
    ATTENTION_METHODS,
    PRESETS,
    get_preset,
    loglog_slope,
    preset_dict,
    time_attention_vs_T,
    time_decoding,
)


def test_presets_and_unknown_name():
    assert set(PRESETS) >= {"quick", "full"}
    quick, full = get_preset("quick"), get_preset("full")
    assert max(quick.time_T) <= 2048 and quick.decode_T <= 2048  # the book's time budget
    assert max(full.time_T) == 16384 and full.decode_T == 16384
    assert quick.d_k == quick.d_v == 64
    assert preset_dict("quick")["d_k"] == 64
    with pytest.raises(ValueError, match=r"unknown preset 'paper'.*'full'.*'quick'"):
        get_preset("paper")


def test_loglog_slope_recovers_exponents():
    x = np.array([10.0, 20.0, 40.0, 80.0])
    assert loglog_slope(x, 3 * x**2) == pytest.approx(2.0, abs=1e-12)
    assert loglog_slope(x, 0.5 * x) == pytest.approx(1.0, abs=1e-12)
    assert loglog_slope(x, np.full(4, 7.0)) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="at least two"):
        loglog_slope([1.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1.0, 2.0], [0.0, 1.0])


def test_time_attention_vs_T_table():
    df = time_attention_vs_T([16, 32], d_k=4, d_v=3, min_run_time=0.001)
    assert list(df.columns) == ["method", "T", "seconds", "us_per_token"]
    assert len(df) == 2 * len(ATTENTION_METHODS)
    assert (df.seconds > 0).all()
    np.testing.assert_allclose(df.us_per_token, 1e6 * df.seconds / df["T"])
    with pytest.raises(ValueError, match="unknown method"):
        time_attention_vs_T([16], methods=["flash"])
    with pytest.raises(ValueError, match="dtype"):
        time_attention_vs_T([16], dtype="int32")


def test_time_decoding_octaves_and_exact_memory():
    T, d_k, d_v = 35, 4, 3  # last octave 32..35 is short: merged into 16..35
    df = time_decoding(T, d_k, d_v, repeats=1, heads=2)
    for name, group in df.groupby("decoder"):
        # octaves cover 1..T without gaps; a short last octave is merged into the previous one
        assert group.t_lo.iloc[0] == 1 and group.t_hi.iloc[-1] == T
        assert (group.t_lo.iloc[1:].to_numpy() == group.t_hi.iloc[:-1].to_numpy() + 1).all()
        assert list(group.t_lo) == [1, 2, 4, 8, 16]
        expected = [t * (d_k + d_v) for t in group.t_hi] if name == "kv_cache" else [d_k * d_v] * len(group)
        assert list(group.numbers_held) == expected  # per head
    assert (df.us_per_token > 0).all()
    with pytest.raises(ValueError, match="unknown decoder"):
        time_decoding(4, decoders=["paged"])
    with pytest.raises(ValueError, match=">= 1"):
        time_decoding(0)


def test_timing_leaves_thread_count_alone():
    before = torch.get_num_threads()
    time_decoding(3, 2, 2, repeats=1, num_threads=1)
    assert torch.get_num_threads() == before
    assert math.isfinite(time_call(lambda: None, min_run_time=0.001))


def test_time_attention_rounds():
    df = time_attention_vs_T([8], d_k=2, d_v=2, methods=["softmax", "chunked"], min_run_time=0.001, rounds=2)
    assert list(df.method) == ["softmax", "chunked"] and (df.seconds > 0).all()
    with pytest.raises(ValueError, match="rounds"):
        time_attention_vs_T([8], rounds=0)


def test_decoding_uses_the_shared_thread_context():
    import assocmem.linear.timing as timing

    assert not hasattr(timing, "_threads")  # one implementation: assocmem.devices.torch_threads
    before = torch.get_num_threads()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="num_threads must be an integer >= 1"):
            time_decoding(2, 2, 2, repeats=1, num_threads=bad)
    assert torch.get_num_threads() == before
