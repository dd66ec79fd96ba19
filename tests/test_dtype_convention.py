"""The library's dtype and device convention (issue 29, item 2; CONTRIBUTING.md "dtype and device").

The library follows torch: ``device=None, dtype=None`` mean torch's defaults
(``torch.get_default_device()``, ``torch.get_default_dtype()``), resolved in one place each
(:func:`assocmem.devices.resolve_device`, :func:`assocmem.dtypes.resolve_dtype`); modules do not
cast their callers' tensors; float32 models work end to end; nothing changes torch's global
state; random draws happen on the CPU and move, so a seed gives the same numbers on every device.

``tests/conftest.py`` pins float64 for the other tests; the tests here set the default they
need with :func:`assocmem.dtypes.default_dtype` (scoped, restored).
"""

import dataclasses
import importlib
import inspect
import pkgutil

import pytest
import torch
from torch import nn

import assocmem
from assocmem.devices import resolve_device
from assocmem.dtypes import default_dtype, resolve_dtype

# Signatures whose dtype/device default is not None, with the reason. Only experiment presets
# and sweep configs: their fields are the stored protocol of a committed result (recorded in the
# results' provenance and compared on resume), not the default of a caller's computation.
ALLOWED = {
    "assocmem.linear.timing.TimingPreset": "chapter 1's timing preset: the timed runs' dtype",
    "assocmem.mlps.editing_sweeps.FactEditingConfig": "sweep config (stored protocol)",
    "assocmem.mlps.lm_block_sweeps.LMBlockConfig": "sweep config (stored protocol)",
    "assocmem.mlps.transformer_capacity_sweeps.FactsConfig": "sweep config (stored protocol)",
    "assocmem.mlps.transformer_capacity_sweeps.ArchitectureConfig": "sweep config (stored protocol)",
    "assocmem.mlps.transformer_sweeps.UsabilityConfig": "sweep config (stored protocol)",
    "assocmem.mlps.transformer_sweeps.NoiseConfig": "sweep config (stored protocol)",
    "assocmem.mlps.transformer_sweeps.TransformerCapacityConfig": "sweep config (stored protocol)",
    "assocmem.sdm.convergence.presets.ConvergencePreset": "preset: the authors' float32 reads",
    "assocmem.sdm.convergence_sweeps.ConvergenceSweepConfig": "sweep config (stored protocol)",
    "assocmem.sdm.projections.presets.ProjectionPreset": "preset: the authors' float32 training",
}


def _is_dtype_or_device(name: str) -> bool:
    return name in ("dtype", "device") or name.endswith(("_dtype", "_device"))


def _public_callables():
    """(qualified name, callable) of every public function, class and public method."""
    seen = set()
    for info in pkgutil.walk_packages(assocmem.__path__, "assocmem."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__ or id(obj) in seen:
                continue
            seen.add(id(obj))
            qual = f"{module.__name__}.{name}"
            if inspect.isfunction(obj):
                yield qual, obj
            elif inspect.isclass(obj):
                yield qual, obj
                for attr, member in vars(obj).items():
                    fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    if not attr.startswith("_") and inspect.isfunction(fn):
                        yield f"{qual}.{attr}", fn


def _bad_defaults():
    bad = []
    for qual, obj in _public_callables():
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        for p in sig.parameters.values():
            if _is_dtype_or_device(p.name) and p.default is not inspect.Parameter.empty and p.default is not None:
                bad.append((qual, p.name, p.default))
    return bad


def test_every_public_dtype_and_device_default_is_none():
    found = _bad_defaults()
    unexpected = [b for b in found if b[0] not in ALLOWED]
    assert not unexpected, ("public signatures must default dtype/device to None (torch's defaults); "
                            f"found: {unexpected}")
    stale = set(ALLOWED) - {b[0] for b in found}
    assert not stale, f"allow-list entries that no longer need it: {sorted(stale)}"


def test_the_scan_finds_a_bad_default(monkeypatch):
    """The scan above could fail: a signature with ``dtype=torch.float64`` is reported."""
    import assocmem.dtypes as mod

    def bad(x, dtype=torch.float64, device="cpu"):
        return x

    bad.__module__ = mod.__name__
    monkeypatch.setattr(mod, "bad_default_example", bad, raising=False)
    names = {(q, n) for q, n, _ in _bad_defaults()}
    assert ("assocmem.dtypes.bad_default_example", "dtype") in names
    assert ("assocmem.dtypes.bad_default_example", "device") in names


def test_allowed_entries_are_configs():
    for qual in ALLOWED:
        module, name = qual.rsplit(".", 1)
        assert dataclasses.is_dataclass(getattr(importlib.import_module(module), name)), qual


# ---------------------------------------------------------------------------------- resolution


@pytest.mark.parametrize("default", [torch.float32, torch.float64])
def test_resolve_dtype_follows_torch_default(default):
    with default_dtype(default):
        assert resolve_dtype(None) == default
    assert resolve_dtype(torch.float64) == torch.float64  # an explicit dtype is the caller's to check


def test_resolve_dtype_refuses_what_the_library_cannot_compute_in():
    from assocmem.linear.memory import OuterProductMemory

    with pytest.raises(ValueError, match="float16"):  # the function's own check, after resolving
        OuterProductMemory(3, 2, dtype=torch.float16)
    with default_dtype(torch.float64):
        torch.set_default_dtype(torch.bfloat16)
        with pytest.raises(ValueError, match="bfloat16"):
            resolve_dtype(None)


def test_default_dtype_restores_on_error():
    before = torch.get_default_dtype()
    with pytest.raises(RuntimeError):
        with default_dtype(torch.float32):
            assert torch.get_default_dtype() == torch.float32
            raise RuntimeError
    assert torch.get_default_dtype() == before


def test_resolve_device_none_is_torch_default_device():
    assert resolve_device(None) == torch.get_default_device()
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda", "mps")  # "auto" stays an explicit value


# ------------------------------------------------------------------------------ dtype=None follows


def _builds():
    from assocmem.linear.memory import OuterProductMemory
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import hebbian_mlp
    from assocmem.mlps.transformer.model import TransformerConfig

    return {
        "OuterProductMemory": lambda: OuterProductMemory(4, 3).dtype,
        "make_fact_set": lambda: make_fact_set(8, 4, seed=0).keys.dtype,
        "hebbian_mlp": lambda: next(hebbian_mlp(make_fact_set(8, 4, seed=0), 6).parameters()).dtype,
        "TransformerConfig": lambda: TransformerConfig(d=4).dtype,
    }


@pytest.mark.parametrize("name", list(_builds()))
@pytest.mark.parametrize("default", [torch.float32, torch.float64])
def test_dtype_none_follows_set_default_dtype(name, default):
    with default_dtype(default):
        assert _builds()[name]() == default


def test_explicit_dtype_wins_over_the_default():
    from assocmem.linear.memory import OuterProductMemory

    with default_dtype(torch.float32):
        assert OuterProductMemory(4, 3, dtype=torch.float64).dtype == torch.float64


def test_no_public_call_changes_the_default_dtype():
    from assocmem.linear.memory import LeastSquaresMemory
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import hebbian_mlp

    with default_dtype(torch.float32):
        facts = make_fact_set(16, 6, seed=1)
        hebbian_mlp(facts, 12, "full")
        LeastSquaresMemory(6, 6).write(facts.keys[:4], facts.values[:4])
        assert torch.get_default_dtype() == torch.float32


# ---------------------------------------------------------------------------- float32 end to end


class _SDMRead(nn.Module):
    """An SDM read in its attention form (seed 002, Eq. 4) over fixed patterns, as a layer."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, beta: float):
        super().__init__()
        self.register_buffer("keys", keys)
        self.register_buffer("values", values)
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from assocmem.sdm.read.attention import attention_read

        return attention_read(x, self.keys, self.values, self.beta)


class _LinearAttention(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from assocmem.linear.attention.linear_forms import linear_attention

        return linear_attention(x, x, x)


def _float32_layers(d: int):
    from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import data_dependent_mlp, hebbian_mlp
    from assocmem.mlps.mlp.hebbian import exact_k2_memory
    from assocmem.mlps.mlp.ntk import ntk_mlp

    facts = make_fact_set(24, d, seed=0)  # dtype=None: float32 here
    g = torch.Generator().manual_seed(0)
    keys, values = torch.randn(5, d, generator=g), torch.randn(5, d, generator=g)
    keys = keys / keys.norm(dim=1, keepdim=True)  # unit keys: the delta rule's step is stable
    patterns = torch.randn(7, d, generator=g).sign()
    return {
        "OuterProductMemory": OuterProductMemory(d, d).write(keys, values),
        "LeastSquaresMemory": LeastSquaresMemory(d, d).write(keys, values),
        "DeltaRuleMemory": DeltaRuleMemory(d, d).write(keys, values),
        "hebbian_mlp": hebbian_mlp(facts, 16),
        "hebbian_mlp (whitened)": hebbian_mlp(facts, 16, "full"),
        "data_dependent_mlp": data_dependent_mlp(facts, 16),
        "ntk_mlp": ntk_mlp(facts, 16),
        "exact_k2_memory": exact_k2_memory(facts),
        "linear_attention": _LinearAttention(),
        "SDM read (attention form)": _SDMRead(patterns, patterns, beta=2.0),
    }


FLOAT32_LAYERS = ["OuterProductMemory", "LeastSquaresMemory", "DeltaRuleMemory", "hebbian_mlp",
                  "hebbian_mlp (whitened)", "data_dependent_mlp", "ntk_mlp", "exact_k2_memory",
                  "linear_attention", "SDM read (attention form)"]


def test_the_float32_layer_list_is_complete():
    with default_dtype(torch.float32):
        assert list(_float32_layers(8)) == FLOAT32_LAYERS


@pytest.mark.parametrize("name", FLOAT32_LAYERS)
def test_float32_model_end_to_end(name):
    with default_dtype(torch.float32):
        layer = _float32_layers(8)[name]
        model = nn.Sequential(nn.Linear(4, 8), layer, nn.Linear(8, 3))
        out = model(torch.randn(5, 4))
        assert out.dtype == torch.float32 and torch.isfinite(out).all()
        out.sum().backward()  # gradients reach the float32 layer before it
        assert model[0].weight.grad is not None and model[0].weight.grad.dtype == torch.float32


def test_float64_constructions_give_the_same_module_as_before():
    """A float64 fact set: the construction is float64 inside and out (the book's chapters)."""
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import hebbian_mlp

    with default_dtype(torch.float64):
        facts = make_fact_set(24, 8, seed=0)
        a = hebbian_mlp(facts, 16, "full")
    with default_dtype(torch.float32):
        b = hebbian_mlp(facts, 16, "full")  # the facts' dtype decides, not the default
    for x, y in zip(a.parameters(), b.parameters()):
        assert x.dtype == torch.float64 and torch.equal(x, y)


def test_float32_construction_rounds_the_float64_one():
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import hebbian_mlp

    facts64 = make_fact_set(24, 8, seed=0, dtype=torch.float64)
    facts32 = make_fact_set(24, 8, seed=0, dtype=torch.float32)
    a, b = hebbian_mlp(facts64, 16, "full"), hebbian_mlp(facts32, 16, "full")
    for x, y in zip(a.parameters(), b.parameters()):
        assert y.dtype == torch.float32
        torch.testing.assert_close(y.double(), x, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ seeds on every device


@pytest.mark.parametrize("device", [None, "cpu", torch.device("cpu"), "auto"])
def test_draws_do_not_depend_on_the_device_argument(device):
    from assocmem.mlps.facts import make_fact_set
    from assocmem.sdm.read.patterns import random_binary_patterns

    ref_p = random_binary_patterns(6, 10, seed=3, device="cpu")
    ref_f = make_fact_set(8, 4, seed=3, device="cpu").keys
    assert torch.equal(random_binary_patterns(6, 10, seed=3, device=device).cpu(), ref_p)
    assert torch.equal(make_fact_set(8, 4, seed=3, device=device).keys.cpu(), ref_f)


def test_read_rule_rounding_draws_on_a_cpu_generator():
    """The neuron-limited rules' stochastic rounding draws from a CPU generator whatever the
    device (it used to seed a generator of the rule's device: other numbers on CUDA), and a read
    does not depend on how the device was named."""
    from assocmem.sdm.convergence.read_rules import ReadRule
    from assocmem.sdm.read.patterns import random_binary_patterns

    patterns = random_binary_patterns(12, 16, seed=1, device="cpu")
    reads = []
    for device in ("cpu", None, "auto"):
        rule = ReadRule("Cont_SDM_NeuronLimit", 16, 5, r=64, seed=0, device=device)
        assert rule._generator.device.type == "cpu"
        reads.append(rule.read(patterns[:3], patterns).cpu())
    assert all(torch.equal(reads[0], r) for r in reads[1:])


def test_uniform_on_cpu_draws_the_cpu_stream():
    """The draw of the neuron-limited rules' rounding: the numbers of the seeded CPU generator
    (in place on the CPU; another device gets a CPU draw copied), and never a device generator."""
    from assocmem.devices import uniform_on_cpu_

    out = torch.empty(4, 9, dtype=torch.float32)
    uniform_on_cpu_(out, torch.Generator().manual_seed(7))
    assert torch.equal(out, torch.rand(4, 9, dtype=torch.float32, generator=torch.Generator().manual_seed(7)))
    meta = uniform_on_cpu_(torch.empty(3, device="meta"), torch.Generator().manual_seed(7))  # the copy path
    assert meta.device.type == "meta"
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="CPU"):
            uniform_on_cpu_(out, torch.Generator(device="cuda"))


def test_sweep_points_run_under_float64_and_restore():
    from assocmem.sweeps.engine import POINT_DTYPE, execute_point

    seen = []

    def point(config, p, device):
        seen.append(torch.get_default_dtype())
        return [{"x": 1}]

    with default_dtype(torch.float32):
        execute_point(point, None, {}, "cpu")
        assert torch.get_default_dtype() == torch.float32
    assert seen == [POINT_DTYPE] == [torch.float64]


def test_editing_model_draws_do_not_depend_on_torch_default_dtype():
    """EditingLM's trained modules are drawn in float32 from the seed whatever torch's default
    (under a float64 default they were drawn otherwise: the stored fact_editing rows changed)."""
    from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
    from assocmem.mlps.facts import make_fact_set
    from assocmem.mlps.mlp import hebbian_mlp

    cfg = EditingLMConfig(vocab_size=12, d=8, qk_hidden=6, aux_rank=2, router_hidden=4,
                          dtype=torch.float64)
    emb = kaiming_embedding(12, 8, seed=0, dtype=torch.float64)
    expert = hebbian_mlp(make_fact_set(6, 8, seed=0, dtype=torch.float64), 4)
    states = []
    for default in (torch.float32, torch.float64):
        with default_dtype(default):
            states.append(dict(EditingLM(cfg, emb, expert, seed=3).named_parameters()))
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])


def test_sdm_reads_and_bipolar_follow_a_float32_model():
    # the SDM reads count in float64 (exact) and return the query's floating dtype, so a float32
    # model's patterns come back float32 and compose with its next layer (first-hour task 4)
    from torch import nn

    from assocmem.sdm.read.hamming import bipolar
    from assocmem.sdm.read.neuron_view import NeuronSDM
    from assocmem.sdm.read.pattern_view import sdm_read

    g = torch.Generator().manual_seed(0)
    P = torch.randint(0, 2, (12, 16), generator=g)
    q32, P32 = P[:4].to(torch.float32), P.to(torch.float32)
    read = sdm_read(q32, P32, P32, d=5)
    assert read.dtype == torch.float32
    assert torch.equal(read, sdm_read(P[:4], P, P, d=5).to(torch.float32))  # same float64 count, cast once
    mem = NeuronSDM(16, 64, 5, seed=1, device="cpu").write(P32, P32)
    head = nn.Linear(16, 3, dtype=torch.float32)
    assert head(torch.nan_to_num(mem(q32))).dtype == torch.float32
    assert bipolar(q32).dtype == torch.float32 and bipolar(P[:4]).dtype == torch.get_default_dtype()
