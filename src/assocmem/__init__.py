"""assocmem: associative memories, from linear attention to sparse distributed memory.

The library behind the executable book *How Much Can a Matrix Remember?*. Its layout is the
book's table of contents: one package per Part, over one shared floor that every Part uses.

Parts
-----
linear      Part I (chapters 01-03): linear attention as a matrix memory. Softmax and linear
            attention, outer-product / least-squares / delta-rule memories, closed-form read
            errors, the geometry of stored pairs, Monte Carlo capacity (seed 000).
mlps        Part II (chapters 10-17): fact-storing MLPs. Fact sets, the Hebbian MLP constructions
            and their baselines, decoding margins and their bounds, the counting bound, the
            theorems of *MLPs are Hebbians*, and the capacity and margin sweeps; the MLPs inside
            a Transformer (14-15), fact editing (16) and a language model's own activations
            (17) (seed 001).
sdm         Part III (chapters 30-37): sparse distributed memory and attention. Hamming and
            spherical intersections, the beta fits, SNR and optimal radii, read rules, SDM as a
            kernel memory, the convergence experiments (36), and the review's claims about
            trained models (37) (seed 002).
compare     Part IV (chapter 50): one table for every memory. Adapters that fit each memory of
            Parts I-III to one protocol, the harness that measures them on the same fact sets,
            and the ``memory_table`` sweep.

The shared floor
----------------
memory_protocol  the associative-memory protocol (``write``, ``read``, ``num_parameters``,
              ``num_bits``) and the one decoding rule (strict argmax over the value table)
sweeps        named sweeps with presets, a resumable results store, executors, the capacity
              search, and the live-against-stored check
repro         reproduction-check tables: what the source says, ours, tolerance, verdict
claims        the registry of the three sources' claims: one record per checkable claim, its
              location, value and kind of test, and the chapters that check it
display       the display policy: numbers at the precision the computation supports
dtypes        the dtype policy: float32/float64 computed, float16/bfloat16 refused
plotting      the house figure style
devices       device selection (``device="auto"``) and CPU thread control
benchmarking  machine description and same-run reference rates for timings
datasets      real patterns: scikit-learn's digits, a local MNIST reader
progress      progress bars that stay silent under CI and in the book build

The floor imports no Part. Part II uses Part I's matrix memory (its linear Hebbian baseline),
Part III uses Part I's softmax attention, and Part IV imports every Part to measure its memories;
no other Part imports another (``tests/test_layout.py``).

Every Part and module of the floor, and the names most work starts from, are reachable from the
top (``assocmem.linear``, ``assocmem.hebbian_mlp``); they are imported on first use, so
``import assocmem`` itself stays light.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: The Parts and the modules of the floor, as ``assocmem.<name>``.
_MODULES = ("linear", "mlps", "sdm", "compare", "memory_protocol", "sweeps", "repro", "claims",
            "display", "dtypes", "plotting", "devices", "benchmarking", "datasets", "progress")
#: The main names, as ``assocmem.<name>``, and the module each lives in.
_NAMES = {
    # Part I: matrix memories and attention
    "OuterProductMemory": "assocmem.linear.memory",
    "LeastSquaresMemory": "assocmem.linear.memory",
    "DeltaRuleMemory": "assocmem.linear.memory",
    "softmax_attention": "assocmem.linear.attention.softmax",
    "linear_attention": "assocmem.linear.attention.linear_forms",
    # Part II: fact sets and fact-storing MLPs
    "FactSet": "assocmem.mlps.facts",
    "make_fact_set": "assocmem.mlps.facts",
    "hebbian_mlp": "assocmem.mlps.mlp.hebbian",
    "data_dependent_mlp": "assocmem.mlps.mlp.data_dependent",
    # Part III: sparse distributed memory
    "NeuronSDM": "assocmem.sdm.read.neuron_view",
    "sdm_read": "assocmem.sdm.read.pattern_view",
    "attention_read": "assocmem.sdm.read.attention",
    # Part IV and the floor
    "AssociativeMemory": "assocmem.memory_protocol",
    "make_memory": "assocmem.compare.adapters",
    "run_sweep": "assocmem.sweeps.engine",
    "ReproductionTable": "assocmem.repro",
}

__all__ = ["__version__", *_MODULES, *_NAMES]


def __getattr__(name: str):
    """Import a Part, a floor module or a main name on first use (PEP 562)."""
    if name in _MODULES:
        module = importlib.import_module(f"assocmem.{name}")
    elif name in _NAMES:
        module = getattr(importlib.import_module(_NAMES[name]), name)
    else:
        raise AttributeError(f"module 'assocmem' has no attribute {name!r}; the Parts and main "
                             f"names are: {', '.join(__all__[1:])}")
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
