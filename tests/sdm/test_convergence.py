"""Tests for assocmem.sdm.convergence: the App. B.7 read rules, iterated retrieval, perturbations
and the experiment driver. Small sizes, fixed seeds; the whole file runs in a few seconds."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.sdm import geometry
from assocmem.sdm.convergence import (
    ALGORITHMS,
    ALL_ALGORITHMS,
    PAPER_NEURONS,
    PRESETS,
    Algorithm,
    ReadRule,
    agreement,
    agreement_summary,
    algorithm_spec,
    converge,
    convergence_experiment,
    cosine_to_target,
    get_preset,
    make_queries,
    make_read_rule,
    paper_radii,
    perturb_binary,
    perturb_continuous,
    perturbation_levels,
    random_patterns,
    resolve_algorithm,
    summarize,
)
from assocmem.sdm.read import NeuronSDM, attention_weights, bipolar, sdm_read, sdm_weights

BINARY = [a for a in ALGORITHMS if algorithm_spec(a).space == "binary"]
CONTINUOUS = [a for a in ALGORITHMS if algorithm_spec(a).space == "continuous"]


def rule_for(name, n=64, d=11, **kw):
    kw.setdefault("device", "cpu")
    if algorithm_spec(name).needs_r:
        kw.setdefault("r", 2**64)
    return make_read_rule(name, n, d, **kw)


@pytest.fixture(scope="module")
def patterns64():
    return random_patterns(128, 64, seed=3)


# ------------------------------------------------------------------------------------------
# registry and construction errors
# ------------------------------------------------------------------------------------------


def test_registry_has_the_eight_paper_algorithms():
    assert ALGORITHMS == ("Binary_SDM", "Binary_SDM_NeuronLimit", "Binary_SDM_BFit_Attention",
                          "Cont_SDM", "Cont_SDM_NeuronLimit", "Cont_Binary_SDM",
                          "Cont_SDM_BFit_Attention", "Cont_SDM_CFit_Attention")
    assert ALL_ALGORITHMS == ALGORITHMS + ("Binary_Neuron_SDM",)
    assert resolve_algorithm("cont_sdm_neuron_limit") == "Cont_SDM_NeuronLimit"
    assert resolve_algorithm(Algorithm.CONT_SDM) == "Cont_SDM"
    assert Algorithm.BINARY_SDM == "Binary_SDM"


def test_unknown_algorithm_lists_valid_names():
    with pytest.raises(ValueError, match="Binary_SDM.*Cont_SDM_CFit_Attention"):
        make_read_rule("Hopfield", 64, 11)
    with pytest.raises(ValueError, match="valid names"):
        resolve_algorithm(3)


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


def test_paper_radii_and_levels():
    assert paper_radii(64) == [5, 9, 11, 15, 19, 27]
    assert paper_radii(1000) == [384, 405, 411, 431, 447, 480]
    assert perturbation_levels(12) == [0, 2, 4, 6, 8, 10, 12]
    levels = perturbation_levels(375)
    assert levels == [0, 62, 125, 187, 250, 312, 375]
    assert all(type(v) is int for v in levels)
    assert perturbation_levels(3) == [0, 1, 2, 3]  # unique() removes the repeats
    with pytest.raises(ValueError):
        perturbation_levels(-1)


# ------------------------------------------------------------------------------------------
# input errors
# ------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------
# reads
# ------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------
# iterated retrieval and stopping
# ------------------------------------------------------------------------------------------


def test_binary_stopping_rule_and_per_query_steps(patterns64):
    pb, _ = patterns64
    rule = rule_for("Binary_SDM", d=11)
    q = torch.cat([pb[:1], perturb_binary(pb[1:2], 4, seed=0)])
    res = converge(rule, q, pb)
    assert res.steps.tolist() == [1, 2]  # the unchanged read counts
    assert bool(res.stopped.all())
    assert torch.equal(res.states, pb[:2].double())
    cut = converge(rule, q, pb, max_steps=1)
    assert cut.stopped.tolist() == [True, False] and cut.steps.tolist() == [1, 1]
    none = converge(rule, q, pb, max_steps=0)
    assert none.steps.tolist() == [0, 0] and not bool(none.stopped.any())
    assert torch.equal(none.states, q.double())


def test_continuous_tolerance():
    n = 4
    p = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    q = torch.tensor([[0.99, 0.141, 0.0, 0.0]])  # one read lands on p, moving component 2 by 0.14
    rule = make_read_rule("Cont_SDM_BFit_Attention", n, 2, beta=5.0, device="cpu")
    res = converge(rule, q, p, tol=0.05)
    assert res.steps.tolist() == [2] and torch.allclose(res.states, p.double())
    res = converge(rule, q, p, tol=0.2)  # the first move is below the tolerance: stop, keep the read
    assert res.steps.tolist() == [1] and torch.allclose(res.states, p.double())
    with pytest.raises(ValueError):
        converge(rule, q, p, tol=-1)
    with pytest.raises(ValueError):
        converge(rule, q, p, max_steps=-1)


def test_finished_queries_are_not_read_again(patterns64):
    pb, _ = patterns64

    class Spy(ReadRule):
        sizes: list

        def step(self, queries, prepared):
            self.sizes.append(queries.shape[0])
            return super().step(queries, prepared)

    spy = Spy("Binary_SDM", 64, 11, device="cpu")
    spy.sizes = []
    q = torch.cat([pb[:3], perturb_binary(pb[3:5], 6, seed=0)])
    res = converge(spy, q, pb)
    assert spy.sizes[0] == 5 and spy.sizes[1] == 2  # the three exact queries stopped after one read
    assert spy.sizes == sorted(spy.sizes, reverse=True)
    assert res.steps[:3].tolist() == [1, 1, 1]


# ------------------------------------------------------------------------------------------
# perturbations and patterns
# ------------------------------------------------------------------------------------------


def test_random_patterns_are_sign_and_unit():
    pb, pc = random_patterns(50, 64, seed=0)
    assert pb.dtype == torch.uint8 and torch.equal(pb, (pc > 0).to(torch.uint8))
    torch.testing.assert_close(torch.linalg.vector_norm(pc, dim=-1), torch.ones(50, dtype=torch.float64))
    with pytest.raises(ValueError):
        random_patterns(0, 64)


@pytest.mark.parametrize("k", [0, 1, 6, 12, 64])
def test_binary_perturbation_flips_exactly_k(k):
    pb, _ = random_patterns(200, 64, seed=1)
    q = perturb_binary(pb, k, seed=2)
    assert ((q != pb).sum(-1) == k).all()


@pytest.mark.parametrize("n, k", [(64, 0), (64, 2), (64, 12), (64, 32), (64, 64), (1000, 375)])
def test_continuous_perturbation_hits_the_cosine(n, k):
    _, pc = random_patterns(100, n, seed=1)
    q = perturb_continuous(pc, k, seed=2)
    cos = (q * pc).sum(-1) / torch.linalg.vector_norm(q, dim=-1)
    assert torch.max(torch.abs(cos - (1 - 2 * k / n))).item() < 1e-12
    torch.testing.assert_close(torch.linalg.vector_norm(q, dim=-1), torch.ones(100, dtype=torch.float64))
    with pytest.raises(ValueError):
        perturb_continuous(pc, n + 1)


def test_make_queries_keeps_the_target_closest():
    pb, pc = random_patterns(256, 64, seed=0)
    targets = np.arange(256)
    qb, qc = make_queries(pb, pc, targets, 12, seed=1)
    dist = torch.cdist(qb.double(), pb.double(), p=0)
    assert torch.equal(dist.amin(-1), dist[torch.arange(256), torch.arange(256)])
    cos = qc @ pc.T
    assert bool((cos.amax(-1) <= 1 - 24 / 64 + 1e-5).all())
    assert ((qb != pb).sum(-1) == 12).all()
    # a pattern that is always closer than the target: give up after max_attempts
    bad = torch.tensor([[0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="closer"):
        make_queries(bad, None, [0], 3, seed=0, max_attempts=2)
    # same seed, same queries
    qb2, qc2 = make_queries(pb, pc, targets, 12, seed=1)
    assert torch.equal(qb, qb2) and torch.equal(qc, qc2)


# ------------------------------------------------------------------------------------------
# devices
# ------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------
# the experiment
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_run():
    return convergence_experiment(64, 128, radii=[5, 11], algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit",
                                                                      "Cont_SDM_BFit_Attention"],
                                  levels=[0, 12], num_queries=16, seed=0, show_progress=False)


def test_experiment_frame(small_run):
    df = small_run
    assert len(df) == 3 * 2 * 2 * 16
    assert list(df.columns) == ["setting", "algorithm", "space", "n", "m", "d", "r", "beta", "level",
                                "dataset", "repeat", "query", "cosine", "steps", "stopped", "zero_weights"]
    assert (df.setting == "n=64").all()
    assert (df.loc[df.level == 0, "cosine"] > 1 - 1e-6).all()  # float32 reads
    # the d = 5 exception: 12 flips > 2d, no intersection, the query stays put
    sub = df[(df.algorithm == "Binary_SDM") & (df.d == 5) & (df.level == 12)]
    assert (sub.cosine == 1 - 24 / 64).all() and sub.zero_weights.all()
    soft = df[(df.algorithm == "Cont_SDM_BFit_Attention") & (df.d == 5) & (df.level == 12)]
    assert (soft.cosine > 0.99).all()
    assert df.attrs["config"]["r"] == PAPER_NEURONS[64]


def test_experiment_rows_do_not_depend_on_the_other_rules(small_run):
    alone = convergence_experiment(64, 128, radii=[11], algorithms=["Cont_SDM_BFit_Attention"],
                                   levels=[0, 12], num_queries=16, seed=0, show_progress=False)
    both = small_run[(small_run.algorithm == "Cont_SDM_BFit_Attention") & (small_run.d == 11)]
    np.testing.assert_array_equal(alone.cosine.to_numpy(), both.cosine.to_numpy())


def test_summary_and_agreement(small_run):
    s = summarize(small_run)
    assert len(s) == 3 * 2 * 2 and (s["count"] == 16).all()
    assert (s.ci_low <= s.mean_cosine).all() and (s.mean_cosine <= s.ci_high).all()
    a = agreement(small_run)
    same = a[a.algorithm == "Binary_SDM_NeuronLimit"]  # r = 2^64 at n = 64: identical to Binary_SDM
    assert (same.mean_diff == 0).all() and (same.outcome_agreement == 1).all()
    worst = agreement_summary(a)
    row = worst[(worst.algorithm == "Cont_SDM_BFit_Attention") & (worst.d == 5)].iloc[0]
    assert row.max_abs_diff == pytest.approx(1 - (1 - 24 / 64), abs=1e-6) and row.level_at_max == 12
    assert row.min_agreement == 0.0
    pairs = agreement(small_run, reference=None)
    assert set(zip(pairs.algorithm, pairs.reference)) == {
        ("Binary_SDM_NeuronLimit", "Binary_SDM"), ("Cont_SDM_BFit_Attention", "Binary_SDM"),
        ("Cont_SDM_BFit_Attention", "Binary_SDM_NeuronLimit")}
    with pytest.raises(ValueError, match="not in the frame"):
        agreement(small_run, reference="Cont_SDM")
    with pytest.raises(ValueError, match="columns"):
        summarize(pd.DataFrame({"x": [1]}))


def test_experiment_errors():
    with pytest.raises(ValueError, match="valid names"):
        convergence_experiment(64, 16, algorithms=["nope"], show_progress=False)
    with pytest.raises(ValueError, match="radius"):
        convergence_experiment(64, 16, radii=[70], algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="num_queries"):
        convergence_experiment(64, 16, num_queries=17, algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="levels"):
        convergence_experiment(50, 16, radii=[5], algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="rule_options"):
        convergence_experiment(64, 16, algorithms=["Binary_SDM"], rule_options={"seed": 1},
                               show_progress=False)


def test_experiment_on_data_rows():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((40, 16))
    df = convergence_experiment(m=32, radii=[3], algorithms=["Cont_SDM_CFit_Attention"], levels=[0, 2],
                                num_queries=8, data=data, show_progress=False)
    assert (df.n == 16).all() and len(df) == 16
    assert (df.loc[df.level == 0, "cosine"] > 0.999).all()  # softmax keeps weight on neighbours


def test_presets():
    from assocmem.sdm.convergence import CONTINUOUS_ALGORITHMS

    quick = get_preset("quick")
    assert [(s.n, s.data) for s in quick.settings] == [(64, None), (64, "digits")]
    assert all(len(s.radii) < 6 for s in quick.settings)
    cpu = get_preset("cpu")
    assert [(s.n, s.data, s.convergences_per_level) for s in cpu.settings] == [
        (64, None, 15360), (1000, None, 15360), (64, "digits", 15360)]
    assert cpu.settings[1].radii == (384, 405, 411, 431, 447, 480)
    assert cpu.settings[2].algorithms == CONTINUOUS_ALGORITHMS and len(CONTINUOUS_ALGORITHMS) == 5
    paper = get_preset("paper")
    assert all(s.convergences_per_level == 15360 for s in paper.settings)
    assert paper.settings[3].r == 10**5 and paper.settings[3].label == "n=64,r=1e5"
    with pytest.raises(ValueError, match="quick"):
        get_preset("huge")
    assert set(PRESETS) == {"quick", "cpu", "paper"}


def test_settings_are_kept_apart_and_threads_restored():
    threads = torch.get_num_threads()
    kw = dict(radii=[15], levels=[0, 4], num_queries=8, show_progress=False, num_threads=1)
    a = convergence_experiment(64, 64, algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit"], **kw)
    b = convergence_experiment(64, 64, algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit"], r=10**5,
                               setting="n=64,r=1e5", **kw)
    assert torch.get_num_threads() == threads
    both = pd.concat([a, b], ignore_index=True)
    ag = agreement(both)
    assert set(ag.setting) == {"n=64", "n=64,r=1e5"} and (ag["count"] == 8).all()
    assert len(summarize(both)) == 2 * 2 * 2


def test_one_algorithm_may_be_given_by_name():
    kwargs = dict(radii=[11], levels=[0, 6], num_queries=8, seed=0, show_progress=False)
    listed = convergence_experiment(64, 32, algorithms=["Binary_SDM"], **kwargs)
    for one in ("Binary_SDM", "binary_sdm", Algorithm("Binary_SDM")):
        named = convergence_experiment(64, 32, algorithms=one, **kwargs)
        pd.testing.assert_frame_equal(named, listed)
        assert named.attrs["config"]["algorithms"] == ["Binary_SDM"]
    with pytest.raises(ValueError, match=r"unknown algorithm 'Binary_SDMX'"):
        convergence_experiment(64, 32, algorithms="Binary_SDMX", **kwargs)
    with pytest.raises(ValueError, match="rule name or an iterable"):
        convergence_experiment(64, 32, algorithms=7, **kwargs)


def test_docstrings_cite_public_sources_only():
    import inspect

    from assocmem.sdm import convergence, projections

    for mod in (convergence, projections):
        src = inspect.getsource(mod)
        assert "REFERENCE" not in src and "[REF]" not in src, mod.__name__
        assert "TrentBrick/attention-approximates-sdm" in src
