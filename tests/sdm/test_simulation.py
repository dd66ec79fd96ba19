"""Tests for assocmem.sdm.simulation: exact read-bit moments and the neuron-level SNR simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm import ball_fraction, circle_intersection_table, snr
from assocmem.sdm.simulation import (
    FIG16,
    PRESETS,
    SimulationPreset,
    _hamming,
    _pack,
    _random_words,
    _shared_counts,
    _unpack,
    get_preset,
    read_snr_terms,
    simulate_read_snr,
)


# ------------------------------------------------------------------------------------------
# presets
# ------------------------------------------------------------------------------------------


def test_presets_are_valid():
    assert {"quick", "full"} <= set(PRESETS)
    for preset in PRESETS.values():
        assert isinstance(preset, SimulationPreset)
        assert preset.trials >= 2
        assert all(0 <= d <= FIG16["n"] for d in preset.radii)
        assert FIG16["m"] in preset.patterns  # the Fig. 16 point is always simulated
        assert min(preset.cd_patterns) >= 1 and max(preset.cd_patterns) <= 1024
        assert 512 in preset.cd_patterns


def test_get_preset_unknown_lists_valid_names():
    assert get_preset("quick") is PRESETS["quick"]
    with pytest.raises(ValueError, match="full.*quick|quick.*full"):
        get_preset("paper-scale")


# ------------------------------------------------------------------------------------------
# bit packing and the shared-neuron counts (reference: plain unpacked bits)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [7, 64, 100, 130])
def test_pack_unpack_roundtrip_and_hamming(n):
    rng = np.random.default_rng(n)
    words = _random_words(rng, (5,), n)
    bits = _unpack(words, n)
    assert bits.shape == (5, n) and set(np.unique(bits)) <= {0, 1}
    for i in range(5):
        assert np.array_equal(_pack(bits[i]), words[i])
    ref = (bits[:, None, :] != bits[None, :, :]).sum(-1)
    assert np.array_equal(_hamming(words[:, None, :], words[None, :, :]), ref)


@pytest.mark.parametrize("n,r,m", [(12, 300, 7), (70, 2000, 5)])
def test_shared_counts_match_brute_force(n, r, m):
    rng = np.random.default_rng(1)
    neurons = _random_words(rng, (r,), n)
    patterns = _random_words(rng, (m,), n)
    query = _random_words(rng, (), n)
    radii = np.array([0, 2, n // 4, n // 3, n // 2, n])
    got = _shared_counts(neurons, query, patterns, n, radii)
    nb, pb, qb = _unpack(neurons, n), _unpack(patterns, n), _unpack(query, n)
    dq = (nb != qb).sum(-1)  # (r,)
    dp = (nb[:, None, :] != pb[None, :, :]).sum(-1)  # (r, m)
    ref = np.stack([((dq[:, None] <= d) & (dp <= d)).sum(0) for d in radii], axis=1)
    assert got.shape == (m, radii.size)
    assert np.array_equal(got, ref)


# ------------------------------------------------------------------------------------------
# exact moments
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d", [(20, 5), (64, 11), (100, 35), (100, 60)])
def test_mean_overlap_is_p_squared(n, d):
    # averaged over a random pattern, I(dv)/2^n has mean p^2 exactly (|B| p addresses)
    t = read_snr_terms(n, 1000, 10, d)
    p = ball_fraction(d, n)
    assert t.crosstalk_eq25 == pytest.approx(p * p * 1000 + (p * p * 1000) ** 2, rel=1e-12)
    assert t.dispersion >= 1.0


@pytest.mark.parametrize("n,r,m,d", [(100, 10**4, 100, 35), (64, 2**64, 1024, 11),
                                      (1000, 10**6, 10**4, 447), (100, 10**4, 1, 40)])
def test_eq25_term_matches_capacity_snr(n, r, m, d):
    assert read_snr_terms(n, r, m, d).snr_eq25 == pytest.approx(snr(n, r, m, d), rel=1e-12)


def test_single_pattern_is_binomial():
    n, r, d = 100, 10**4, 40
    q = circle_intersection_table(n, d)[0] / 2**n
    t = read_snr_terms(n, r, 1, d)
    assert t.snr == pytest.approx(math.sqrt(r * q / (1 - q)), rel=1e-12)
    assert t.snr_eq25 == pytest.approx(math.sqrt(r * q), rel=1e-12)
    assert t.snr > t.snr_eq25  # Poisson overstates Var I_0: Eq. 25 is below the exact SNR here


def test_fig16_values_and_upper_bound_where_crosstalk_dominates():
    t = read_snr_terms(**FIG16)
    assert round(t.snr, 3) == 3.851 and round(t.snr_eq25, 3) == 3.862
    for d in (37, 39, 41, 43):
        assert read_snr_terms(100, 10**4, 300, d).snr_eq25 > read_snr_terms(100, 10**4, 300, d).snr


def test_query_noise_lowers_signal():
    a, b = read_snr_terms(100, 10**4, 100, 35, x=0), read_snr_terms(100, 10**4, 100, 35, x=6)
    assert b.signal < a.signal and b.crosstalk == a.crosstalk
    assert b.snr_eq25 == pytest.approx(snr(100, 10**4, 100, 35, x=6), rel=1e-12)


@pytest.mark.parametrize("kwargs", [dict(n=0), dict(r=0), dict(m=0), dict(d=101), dict(x=-1),
                                    dict(d=3.5), dict(r=True)])
def test_read_snr_terms_bad_input(kwargs):
    args = dict(n=100, r=10**4, m=100, d=35)
    args.update(kwargs)
    with pytest.raises(ValueError):
        read_snr_terms(**args)


# ------------------------------------------------------------------------------------------
# simulation
# ------------------------------------------------------------------------------------------


def test_simulation_shapes_and_determinism():
    a = simulate_read_snr(40, 500, [1, 5, 20], [10, 14, 16], trials=20, seed=3)
    b = simulate_read_snr(40, 500, [1, 5, 20], [10, 14, 16], trials=20, seed=3)
    assert a.snr.shape == a.stderr.shape == (3, 3)
    assert a.mean_signal.shape == a.zero_weight_fraction.shape == (3,)
    assert np.array_equal(a.snr, b.snr) and np.array_equal(a.stderr, b.stderr)
    assert np.all((a.zero_weight_fraction >= 0) & (a.zero_weight_fraction <= 1))
    # more radius, more shared neurons, fewer zero weights (same draws)
    assert np.all(np.diff(a.mean_signal) >= 0) and np.all(np.diff(a.zero_weight_fraction) <= 0)


def test_simulation_scalar_grid_and_single_pattern():
    s = simulate_read_snr(30, 200, 1, 10, trials=10, seed=0)
    assert s.snr.shape == (1, 1) and np.isnan(s.zero_weight_fraction).all()


@pytest.mark.parametrize("x", [0, 4])
def test_simulation_agrees_with_exact_moments(x):
    n, r, trials = 60, 3000, 600
    radii, counts = [20, 23, 26], [1, 20, 80]
    sim = simulate_read_snr(n, r, counts, radii, x=x, trials=trials, seed=11)
    for i, d in enumerate(radii):
        q = circle_intersection_table(n, d, [x])[0] / 2**n
        assert sim.mean_signal[i] == pytest.approx(r * q, rel=6 / math.sqrt(r * q * trials))
        for j, m in enumerate(counts):
            exact = read_snr_terms(n, r, m, d, x=x).snr
            assert abs(sim.snr[i, j] - exact) <= 4.0 * sim.stderr[i, j], (d, m)


def test_stderr_matches_spread_over_seeds():
    runs = [simulate_read_snr(40, 800, 30, 15, trials=40, seed=s) for s in range(40)]
    values = np.array([r.snr[0, 0] for r in runs])
    errors = np.array([r.stderr[0, 0] for r in runs])
    ratio = values.std(ddof=1) / errors.mean()
    assert 0.6 < ratio < 1.5


def test_autoassociative_crosstalk_has_positive_mean():
    # contents equal to addresses: patterns near the target share neurons and agree with it
    ind = simulate_read_snr(60, 3000, 80, 26, trials=150, seed=5)
    auto = simulate_read_snr(60, 3000, 80, 26, trials=150, seed=5, contents="autoassociative")
    assert auto.snr[0, 0] > ind.snr[0, 0] + 3 * (auto.stderr[0, 0] + ind.stderr[0, 0])


@pytest.mark.parametrize("kwargs", [dict(n=0), dict(r=0), dict(m=[3, 0]), dict(d=[10, 41]), dict(x=41),
                                    dict(trials=1), dict(contents="hetero"), dict(d=[])])
def test_simulation_bad_input(kwargs):
    args = dict(n=40, r=100, m=5, d=10, trials=5)
    args.update(kwargs)
    with pytest.raises(ValueError):
        simulate_read_snr(**args)


def test_read_snr_terms_fields_are_plain_floats():
    t = read_snr_terms(**FIG16)
    for name in ("signal", "signal_var", "signal_var_eq25", "crosstalk", "crosstalk_eq25", "dispersion", "snr",
                 "snr_eq25"):
        assert type(getattr(t, name)) is float, name
