"""Tests for assocmem.sdm.kernels: the ball kernel's Walsh spectrum, zonal kernels on the sphere,
binary random features and linear attention, von Mises-Fisher posteriors, and Hopfield against SDM.

Exact identities (Krawtchouk transforms, integer-valued reads, Hopfield fields) are checked for
equality; floating-point identities to float64 rounding; Monte Carlo means at four standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from assocmem.linear.memory import OuterProductMemory
from assocmem.sdm import (
    NeuronSDM,
    attention_weights,
    bipolar,
    circle_intersection,
    circle_intersection_table,
    expected_neurons,
    flip_bits,
    random_binary_patterns,
    sdm_read,
)
from assocmem.sdm.kernels import (
    PRESETS,
    app_b6_field,
    attention_as_vmf_mixture,
    ball_kernel_matrix,
    ball_kernel_spectrum,
    binary_random_features,
    cap_kernel_gram,
    compare_retrieval,
    exponential_kernel_gram,
    feature_kernel_mc,
    get_preset,
    hamming_kernel_matrix,
    hopfield_field,
    hopfield_field_as_sdm,
    hopfield_update,
    iterate_reads,
    keeler_sdm_read,
    krawtchouk_matrix,
    log_exponential_kernel_spectrum,
    neurons_for_precision,
    one_step_agreement,
    psd_tolerance,
    radial_spectrum,
    random_unit_vectors,
    sdm_as_linear_attention,
    shared_feature_counts,
    sign_keep,
    unanimity_violations,
    vmf_log_density,
    vmf_log_normalizer,
    vmf_responsibilities,
    walsh_hadamard,
)

CPU = "cpu"


# ------------------------------------------------------------------------------ presets


def test_presets_and_unknown_name():
    assert set(PRESETS) >= {"quick", "full"}
    assert get_preset("quick") is PRESETS["quick"]
    with pytest.raises(ValueError, match="quick"):
        get_preset("nope")


# ------------------------------------------------------------------------------ Krawtchouk / Walsh


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
def test_krawtchouk_matches_definition(n):
    K = krawtchouk_matrix(n)
    for j in range(n + 1):
        for w in range(n + 1):
            direct = sum((-1) ** i * math.comb(w, i) * math.comb(n - w, j - i) for i in range(j + 1))
            assert K[j, w] == direct


def test_krawtchouk_orthogonality():
    # sum_w C(n, w) K_j(w) K_k(w) = 2^n C(n, j) delta_jk
    n = 11
    K = krawtchouk_matrix(n)
    for j in range(n + 1):
        for k in range(n + 1):
            s = sum(math.comb(n, w) * K[j, w] * K[k, w] for w in range(n + 1))
            assert s == ((1 << n) * math.comb(n, j) if j == k else 0)


def test_walsh_hadamard_against_definition_and_inverse():
    rng = np.random.default_rng(0)
    n = 6
    f = rng.standard_normal(1 << n)
    idx = np.arange(1 << n)
    H = (-1.0) ** np.array([[bin(s & x).count("1") for x in idx] for s in idx])
    assert np.allclose(walsh_hadamard(f), H @ f, atol=1e-12, rtol=0)
    assert np.allclose(walsh_hadamard(walsh_hadamard(f)) / (1 << n), f, atol=1e-12, rtol=0)
    two = np.stack([f, 2 * f])
    assert np.allclose(walsh_hadamard(two)[1], 2 * walsh_hadamard(f))
    with pytest.raises(ValueError):
        walsh_hadamard(np.ones(6))


@pytest.mark.parametrize("n", range(1, 15))
def test_ball_spectrum_is_squared_transform_for_every_radius(n):
    for d in range(n + 1):
        spec = ball_kernel_spectrum(n, d)
        assert spec.squared_transform_equal
        assert spec.min_eigenvalue >= 0
        assert spec.reflection_symmetric
        assert sum(spec.multiplicities) == 1 << n
        # trace: sum of eigenvalues with multiplicity = 2^n I(0)
        assert sum(l * m for l, m in zip(spec.eigenvalues, spec.multiplicities)) == (1 << n) * spec_ball(n, d)


def spec_ball(n, d):
    return circle_intersection(0, d, n)


def test_ball_spectrum_large_n_exact():
    spec = ball_kernel_spectrum(64, 11)
    assert spec.squared_transform_equal
    assert spec.reflection_symmetric
    assert all(isinstance(v, int) for v in spec.eigenvalues)
    # lambda(0) = (ball size)^2: the constant character sums the kernel row
    assert spec.eigenvalues[0] == circle_intersection(0, 11, 64) ** 2


def test_ball_spectrum_has_exact_zeros():
    spec = ball_kernel_spectrum(10, 3)
    assert spec.zero_weights == [3, 8]
    assert spec.null_dimension == math.comb(10, 3) + math.comb(10, 8)
    assert ball_kernel_spectrum(3, 1).zero_weights == [2]


def test_sum_of_krawtchouk_identity():
    # sum_{j <= d} K_j(w; n) = K_d(w - 1; n - 1) for w >= 1 (MacWilliams & Sloane)
    n = 13
    K, K1 = krawtchouk_matrix(n), krawtchouk_matrix(n - 1)
    for d in range(n):
        b = ball_kernel_spectrum(n, d).ball_transform
        for w in range(1, n + 1):
            assert b[w] == K1[d, w - 1]


@pytest.mark.parametrize("n,d", [(6, 2), (8, 3), (9, 4), (10, 3)])
def test_brute_force_eigenvalues_match(n, d):
    spec = ball_kernel_spectrum(n, d)
    K = ball_kernel_matrix(n, d)
    ev = np.linalg.eigvalsh(K)
    tol = K.shape[0] * np.finfo(float).eps * float(spec.eigenvalues[0])
    assert np.max(np.abs(ev - spec.expanded())) <= tol
    assert np.max(np.abs(np.sort(walsh_hadamard(K[0])) - spec.expanded())) <= tol


def test_radial_spectrum_exact_and_float():
    n = 7
    vals = [3, 0, 1, 0, 0, 2, 0, 5]
    K = hamming_kernel_matrix(n, vals)
    lam = radial_spectrum(vals, n)
    assert all(isinstance(v, int) for v in lam)
    ev = np.sort(np.concatenate([np.full(math.comb(n, w), lam[w]) for w in range(n + 1)]))
    assert np.allclose(np.linalg.eigvalsh(K), ev, atol=1e-9)
    lamf = radial_spectrum([float(v) for v in vals], n)
    assert lamf == [float(v) for v in lam]
    with pytest.raises(ValueError):
        radial_spectrum([1, 2], n)


def test_exponential_spectrum_closed_form():
    n, beta = 8, 3.7
    vals = [math.exp(beta * (1 - 2 * j / n)) for j in range(n + 1)]
    lam = radial_spectrum(vals, n)
    logs = log_exponential_kernel_spectrum(n, beta)
    assert np.allclose(np.log(lam), logs, atol=1e-12, rtol=0)
    assert np.allclose(np.diff(logs), math.log(math.tanh(beta / n)))
    with pytest.raises(ValueError):
        log_exponential_kernel_spectrum(n, 0.0)


def test_matrix_size_guard():
    with pytest.raises(ValueError):
        ball_kernel_matrix(13, 2)
    with pytest.raises(ValueError):
        ball_kernel_spectrum(5, 6)


# ------------------------------------------------------------------------------ sphere


def test_cap_gram_is_psd_and_matches_kernel():
    X = random_unit_vectors(40, 6, seed=1)
    G = cap_kernel_gram(X, 1.5)
    assert np.allclose(G, G.T)
    ev = np.linalg.eigvalsh(G)
    assert ev[0] >= -psd_tolerance(G, 1e-12)
    from assocmem.sdm import cap_fraction, cap_intersection
    assert G[0, 0] == cap_fraction(1.5, 6)
    assert math.isclose(G[0, 1], float(cap_intersection(float(X[0] @ X[1]), 1.5, 6)), rel_tol=1e-12)


def test_exponential_gram_psd():
    X = random_unit_vectors(50, 5, seed=2)
    G = exponential_kernel_gram(X, 4.0)
    assert np.linalg.eigvalsh(G)[0] >= -psd_tolerance(G)
    with pytest.raises(ValueError):
        exponential_kernel_gram(X * 2, 1.0)


def test_psd_tolerance_detects_indefinite():
    G = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3, -1
    assert np.linalg.eigvalsh(G)[0] < -psd_tolerance(G)


# ------------------------------------------------------------------------------ random features


def test_features_match_neuron_activation():
    mem = NeuronSDM(16, 500, 5, seed=3, device=CPU)
    x = random_binary_patterns(20, 16, seed=4, device=CPU)
    phi = binary_random_features(x, mem.neuron_addresses, 5)
    assert phi.dtype == torch.float64 and phi.shape == (20, 500)
    assert torch.equal(phi.bool(), mem.activation(x))


@pytest.mark.parametrize("threshold", [False, True])
def test_linear_attention_form_equals_neuron_read(threshold):
    n, r, d = 20, 3000, 6
    mem = NeuronSDM(n, r, d, seed=0, device=CPU)
    P = random_binary_patterns(30, n, seed=1, device=CPU)
    mem.write(P, P)
    Q = torch.cat([flip_bits(P, k, seed=k) for k in (0, 2, 5, 9)])
    a = mem.read(Q, threshold=threshold)
    b = sdm_as_linear_attention(Q, P, P, mem.neuron_addresses, d, threshold=threshold)
    assert torch.equal(torch.isnan(a), torch.isnan(b))
    assert torch.equal(torch.nan_to_num(a, -7.0), torch.nan_to_num(b, -7.0))
    # a leading batch shape is kept
    c = sdm_as_linear_attention(Q.reshape(4, 30, n), P, P, mem.neuron_addresses, d, threshold=threshold)
    assert torch.equal(torch.nan_to_num(c.reshape(-1, n), -7.0), torch.nan_to_num(b, -7.0))


def test_storage_is_outer_product_memory():
    n, r, d = 16, 800, 5
    mem = NeuronSDM(n, r, d, seed=0, device=CPU)
    P = random_binary_patterns(12, n, seed=1, device=CPU)
    mem.write(P, P)
    phi = binary_random_features(P, mem.neuron_addresses, d)
    S = OuterProductMemory(r, n, device=CPU).write(phi, P.to(torch.float64)).S  # (n, r)
    assert torch.equal(S.T, mem.storage)


def test_exhaustive_features_give_intersection():
    n, d = 10, 3
    mem = NeuronSDM.exhaustive(n, d, device=CPU)
    x = random_binary_patterns(6, n, seed=2, device=CPU)
    y = torch.cat([flip_bits(x, k, seed=k) for k in range(n + 1)])
    phi_x = binary_random_features(x, mem.neuron_addresses, d)
    phi_y = binary_random_features(y, mem.neuron_addresses, d)
    table = circle_intersection_table(n, d)
    got = (phi_y.reshape(n + 1, 6, -1) * phi_x).sum(-1)  # (n + 1, 6)
    for k in range(n + 1):
        assert torch.all(got[k] == table[k])


def test_two_radii_and_empty_policy():
    P = random_binary_patterns(5, 12, seed=0, device=CPU)
    Q = flip_bits(P, 3, seed=1)
    out = sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, threshold=True)
    assert torch.isnan(out).all()  # nothing within 2 of the queries
    kept = sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, threshold=True, empty="query")
    assert torch.equal(kept, Q.to(torch.float64))
    with pytest.raises(ValueError):
        sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, empty="raise")


def test_shared_feature_counts_mean_within_four_se():
    n, d, r, draws = 16, 5, 300, 600
    dvs = list(range(0, 2 * d + 2))
    df = feature_kernel_mc(dvs, d, n, r, draws, seed=11)
    for row in df.itertuples():
        assert row.exact == pytest.approx(expected_neurons(row.dv, d, n, r), rel=1e-15)
        assert abs(row.z) <= 4.0
    assert df.all_integer.all()
    assert (df.loc[df.dv > 2 * d, "mean"] == 0).all()


def test_shared_feature_counts_shape_and_determinism():
    a = shared_feature_counts([0, 3], 4, 12, 50, 7, seed=5)
    b = shared_feature_counts([0, 3], 4, 12, 50, 7, seed=5)
    assert a.shape == (7, 2) and a.dtype == np.int64
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        shared_feature_counts([13], 4, 12, 50, 7)


def test_neurons_for_precision():
    n, d, dv = 20, 6, 4
    r = neurons_for_precision(dv, d, n, 0.1)
    q = circle_intersection(dv, d, n) / 2**n
    assert math.isclose(math.sqrt((1 - q) / (r * q)), 0.1, rel_tol=1e-12)
    with pytest.raises(ValueError):
        neurons_for_precision(2 * d + 1, d, n, 0.1)


# ------------------------------------------------------------------------------ von Mises-Fisher


def test_vmf_normalizer_against_scipy_and_closed_form():
    x = random_unit_vectors(5, 7, seed=0)
    for kappa in (0.5, 10.0, 300.0):
        ours = vmf_log_density(x, x[0], kappa)
        assert np.allclose(ours, stats.vonmises_fisher(x[0], kappa).logpdf(x), atol=1e-10, rtol=1e-12)
    # kappa = 0: the uniform density, 1 / area(S^6) = Gamma(7/2) / (2 pi^(7/2))
    uniform = math.lgamma(3.5) - math.log(2) - 3.5 * math.log(math.pi)
    assert np.allclose(vmf_log_density(x, x[0], 0.0), uniform, atol=1e-14, rtol=0)
    # n = 3: C(kappa) = kappa / (4 pi sinh kappa)
    k = 2.5
    assert math.isclose(float(vmf_log_normalizer(3, k)), math.log(k / (4 * math.pi * math.sinh(k))), rel_tol=1e-13)


def test_vmf_density_integrates_to_one_on_s2():
    kappa = 3.0
    # on S^2 with mu = e_z: integral over t = cos(theta) of 2 pi C exp(kappa t)
    C = math.exp(float(vmf_log_normalizer(3, kappa)))
    total, _ = integrate.quad(lambda t: 2 * math.pi * C * math.exp(kappa * t), -1, 1)
    assert math.isclose(total, 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("method", ["explicit", "scipy"])
def test_vmf_responsibilities_equal_softmax(method):
    n, m, beta = 32, 20, 9.4
    P = random_binary_patterns(m, n, seed=1, device=CPU)
    K = bipolar(P)
    q = bipolar(flip_bits(P[:6], 5, seed=2))
    soft = attention_weights(q, K, beta).numpy()
    resp = vmf_responsibilities(q.numpy(), K.numpy(), beta, method=method)
    assert np.max(np.abs(resp - soft)) <= 1e-12


def test_unnormalised_keys_need_unequal_weights():
    n, m, beta = 16, 10, 5.0
    rng = np.random.default_rng(0)
    K = rng.standard_normal((m, n))
    q = random_unit_vectors(4, n, seed=3)
    soft = attention_weights(torch.tensor(q), torch.tensor(K), beta, normalize=False).numpy()
    dirs, kappa, lw = attention_as_vmf_mixture(K, beta)
    assert np.max(np.abs(vmf_responsibilities(q, dirs, kappa, lw) - soft)) <= 1e-12
    assert np.max(np.abs(vmf_responsibilities(q, dirs, kappa) - soft)) > 1e-3


def test_vmf_input_checks():
    with pytest.raises(ValueError):
        vmf_responsibilities(np.ones((1, 3)), np.eye(3), 1.0)  # non-unit query
    with pytest.raises(ValueError):
        vmf_responsibilities(np.eye(3)[:1], np.eye(3), 1.0, method="nope")
    with pytest.raises(ValueError):
        vmf_log_normalizer(3, -1.0)


# ------------------------------------------------------------------------------ Hopfield


def test_sign_keep():
    out = sign_keep(torch.tensor([2.0, -1.0, 0.0, 0.0]), torch.tensor([1.0, 1.0, -1.0, 1.0]))
    assert out.tolist() == [1.0, -1.0, -1.0, 1.0]


def test_hopfield_field_identities():
    n, m = 24, 7
    P = random_binary_patterns(m, n, seed=0, device=CPU)
    Q = torch.randint(0, 2, (50, n), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)
    S, X = bipolar(P, normalize=False), bipolar(Q, normalize=False)
    f = hopfield_field(S, X)
    assert torch.equal(f, app_b6_field(P, Q))
    assert torch.equal(f, hopfield_field_as_sdm(P, Q))
    assert torch.equal(f, OuterProductMemory(n, n, device=CPU).write(S, S).read(X))


def test_hopfield_update_fixed_points_and_mirror():
    # orthogonal patterns are fixed points, and so are their mirror images
    H = torch.tensor([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1]], dtype=torch.float64)
    assert torch.equal(hopfield_update(H, H, steps=5), H)
    assert torch.equal(hopfield_update(H, -H, steps=5), -H)
    with pytest.raises(ValueError):
        hopfield_update(H, torch.zeros(4))


def test_zero_diagonal_option():
    H = torch.tensor([[1, 1, -1, -1]], dtype=torch.float64)
    x = torch.tensor([[1, 1, 1, -1]], dtype=torch.float64)
    assert torch.equal(hopfield_update(H, x, zero_diagonal=True), H)


def test_keeler_read_is_majority_within_radius():
    n = 16
    P = random_binary_patterns(6, n, seed=3, device=CPU)
    Q = flip_bits(P, 2, seed=4)
    for d_read in (2, 5, 9, n):
        out = keeler_sdm_read(P, Q, d_read, threshold=False)
        table = torch.tensor([1.0 if k <= d_read else 0.0 for k in range(n + 1)], dtype=torch.float64)
        ref = sdm_read(Q, P, P, 0, weights=table)
        assert torch.allclose(torch.nan_to_num(out, -1.0), torch.nan_to_num(ref, -1.0), atol=1e-15, rtol=0)
    # no read threshold: every query gets the same output
    full = keeler_sdm_read(P, Q, n)
    assert torch.equal(full, full[:1].expand_as(full))


def test_sdm_never_breaks_unanimity_but_hopfield_does():
    n, m = 32, 3
    P = random_binary_patterns(m, n, seed=7, device=CPU)
    assert bool(((P == 0).all(0) | (P == 1).all(0)).any())
    mirror = 1 - P
    hop = hopfield_update(bipolar(P, normalize=False), bipolar(mirror, normalize=False))
    assert int(unanimity_violations((hop + 1) / 2, P).sum()) > 0
    for d in range(n + 1):
        out = sdm_read(mirror, P, P, d, threshold=True)
        assert int(unanimity_violations(out, P).sum()) == 0


def test_iterate_reads_stops_at_fixed_point():
    calls = []

    def read(x):
        calls.append(1)
        return torch.zeros_like(x)

    x, steps = iterate_reads(read, torch.ones(2, 3), max_steps=10)
    assert steps == 2 and torch.equal(x, torch.zeros(2, 3))


def test_compare_retrieval_and_agreement_small():
    df = compare_retrieval(32, 3, [0, 2], d=8, d_read=8, queries=12, max_steps=20, seed=0)
    assert set(df.memory) == {"Hopfield", "SDM, neuron at every address", "SDM, d_write = 0, neurons = patterns"}
    assert (df.loc[df.flips == 0, "success"] == 1.0).all()
    P = random_binary_patterns(3, 16, seed=1, device=CPU)
    near = flip_bits(P, 1, seed=2)
    ag = one_step_agreement(P, near)
    assert len(ag) == 2 * 17
    assert ag.agreement.between(0, 1).all()
    far = 1 - P
    both = one_step_agreement(P, {"near": near, "mirror": far})
    assert len(both) == 2 * 2 * 17
    got = both[both.queries == "near"].reset_index(drop=True)
    assert np.array_equal(got.agreement.to_numpy(), ag.agreement.to_numpy())
    assert (both[both.queries == "mirror"].agreement == 0).all()  # SDM never returns a mirror state
