"""The conformance suite: every memory of the book, through its adapter, obeys one protocol.

Parametrised over :data:`assocmem.compare.adapters.MEMORIES`: shapes, dtypes, clear errors, counts,
and exact recall wherever the theory says recall is exact.
"""

import math

import pytest
import torch

from assocmem.compare.adapters import (
    MEMORIES,
    MEMORY_INFO,
    BinarySDM,
    ClassicalHopfield,
    ContinuousSDM,
    MatrixAdapter,
    ModernHopfield,
    SoftmaxCache,
    make_memory,
    sdm_radius,
)
from assocmem.memory_protocol import AssociativeMemory, MemoryNotWrittenError, decode
from assocmem.mlps.facts import make_fact_set
from assocmem.sdm.geometry.balls import ball_size
from assocmem.sdm.kernels.hopfield import hopfield_update

D = 8
SIZE = {"m": 16, "r": 512}


def build(name, dtype=torch.float64, d=D):
    size = SIZE.get(MEMORY_INFO[name].size)
    options = {"epochs": 2} if name == "mlp_gd" else {}
    return make_memory(name, d, size, seed=0, dtype=dtype, **options)


def facts(F=4, d=D, seed=0):
    return make_fact_set(F, d, tied=False, seed=seed)


@pytest.mark.parametrize("name", MEMORIES)
def test_shapes_and_dtypes(name):
    fs = facts()
    mem = build(name)
    assert isinstance(mem, AssociativeMemory) and mem.name == name
    assert mem.write(fs.keys, fs.targets) is mem and mem.num_pairs == 4
    out = mem.read(fs.keys)
    assert out.shape == (4, D) and out.dtype == torch.float64 and out.device.type == "cpu"
    assert bool(torch.isfinite(out).all())
    assert mem.read(fs.keys[0]).shape == (D,)
    assert mem.read(fs.keys.reshape(2, 2, D)).shape == (2, 2, D)
    assert mem.read(torch.zeros(0, D)).shape == (0, D)


@pytest.mark.parametrize("name", MEMORIES)
def test_float32_memories_answer_in_float32(name):
    fs = facts()
    out = build(name, torch.float32).write(fs.keys, fs.targets).read(fs.keys.float())
    assert out.dtype == torch.float32 and bool(torch.isfinite(out).all())


@pytest.mark.parametrize("name", MEMORIES)
def test_low_precision_is_refused(name):
    with pytest.raises(ValueError, match="float16"):
        build(name, torch.float16)
    mem = build(name).write(*[x for x in (facts().keys, facts().targets)])
    with pytest.raises(ValueError, match="bfloat16"):
        mem.read(facts().keys.bfloat16())


@pytest.mark.parametrize("name", MEMORIES)
def test_clear_errors(name):
    fs = facts()
    mem = build(name)
    with pytest.raises(MemoryNotWrittenError, match="before read"):
        mem.read(fs.keys)
    for keys, values, match in [
        (fs.keys[0], fs.targets, "must be 2-D"),
        (fs.keys[:, :-1], fs.targets, f"d_k = {D} columns"),
        (fs.keys, fs.targets[:, :-1], f"d_v = {D} columns"),
        (fs.keys, fs.targets[:3], "same number of rows"),
        (fs.keys * math.nan, fs.targets, "keys contain non-finite"),
        (fs.keys, fs.targets * math.inf, "values contain non-finite"),
    ]:
        with pytest.raises(ValueError, match=match):
            mem.write(keys, values)
    assert mem.num_pairs == 0
    mem.write(fs.keys, fs.targets)
    with pytest.raises(ValueError, match=f"d_k = {D}"):
        mem.read(torch.ones(3, D + 1))
    with pytest.raises(ValueError, match="non-finite"):
        mem.read(torch.full((1, D), math.nan))
    mem.reset()
    with pytest.raises(MemoryNotWrittenError):
        mem.read(fs.keys)


@pytest.mark.parametrize("name", MEMORIES)
def test_parameter_and_bit_counts(name):
    fs = facts(6)
    mem = build(name).write(fs.keys, fs.targets)
    W, info = mem.num_parameters, MEMORY_INFO[name]
    assert isinstance(W, int) and W > 0 and mem.num_bits >= W
    expected = {None: D * D, "m": 3 * 16 * D, "r": 512 * (2 * D + 1)}[info.size]
    if info.grows_with_pairs:
        expected = 6 * 2 * D
    if name == "hopfield":
        expected = (2 * D) ** 2
    assert W == expected


@pytest.mark.parametrize("name", [m for m in MEMORIES if MEMORY_INFO[m].unit_sphere])
def test_mlps_need_unit_keys(name):
    fs = facts()
    with pytest.raises(ValueError, match="unit-norm"):
        build(name).write(2 * fs.keys, fs.targets)


def test_make_memory_refuses_unknown_names_and_wrong_sizes():
    with pytest.raises(ValueError, match="unknown memory 'lstm'; valid memories: outer_product"):
        make_memory("lstm", 4)
    with pytest.raises(ValueError, match="size must be the m"):
        make_memory("mlp_whitened", 4)
    with pytest.raises(ValueError, match="size must be None"):
        make_memory("outer_product", 4, 8)
    with pytest.raises(ValueError, match="unknown rule"):
        MatrixAdapter(4, 4, "hebbian")
    with pytest.raises(ValueError, match="unknown MLP method"):
        make_memory("mlp_whitened", 4, 8).__class__(4, 8, "adam")
    with pytest.raises(ValueError, match="d_k >= 2"):
        ContinuousSDM(1, 3)
    # options the adapter does not take are named, with the ones it takes
    with pytest.raises(ValueError, match="outer_product: unknown option\\(s\\) foo; valid options: none"):
        make_memory("outer_product", 8, foo=1)
    with pytest.raises(ValueError, match="linear_attention: unknown option\\(s\\) beta; valid options: none"):
        make_memory("linear_attention", 8, beta=2.0)
    with pytest.raises(ValueError, match="mlp_whitened: unknown option\\(s\\) epoch; valid options: epochs, lr"):
        make_memory("mlp_whitened", 8, 4, epoch=3)
    assert make_memory("modern_hopfield", 8, beta=4.0, steps=0).beta == 4.0


# ---------------------------------------------------------------------------------- exact recall


def orthonormal_keys(n, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return q[:n]  # (n, d), orthonormal rows


@pytest.mark.parametrize("name", ["outer_product", "least_squares", "delta_rule", "linear_attention"])
def test_matrices_recall_orthonormal_keys_exactly(name):
    """Orthonormal keys: ``S k_j = v_j`` for the additive memory (seed 000 §4), hence for all four."""
    keys, values = orthonormal_keys(5, D), torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    mem = make_memory(name, D) if name != "linear_attention" else None
    mem = MatrixAdapter(D, 3, name) if name != "linear_attention" else type(build(name))(D, 3)
    torch.testing.assert_close(mem.write(keys, values).read(keys), values, rtol=0, atol=1e-12)


def test_least_squares_recalls_independent_keys_exactly():
    """``n <= d_k`` linearly independent keys: ``S* k_j = v_j`` (seed 000 §6), not so the additive memory."""
    fs = facts(D)
    ls = MatrixAdapter(D, D, "least_squares").write(fs.keys, fs.targets)
    torch.testing.assert_close(ls.read(fs.keys), fs.targets, rtol=0, atol=1e-9)
    add = MatrixAdapter(D, D, "outer_product").write(fs.keys, fs.targets)
    assert float((add.read(fs.keys) - fs.targets).abs().max()) > 0.1


def test_linear_attention_state_is_the_outer_product_memory():
    fs = facts(6)
    a = build("linear_attention").write(fs.keys, fs.targets).read(fs.keys)
    b = build("outer_product").write(fs.keys, fs.targets).read(fs.keys)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("cls", [SoftmaxCache, ContinuousSDM, ModernHopfield])
def test_one_pair_is_read_back_exactly(cls):
    """Normalised reads of a single stored pair return its value (weights sum to one)."""
    fs = facts(1)
    out = cls(D, D).write(fs.keys, fs.targets).read(fs.keys)
    torch.testing.assert_close(out, fs.targets, rtol=0, atol=1e-12)


def test_binary_sdm_reads_one_pattern_exactly_and_empty_reads_are_zero():
    fs = facts(1)
    mem = BinarySDM(D, D, 256, radius=2, seed=0).write(fs.keys, fs.targets)
    torch.testing.assert_close(mem.read(fs.keys), fs.targets, rtol=0, atol=1e-12)
    far = -fs.keys  # the opposite signs: distance n from the address, beyond twice the radius
    assert torch.equal(mem.read(far), torch.zeros(1, D, dtype=torch.float64))
    assert decode(mem.read(far), torch.eye(D, dtype=torch.float64)).tolist() == [-1]


def test_sdm_radius_activates_the_requested_number_of_neurons():
    d = sdm_radius(16, 4096, active=16)
    assert 4096 * ball_size(d, 16) >= 16 * 2**16 > 4096 * ball_size(d - 1, 16)
    assert sdm_radius(4, 1, active=100) == 4
    with pytest.raises(ValueError, match="active"):
        sdm_radius(4, 1, active=0)


def test_hopfield_recalls_orthogonal_patterns_and_matches_the_library_update():
    """Hadamard rows are orthogonal bipolar patterns: each is a fixed point (Hopfield 1982)."""
    H = torch.tensor([[1.0]], dtype=torch.float64)
    for _ in range(4):
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)  # (16, 16) Sylvester-Hadamard
    patterns = H[1:5]  # (4, 16), halves of 8 and 8
    keys, values = patterns[:, :8], patterns[:, 8:]
    mem = ClassicalHopfield(8, 8, steps=5).write(keys, values)
    torch.testing.assert_close(mem.read(keys), values / math.sqrt(8), rtol=0, atol=0)
    # one full update from a complete pattern agrees with the library's Hopfield update
    state = hopfield_update(patterns, patterns, steps=1)
    assert torch.equal(state, patterns)


@pytest.mark.parametrize("name", ["mlp_whitened", "mlp_data_dependent", "modern_hopfield", "continuous_sdm"])
def test_light_loads_are_recalled(name):
    """Far below capacity (4 facts, ``m = 16``, ``d = 8``) these memories decode every fact."""
    fs = facts(4)
    mem = build(name).write(fs.keys, fs.targets)
    assert decode(mem.read(fs.keys), fs.values).tolist() == fs.mapping.tolist()


def test_writes_accumulate_for_rebuilt_memories():
    fs = facts(6)
    once = build("mlp_whitened").write(fs.keys, fs.targets).read(fs.keys)
    twice = build("mlp_whitened").write(fs.keys[:3], fs.targets[:3]).write(fs.keys[3:], fs.targets[3:])
    assert twice.num_pairs == 6
    torch.testing.assert_close(twice.read(fs.keys), once, rtol=0, atol=1e-12)


def test_modern_hopfield_at_beta_one_without_steps_is_the_softmax_cache():
    fs = facts(5)
    a = ModernHopfield(D, D, beta=1.0, steps=0).write(fs.keys, fs.targets).read(fs.keys)
    b = SoftmaxCache(D, D).write(fs.keys, fs.targets).read(fs.keys)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-14)


def test_mlp_methods_are_chapter_13s():
    from assocmem.compare.adapters import MLP_METHODS
    from assocmem.mlps.capacity_sweeps import METHODS

    assert MLP_METHODS == METHODS


def test_write_rules_classify_every_memory():
    from assocmem.compare.adapters import MEMORY_INFO, MemoryInfo, WRITE_RULES

    rules = {name: info.write_rule for name, info in MEMORY_INFO.items()}
    assert set(rules.values()) == set(WRITE_RULES)
    assert {n for n, r in rules.items() if r == "fits"} == {"least_squares", "delta_rule", "mlp_gd", "mlp_whitened",
                                                           "mlp_data_dependent"}
    assert all(MEMORY_INFO[n].grows_with_pairs for n, r in rules.items() if r == "keeps")
    with pytest.raises(ValueError, match="write_rule must be one of"):
        MemoryInfo("x", "I", write_rule="inverts")


@pytest.mark.parametrize("name", ["outer_product", "least_squares"])
def test_the_delta_rules_options_are_refused_elsewhere(name):
    """beta and passes belong to the delta rule: given to another matrix memory they would be
    ignored silently (newcomer review), so they are refused."""
    with pytest.raises(ValueError, match=r"unknown option\(s\) beta; valid options: none"):
        make_memory(name, 8, beta=-3.0)
    with pytest.raises(ValueError, match=r"unknown option\(s\) passes"):
        make_memory(name, 8, passes=4)
    assert make_memory("delta_rule", 8, beta=0.5, passes=2).passes == 2


def test_a_method_for_a_memory_name_and_back_is_told_the_other_name():
    with pytest.raises(ValueError, match="unknown memory 'whitened'.*is the memory 'mlp_whitened'"):
        make_memory("whitened", 4, 8)
    with pytest.raises(ValueError, match="unknown MLP method 'mlp_whitened'.*its method is 'whitened'"):
        make_memory("mlp_whitened", 4, 8).__class__(4, 8, "mlp_whitened")
    with pytest.raises(ValueError, match="unknown memory 'lstm'; valid memories: [^(]*$"):
        make_memory("lstm", 4)


@pytest.mark.parametrize("name", [m for m in MEMORIES if MEMORY_INFO[m].unit_sphere and m.startswith("mlp_")
                                  and m != "mlp_gd"])
def test_mlp_adapters_store_facts_that_share_a_value(name):
    # facts.targets repeats a value row when facts share it: the adapter builds its fact set with
    # each value once and a map (a FactSet refuses equal value rows)
    from assocmem.compare.harness import first_facts, recall
    from assocmem.mlps.facts import FactSet

    fs = facts(F=6)
    shared = FactSet(fs.keys, fs.values[:3], torch.tensor([0, 1, 2, 0, 1, 2]))
    mem = make_memory(name, D, 256).write(shared.keys, shared.targets)
    assert mem.num_pairs == 6 and 0.0 <= recall(mem, shared) <= 1.0
    assert first_facts(shared, 6).num_values == 3
