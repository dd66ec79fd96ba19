"""Tests for assocmem.sdm.convergence.read_rules: construction errors, fitted betas, input
checks, each rule's weights against the reference implementations, the cap table, empty reads,
neuron-limited counts, explicit neurons, and devices. Small sizes, fixed seeds.
"""

import math

import numpy as np
import pytest
import torch

from assocmem.sdm import geometry
from assocmem.sdm.convergence.algorithms import ALGORITHMS, algorithm_spec
from assocmem.sdm.convergence.perturbations import (
    perturb_binary,
    perturb_continuous,
    random_patterns,
)
from assocmem.sdm.convergence.read_rules import make_read_rule
from assocmem.sdm.convergence.retrieval import converge, cosine_to_target
from assocmem.sdm.read.attention import attention_weights
from assocmem.sdm.read.hamming import bipolar
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.read.pattern_view import sdm_read, sdm_weights


def rule_for(name, n=64, d=11, **kw):
    kw.setdefault("device", "cpu")
    if algorithm_spec(name).needs_r:
        kw.setdefault("r", 2**64)
    return make_read_rule(name, n, d, **kw)


@pytest.mark.parametrize("n, d", [(64, 65), (64, -1), (1, 0)])
def test_bad_radius_or_dimension(n, d):
    with pytest.raises(ValueError):
        make_read_rule("Binary_SDM", n, d, device="cpu")


def test_d_greater_than_n_message():
    with pytest.raises(ValueError, match=r"d must lie in \[0, n\]"):
        make_read_rule("Cont_SDM", 64, 100, device="cpu")


def test_construction_errors():
    with pytest.raises(ValueError, match="needs the number of neurons r"):
        make_read_rule("Binary_SDM_NeuronLimit", 64, 11, device="cpu")
    with pytest.raises(ValueError, match="positive"):
        make_read_rule("Cont_SDM_NeuronLimit", 64, 11, r=0, device="cpu")
    with pytest.raises(ValueError, match="d >= 2"):
        make_read_rule("Cont_SDM_BFit_Attention", 64, 1, device="cpu")
    assert make_read_rule("Cont_SDM_BFit_Attention", 64, 1, beta=3.0, device="cpu").beta == 3.0
    with pytest.raises(ValueError, match="dtype"):
        make_read_rule("Binary_SDM", 64, 11, device="cpu", dtype=torch.float16)
    with pytest.raises(ValueError, match="beta_convention"):
        make_read_rule("Binary_SDM_BFit_Attention", 64, 11, device="cpu", beta_convention="x")
    with pytest.raises(ValueError, match="unknown device"):
        make_read_rule("Binary_SDM", 64, 11, device="tpu")


def test_betas_follow_the_fit_conventions():
    # the authors' convention reproduces the paper's betas (15.9 at d = 11, 10.1 at d = 15)
    assert rule_for("Binary_SDM_BFit_Attention", d=11).beta == pytest.approx(15.85, abs=0.01)
    assert rule_for("Cont_SDM_BFit_Attention", d=15).beta == pytest.approx(10.1, abs=0.05)
    assert rule_for("Cont_SDM_BFit_Attention", d=11, beta_convention="ols").beta == \
        pytest.approx(geometry.fit_beta(64, 11).beta)
    assert rule_for("Cont_SDM_CFit_Attention", d=11, beta_convention="ols").beta == \
        pytest.approx(geometry.fit_beta(64, 11, intersection="cap").beta)


def test_shape_and_entry_errors(patterns64):
    pb, pc = patterns64
    rule = rule_for("Binary_SDM")
    with pytest.raises(ValueError, match="n = 32"):
        rule(pb[:4, :32], pb)
    with pytest.raises(ValueError, match=r"\(m, n\)"):
        rule(pb[:4], pb[0])
    with pytest.raises(ValueError, match="at least 1 row"):
        rule(pb[:4], pb[:0])
    with pytest.raises(ValueError, match="binary"):
        rule(pb[:4] * 2, pb)
    crule = rule_for("Cont_SDM")
    with pytest.raises(ValueError, match="zero vector"):
        crule(torch.zeros(2, 64), pc)
    with pytest.raises(ValueError, match="finite"):
        crule(torch.full((2, 64), float("nan")), pc)


def test_single_query_vector(patterns64):
    pb, _ = patterns64
    rule = rule_for("Binary_SDM")
    out = rule(pb[5], pb)
    assert out.shape == (64,)
    assert torch.equal(out, pb[5].to(out.dtype))


@pytest.mark.parametrize("name", ALGORITHMS)
def test_exact_retrieval_at_zero_perturbation(name, patterns64):
    pb, pc = patterns64
    rule = rule_for(name, d=11)
    p = pb if rule.is_binary else pc
    out, empty = rule.read(p, p, return_empty=True)
    assert not bool(empty.any())
    if rule.is_binary:
        assert torch.equal(out, p.to(out.dtype))
    else:  # far patterns keep a little weight (softmax, caps): a fixed point to ~1e-6
        assert torch.allclose(out, p, atol=1e-4)
        assert bool((cosine_to_target(out, p, "continuous") > 1 - 1e-6).all())
    res = converge(rule, p, p)
    assert bool(res.stopped.all()) and bool((res.steps == 1).all())
    assert torch.allclose(res.cosine_to(p, rule.space), torch.ones(len(p), dtype=torch.float64), atol=1e-6)


def test_binary_sdm_matches_the_pattern_view():
    n, d = 8, 2
    P = torch.tensor([[0] * 8, [1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 1]], dtype=torch.uint8)
    q = torch.tensor([[1, 0, 0, 0, 0, 0, 0, 0]], dtype=torch.uint8)
    # by hand: distances 1, 3, 3; weights I(1), I(3), I(3)
    i1, i3 = geometry.circle_intersection(1, d, n), geometry.circle_intersection(3, d, n)
    expect_w = torch.tensor([[i1, i3, i3]], dtype=torch.float64) / (i1 + 2 * i3)
    rule = make_read_rule("Binary_SDM", n, d, device="cpu")
    assert torch.allclose(rule.weights(q, P), expect_w, rtol=1e-12)
    mean = expect_w @ P.double()
    assert torch.equal(rule(q, P), (mean > 0.5).double())
    assert torch.equal(rule(q, P), sdm_read(q, P, P, d, threshold=True))


def test_weights_agree_with_the_reference_implementations(patterns64):
    pb, pc = patterns64
    qb = perturb_binary(pb[:16], 6, seed=1)
    qc = perturb_continuous(pc[:16], 6, seed=1)
    d = 11
    torch.testing.assert_close(rule_for("Binary_SDM", d=d).weights(qb, pb), sdm_weights(qb, pb, d),
                               rtol=1e-12, atol=0)
    r = rule_for("Binary_SDM_BFit_Attention", d=d)
    torch.testing.assert_close(r.weights(qb, pb), attention_weights(bipolar(qb), bipolar(pb), r.beta),
                               rtol=1e-10, atol=1e-300)
    r = rule_for("Cont_SDM_BFit_Attention", d=d)
    torch.testing.assert_close(r.weights(qc, pc), attention_weights(qc, pc, r.beta), rtol=1e-10, atol=1e-300)
    # Cont_Binary_SDM: the binary intersection at d = floor(n/2 (1 - cos))
    cos = (qc @ pc.T).numpy()
    h = np.floor(32.0 * (1.0 - cos) + 1e-9).astype(int)
    table = np.array(geometry.circle_intersection_table(64, d), dtype=float)
    w = table[h]
    torch.testing.assert_close(rule_for("Cont_Binary_SDM", d=d).weights(qc, pc),
                               torch.tensor(w / w.sum(1, keepdims=True)), rtol=1e-12, atol=0)
    # Cont_SDM: the cap intersection, interpolated from a table (float64: ~1e-6 relative)
    logw = geometry.log_cap_intersection(np.clip(cos, -1, 1), d, 64)
    w = np.exp(logw - logw.max(1, keepdims=True))
    torch.testing.assert_close(rule_for("Cont_SDM", d=d).weights(qc, pc),
                               torch.tensor(w / w.sum(1, keepdims=True)), rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("n, d", [(64, 5), (64, 27), (1000, 447)])
def test_cap_table_matches_the_closed_form(n, d):
    rule = make_read_rule("Cont_SDM", n, d, device="cpu")
    theta = math.acos(1 - 2 * d / n)
    edge = math.cos(2 * theta)
    rho = np.concatenate([np.linspace(-0.5, 1.0, 801), 1 - np.logspace(-12, -2, 20),
                          edge + np.logspace(-6, -2, 10), edge - np.logspace(-6, -2, 10)])
    rho = np.clip(rho, -1, 1)
    exact = np.asarray(geometry.log_cap_intersection(rho, d, n))
    got = rule._cap_log_weights(torch.tensor(rho)).numpy().ravel()
    assert np.array_equal(np.isfinite(got), np.isfinite(exact))  # the support is exact
    fin = np.isfinite(exact) & (exact > exact.max() - 200)
    assert np.max(np.abs(got[fin] - exact[fin])) < 1e-3  # in log Ic; ~1e-6 away from the edge
    bulk = fin & (rho > edge + 0.05)
    assert np.max(np.abs(got[bulk] - exact[bulk])) < 1e-4


def test_zero_weights_leave_the_query_unchanged():
    n, d = 64, 5
    pb, pc = random_patterns(1, n, seed=0)
    q = perturb_binary(pb, 12, seed=0)  # 12 > 2d: no intersection with the only pattern
    rule = make_read_rule("Binary_SDM", n, d, device="cpu")
    out, empty = rule.read(q, pb, return_empty=True)
    assert bool(empty.all()) and torch.equal(out, q.double())
    res = converge(rule, q, pb)
    assert res.steps.tolist() == [1] and bool(res.stopped.all()) and bool(res.zero_weights.all())
    assert cosine_to_target(res.states, pb, "binary").item() == pytest.approx(1 - 24 / 64)
    qc = perturb_continuous(pc, 12, seed=0)
    for name in ("Cont_Binary_SDM", "Cont_SDM"):
        r = make_read_rule(name, n, d, device="cpu")
        if name == "Cont_SDM":  # the caps stop overlapping at cos(2 theta) = 0.42 < 0.625
            qc = perturb_continuous(pc, 24, seed=0)  # cosine 0.25
        out, empty = r.read(qc, pc, return_empty=True)
        assert bool(empty.all()) and torch.allclose(out, qc)
    # neuron-limited with too few neurons: every count rounds to zero
    r = make_read_rule("Binary_SDM_NeuronLimit", n, d, r=1, device="cpu")
    out, empty = r.read(pb, pb, return_empty=True)
    assert bool(empty.all()) and torch.equal(out, pb.double())


def test_neuron_limited_weights_are_integers_with_the_right_mean():
    n, d, r = 16, 4, 3000
    pb, pc = random_patterns(8, n, seed=1)
    q = pb.repeat(400, 1)  # 3200 queries, each pattern's distance table fixed
    rule = make_read_rule("Binary_SDM_NeuronLimit", n, d, r=r, device="cpu", seed=5)
    w = rule.raw_weights(q, pb)
    assert torch.equal(w, w.round()) and bool((w >= 0).all())
    dist = torch.cdist(q.double(), pb.double(), p=0).long()
    table = torch.tensor([geometry.expected_neurons(v, d, n, r) for v in range(n + 1)])
    expect = table[dist]
    assert bool((w - torch.floor(expect) >= 0).all()) and bool((w - torch.floor(expect) <= 1).all())
    frac = (expect - torch.floor(expect)).flatten()
    hit = (w - torch.floor(expect)).flatten()
    # mean of the Bernoulli parts against their probabilities, 4 standard errors
    se = math.sqrt(float((frac * (1 - frac)).sum()))
    assert abs(float(hit.sum() - frac.sum())) < 4 * se + 1e-9
    # seeded: reseeding restarts the draws; another seed gives others
    assert torch.equal(w, rule.manual_seed(5).raw_weights(q, pb))
    assert torch.equal(w, make_read_rule("Binary_SDM_NeuronLimit", n, d, r=r, device="cpu", seed=5)
                       .raw_weights(q, pb))
    assert not torch.equal(w, rule.manual_seed(6).raw_weights(q, pb))
    # continuous: mean r Ic(rho)
    crule = make_read_rule("Cont_SDM_NeuronLimit", n, d, r=2**20, device="cpu", seed=2)
    qc = pc.repeat(400, 1)
    wc = crule.raw_weights(qc, pc)
    assert torch.equal(wc, wc.round())
    cos = np.clip((pc @ pc.T).numpy(), -1, 1)
    mean_c = 2**20 * np.exp(geometry.log_cap_intersection(cos, d, n))
    got = wc.reshape(400, 8, 8).mean(0).numpy()
    var = mean_c - np.floor(mean_c)
    tol = 4 * np.sqrt(var * (1 - var) / 400) + 1e-6 * mean_c + 1e-9
    assert np.all(np.abs(got - mean_c) <= tol)


def test_neuron_limit_at_r_2_to_the_n_is_exact(patterns64):
    pb, _ = patterns64
    q = perturb_binary(pb[:32], 8, seed=2)
    a = rule_for("Binary_SDM", d=11).raw_weights(q, pb)
    b = rule_for("Binary_SDM_NeuronLimit", d=11, r=2**64).raw_weights(q, pb)
    # neuron counts are the exact intersections; Binary_SDM holds them relative to the row maximum
    torch.testing.assert_close(b / b.amax(-1, keepdim=True), a, rtol=1e-12, atol=0)


def test_binary_neuron_sdm_reads_through_neurons():
    n, d, r = 12, 3, 2048
    pb, _ = random_patterns(20, n, seed=4)
    q = perturb_binary(pb, 1, seed=4)
    rule = make_read_rule("Binary_Neuron_SDM", n, d, r=r, device="cpu", seed=9)
    mem = NeuronSDM(n, r, d, seed=9, device="cpu").write(pb, pb)
    torch.testing.assert_close(rule(q, pb), mem.read(q, threshold=True, empty="query"))
    with pytest.raises(ValueError, match="shared_neurons"):
        rule.weights(q, pb)


def test_authors_cap_counts_scale_by_e2_over_2():
    n, d = 64, 5
    _, pc = random_patterns(4, n, seed=0)
    a = make_read_rule("Cont_SDM_NeuronLimit", n, d, r=2**64, device="cpu")
    b = make_read_rule("Cont_SDM_NeuronLimit", n, d, r=2**64, device="cpu", authors_cap_counts=True)
    assert b._log_r - a._log_r == pytest.approx(2 - math.log(2))


def test_cpu_device_and_dtype(patterns64):
    pb, pc = patterns64
    rule = rule_for("Cont_SDM", dtype=torch.float32)
    out = rule(pc[:4], pc)
    assert out.device.type == "cpu" and out.dtype == torch.float32
    assert rule.device == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_request_without_cuda_raises():
    with pytest.raises(RuntimeError, match="CUDA"):
        make_read_rule("Binary_SDM", 64, 11, device="cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["Binary_SDM", "Cont_SDM", "Cont_SDM_CFit_Attention", "Cont_Binary_SDM"])
def test_cuda_matches_cpu(name, patterns64):
    pb, pc = patterns64
    cpu = rule_for(name)
    gpu = rule_for(name, device="cuda")
    p = pb if cpu.is_binary else pc
    q = perturb_binary(p[:32], 6, seed=0) if cpu.is_binary else perturb_continuous(p[:32], 6, seed=0)
    a = converge(cpu, q, p)
    b = converge(gpu, q, p)
    assert b.states.device.type == "cuda"
    torch.testing.assert_close(b.states.cpu(), a.states, rtol=1e-9, atol=1e-9)
    assert torch.equal(b.steps.cpu(), a.steps)


def test_cont_sdm_reference_read_agrees_with_the_tabulated_read():
    # The reference evaluates the cap intersection by quadrature at every cosine; the rule
    # interpolates log Ic linearly on 8193 grid points in u = sin(t/2). The interpolation error of
    # the log-weights is O(h'' du^2) with du = 1/8192, about 1e-9 here, so the unit-norm reads
    # agree to well within 1e-7 (float64); far queries (no pattern in the cap overlap) come back
    # unchanged in both.
    from assocmem.sdm.convergence.read_rules import cont_sdm_read_reference

    n, d = 64, 11
    _, P = random_patterns(200, n, seed=0)
    _, noise = random_patterns(40, n, seed=1)
    Q = torch.cat([P[:30] + 0.4 * noise[:30], -P[:10]])  # near patterns, and antipodes
    rule = make_read_rule("Cont_SDM", n, d, device="cpu", dtype=torch.float64)
    fast = rule(Q, P)
    ref = cont_sdm_read_reference(Q, P, n, d)
    assert (fast - ref).abs().max().item() <= 1e-7
    with pytest.raises(ValueError, match="need queries"):
        cont_sdm_read_reference(Q[:, :10], P, n, d)
    with pytest.raises(ValueError, match="nonzero rows"):
        cont_sdm_read_reference(torch.zeros(2, n), P, n, d)
