"""Bad and edge-case input to the public functions of Part IV (``assocmem.compare``).

In the style of the older packages' tables (tests/mlps/test_bad_input.py): each row is a documented
contract, ``(callable, args, kwargs, match)``, checked with ``pytest.raises(ValueError, match=...)``:
a clear error naming the argument, never a silent wrong number or an ``AttributeError`` from inside
the harness. The adapters' read/write contracts are also in tests/test_memory_protocol.py.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from assocmem.compare import adapters as A
from assocmem.compare import harness as H
from assocmem.compare import table_sweeps as TS
from assocmem.linear.memory import OuterProductMemory

F64 = torch.float64
FACTS = H.table_facts(4, 8)
WRITTEN = A.MatrixAdapter(4, 4).write(FACTS.keys, FACTS.targets)
BUILD = lambda: A.MatrixAdapter(4, 4)  # noqa: E731
# memory_table rows of the trained GD MLP: width 8 stores training 0 only
TRAINED = pd.DataFrame({"memory": ["mlp_gd"] * 3, "geometry": ["isotropic"] * 3, "size": [4, 4, 8],
                        "training": [0, 1, 0], "F_star": [3, 4, 5]})

BAD = [
    # adapters: sizes, flags, rules, dtypes and devices of every memory
    pytest.param(A.MatrixAdapter, (0, 4), {}, "d_k must be a positive integer", id="matrix-zero-width"),
    pytest.param(A.MatrixAdapter, (True, 4), {}, "d_k must be a positive integer", id="matrix-bool-width"),
    pytest.param(A.MatrixAdapter, (2.5, 4), {}, "d_k must be a positive integer", id="matrix-float-width"),
    pytest.param(A.MatrixAdapter, (4, 4, "hebb"), {}, "unknown rule", id="matrix-unknown-rule"),
    pytest.param(A.MatrixAdapter, (4, 4), {"dtype": torch.float16}, "not supported", id="matrix-float16"),
    pytest.param(A.MatrixAdapter, (4, 4), {"device": "tpu"}, "unknown device", id="matrix-unknown-device"),
    pytest.param(A.LinearAttentionState, (4, 0), {}, "d_v must be a positive integer", id="linear-attention-zero-dv"),
    pytest.param(A.SoftmaxCache, (4, 4), {"scale": math.nan}, "scale must be finite", id="softmax-nan-scale"),
    pytest.param(A.SoftmaxCache, (4, 4), {"scale": "1"}, "scale must be a real", id="softmax-str-scale"),
    pytest.param(A.MLPAdapter, (0, 4), {}, "must be a positive integer", id="mlp-zero-width"),
    pytest.param(A.MLPAdapter, (4, True), {}, "m must be a positive integer", id="mlp-bool-hidden"),
    pytest.param(A.MLPAdapter, (4, 4, "hopfield"), {}, "unknown MLP method", id="mlp-unknown-method"),
    pytest.param(A.MLPAdapter, (4, 4), {"seed": 1.5}, "seed must be an integer", id="mlp-float-seed"),
    pytest.param(A.BinarySDM, (4, 4, 0), {}, "r must be a positive integer", id="binary-sdm-no-neurons"),
    pytest.param(A.BinarySDM, (4, 4, 8), {"radius": 99}, "must lie in \\[0, n\\]", id="binary-sdm-radius-above-n"),
    pytest.param(A.BinarySDM, (4, 4, 8), {"radius": -1}, "radius must be >= 0", id="binary-sdm-negative-radius"),
    pytest.param(A.BinarySDM, (4, 4, 8), {"active": math.nan}, "active must be finite", id="binary-sdm-nan-active"),
    pytest.param(A.ContinuousSDM, (4, 4), {"radius": 2.5}, "radius must be an integer", id="continuous-sdm-float"),
    pytest.param(A.ContinuousSDM, (4, 4), {"radius": True}, "radius must be an integer", id="continuous-sdm-bool"),
    pytest.param(A.ClassicalHopfield, (4, 4), {"steps": True}, "steps must be an integer", id="hopfield-bool-steps"),
    pytest.param(A.ClassicalHopfield, (4, 4), {"steps": -1}, "steps must be >= 0", id="hopfield-negative-steps"),
    pytest.param(A.ModernHopfield, (4, 4), {"beta": 0.0}, "beta must be > 0", id="modern-hopfield-zero-beta"),
    pytest.param(A.ModernHopfield, (4, 4), {"beta": math.inf}, "beta must be finite", id="modern-hopfield-inf-beta"),
    pytest.param(A.sdm_radius, (0, 8), {}, "n must be a positive integer", id="sdm-radius-zero-n"),
    pytest.param(A.sdm_radius, (8, True), {}, "r must be a positive integer", id="sdm-radius-bool-r"),
    pytest.param(A.sdm_radius, (8, 4, 0.0), {}, "active must be > 0", id="sdm-radius-zero-active"),
    pytest.param(A.make_memory, ("hopfield_net", 4), {}, "unknown memory", id="make-memory-unknown"),
    pytest.param(A.make_memory, ("softmax_cache", 0), {}, "positive integer", id="make-memory-zero-width"),
    pytest.param(A.MatrixAdapter(4, 4).write, (FACTS.keys * math.nan, FACTS.targets), {}, "non-finite",
                 id="write-nan-keys"),
    pytest.param(A.MatrixAdapter(4, 4).write, (FACTS.keys[:, :3], FACTS.targets), {}, "d_k = 4 columns",
                 id="write-wrong-width"),
    pytest.param(A.MatrixAdapter(4, 4).write, (FACTS.keys, FACTS.targets[:3]), {}, "same number of rows",
                 id="write-row-mismatch"),
    pytest.param(WRITTEN.read, (FACTS.keys * math.nan,), {}, "non-finite", id="read-nan-queries"),
    # harness
    pytest.param(H.table_facts, (4, 8, "spiked"), {}, "unknown geometry", id="table-facts-geometry"),
    pytest.param(H.table_facts, (4, 8), {"seed": True}, "seed must be an integer", id="table-facts-bool-seed"),
    pytest.param(H.table_facts, (4, 8), {"beta": math.nan}, "beta must be finite", id="table-facts-nan-beta"),
    pytest.param(H.table_facts, (4, 8, "anisotropic"), {"beta": -1.0}, "beta must be > -1",
                 id="table-facts-beta-minus-one"),
    pytest.param(H.first_facts, ("facts", 2), {}, "facts must be a FactSet", id="first-facts-not-facts"),
    pytest.param(H.first_facts, (FACTS, True), {}, "F must be an integer", id="first-facts-bool"),
    pytest.param(H.recall, ("memory", FACTS), {}, "memory must be an AssociativeMemory", id="recall-not-memory"),
    pytest.param(H.recall, (OuterProductMemory(4, 4, device="cpu"), FACTS), {},
                 "got OuterProductMemory; wrap a memory of the library in its adapter",
                 id="recall-unwrapped-outer-product"),
    pytest.param(H.recall, (WRITTEN, "facts"), {}, "facts must be a FactSet", id="recall-not-facts"),
    pytest.param(H.read_error, (WRITTEN, "facts"), {}, "facts must be a FactSet", id="read-error-not-facts"),
    pytest.param(H.read_error, (None, FACTS), {}, "memory must be an AssociativeMemory", id="read-error-none"),
    pytest.param(H.noisy_recall, (WRITTEN, FACTS, True, 0), {}, "eps must be a real", id="noisy-recall-bool-eps"),
    pytest.param(H.noisy_recall, (WRITTEN, FACTS, -1.0, 0), {}, "eps must be >= 0", id="noisy-recall-negative-eps"),
    pytest.param(H.noise_seed, (1.5,), {}, "seed must be an integer", id="noise-seed-float"),
    pytest.param(H.timed_recall, (3, FACTS), {}, "build must be a callable", id="timed-recall-not-callable"),
    pytest.param(H.timed_recall, (lambda: "m", FACTS), {}, "build\\(\\) must return an AssociativeMemory",
                 id="timed-recall-builds-a-str"),
    pytest.param(H.capacity, (3, FACTS), {}, "build must be a callable", id="capacity-not-callable"),
    pytest.param(H.capacity, (BUILD, "facts"), {}, "facts must be a FactSet", id="capacity-not-facts"),
    pytest.param(H.capacity, (BUILD, FACTS), {"verify": -1}, "verify must be an integer >= 0",
                 id="capacity-negative-verify"),
    pytest.param(H.pairs_at_error, (BUILD, FACTS, True), {}, "eps must be a real", id="pairs-at-error-bool-eps"),
    pytest.param(H.pairs_at_error, (3, FACTS, 0.1), {}, "build must be a callable", id="pairs-at-error-not-callable"),
    pytest.param(H.facts_at_budget, (pd.DataFrame(), math.nan, 4), {}, "budget must be finite",
                 id="facts-at-budget-nan"),
    pytest.param(H.facts_at_budget, (pd.DataFrame(), True, 4), {}, "budget must be a real",
                 id="facts-at-budget-bool"),
    pytest.param(H.bits_per_parameter, (True, 10), {}, "F must hold integers", id="bits-per-parameter-bool"),
    pytest.param(H.bits_per_parameter, ("8", 10), {}, "F must hold integers", id="bits-per-parameter-str"),
    # table sweeps
    pytest.param(TS.noise_column, (math.nan,), {}, "eps must be finite", id="noise-column-nan"),
    pytest.param(TS.noise_column, ("0.1",), {}, "eps must be a real", id="noise-column-str"),
    pytest.param(TS.noise_column, (-0.1,), {}, "eps must be >= 0", id="noise-column-negative"),
    pytest.param(TS.noise_column, (0.1,), {"at_load": "no"}, "at_load must be True or False",
                 id="noise-column-str-flag"),
    pytest.param(TS.noise_load, ("config",), {}, "config must be a TableConfig", id="noise-load-not-config"),
    pytest.param(TS.table_points, ({"d": 4},), {}, "config must be a TableConfig", id="table-points-dict"),
    pytest.param(TS.table_point, ({"d": 4}, {}, "cpu"), {}, "config must be a TableConfig", id="table-point-dict"),
    pytest.param(TS.sdm_neurons, (0, 2), {}, "d must be >= 1", id="sdm-neurons-zero-d"),
    pytest.param(TS.sdm_neurons, (8, True), {}, "count must be an integer", id="sdm-neurons-bool-count"),
    pytest.param(TS.load_table_results, ((),), {}, "presets must name at least one", id="load-table-no-preset"),
    # issue 31, closing audit: the names that had no row (the trained-memory helpers came with issue 26)
    pytest.param(TS.TableConfig, (1, 8, (4,), (8,)), {}, "d must be >= 2", id="table-config-narrow"),
    pytest.param(TS.TableConfig, (4, 8, (4,), (8,)), {"gd_trainings": 0}, "gd_trainings must be >= 1",
                 id="table-config-no-training"),
    pytest.param(TS.TableConfig, (4, 8, (4,), (8,)), {"memories": ("hopfeld",)}, "unknown memories",
                 id="table-config-unknown-memory"),
    pytest.param(TS.gd_agreement_rules, ("quick",), {}, "config must be a TableConfig", id="gd-rules-preset-name"),
    pytest.param(TS.median_training, (TRAINED.drop(columns="F_star"),), {}, "missing columns \\['F_star'\\]",
                 id="median-training-no-capacity"),
    pytest.param(TS.median_training, ("rows",), {}, "must hold memory_table rows", id="median-training-str"),
    pytest.param(TS.training_views, (TRAINED,), {}, "a trained point stores 1 of the 2 trainings",
                 id="training-views-missing-training"),
    pytest.param(A.MemoryInfo, ("x", "IV"), {}, "part must be 'I', 'II' or 'III'", id="memory-info-part"),
    pytest.param(A.MemoryInfo, ("x", "I"), {"size": "d"}, "size must be None, 'm' or 'r'", id="memory-info-size"),
    pytest.param(A.MemoryInfo, ("", "I"), {}, "label must be a non-empty str", id="memory-info-no-label"),
    pytest.param(A.MemoryInfo, ("x", "I"), {"trained": 1}, "trained must be True or False",
                 id="memory-info-int-flag"),
]


@pytest.mark.parametrize(("func", "args", "kwargs", "match"), BAD)
def test_bad_input_raises_a_clear_value_error(func, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(*args, **kwargs)


def test_a_point_outside_the_grid_is_refused():
    from assocmem.sweeps import get_sweep
    config = get_sweep("memory_table").presets["quick"]
    with pytest.raises(ValueError, match="point must be one of table_points"):
        TS.table_point(config, {"memory": "nope", "geometry": "isotropic", "size": None}, "cpu")


def test_edge_cases_with_a_right_value():
    assert TS.noise_column(0.1) == "noise_0.1" and TS.noise_column(0, at_load=True) == "load_noise_0"
    assert H.first_facts(FACTS, 8).num_facts == 8
    assert H.recall(WRITTEN, FACTS) == H.recall(WRITTEN, FACTS, FACTS.keys.clone())
