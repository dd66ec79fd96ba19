"""Bad and edge-case input to the public functions of Part II (``assocmem.mlps``).

In the style of numpy's and scipy's edge-case tests: a table of ``(callable, args, kwargs, match)``
rows, each a documented contract ("raises ValueError naming the argument") checked with
``pytest.raises(ValueError, match=...)``, then the edge cases whose answer is a value, then the
checks that a call that raises leaves its inputs exactly as they were.

The families covered: non-finite features, keys, targets and weights (refused before any work,
never a NaN readout); results of finite input that overflow (reported as overflow, never as
"singular" or as a silent ``inf``); booleans and strings where a real number is documented
(``beta``, ``ridge``, ``eps``, ``lr``, tolerances, constants: :func:`assocmem._checks.as_real`);
float16 / bfloat16 tensors and dtypes (:mod:`assocmem.dtypes`); empty fact sets and ``F = 0``
feature matrices; shape errors; singular systems without a ridge; non-integer sizes that used
to be truncated.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.mlps import capacity_sweeps as CS
from assocmem.mlps import counting as C
from assocmem.mlps import editing as ED
from assocmem.mlps import editing_sweeps as ESW
from assocmem.mlps import hebbian_theory as HT
from assocmem.mlps import margin_sweeps as MS
from assocmem.mlps import margins as M
from assocmem.mlps import transformer as TR
from assocmem.mlps import transformer_sweeps as TSW
from assocmem.mlps.facts import FactSet, make_fact_set, random_direction, spike, with_spike
from assocmem.mlps import lm_embeddings as LME
from assocmem.mlps.lm_embeddings import hf as HF
from assocmem.mlps.mlp import (
    BilinearMLP,
    ExactK2Memory,
    GatedReLUMLP,
    bilinear_features,
    data_dependent_mlp,
    exact_k2_memory,
    hebbian_mlp,
    hebbian_readout,
    ntk_mlp,
    solve_factor,
    solve_factor_reference,
    train_mlp,
)

F64 = torch.float64
NAN, INF = math.nan, math.inf

FACTS = make_fact_set(16, 8, seed=0)
UNTIED = make_fact_set(16, 8, seed=1, tied=False)
KEYS = FACTS.keys
PHI = torch.randn(12, 5, dtype=F64, generator=torch.Generator().manual_seed(0))  # (F, m)
TARGETS = torch.randn(12, 3, dtype=F64, generator=torch.Generator().manual_seed(1))  # (F, d_c)
Y = torch.randn(4, 8, dtype=F64, generator=torch.Generator().manual_seed(2))  # (m, d)
W = torch.randn(8, 4, dtype=F64, generator=torch.Generator().manual_seed(3))  # (d_c, m)
GRAM = C.hebbian_gram(UNTIED.keys, "k2")
MODEL = hebbian_mlp(UNTIED, 8)
STATS = M.geometry_statistics(GRAM, UNTIED)
SIGMA = HT.feature_covariance(PHI)


# the SSFR Transformer (assocmem.mlps.transformer): F = 6, V_J = 2, J = 2, d = 8
SSFR = TR.SSFRTask(6, 2, 2)
SSFR_E = TR.embedding_table(SSFR, 8, seed=0)
SSFR_CFG = TR.TransformerConfig(d=8, device="cpu")
SSFR_MODEL = TR.SSFRTransformer(SSFR_CFG, SSFR_E, task=SSFR)
SSFR_TRAIN = TR.TrainConfig(steps=1, batch_size=2)
NARROW_MLP = hebbian_mlp(make_fact_set(6, 6, seed=0), 4)  # maps R^6 -> R^6, not R^8
SHORT_MLP = BilinearMLP(torch.ones(4, 8, dtype=F64), torch.ones(4, 8, dtype=F64), torch.ones(5, 4, dtype=F64))
SSFR_MAP = TR.fact_map(SSFR, seed=1)
SSFR_FACTS = TR.fact_set(SSFR_E, SSFR, SSFR_MAP)
SSFR_TOKENS = TR.ssfr_eval_batch(SSFR, SSFR_MAP, 1, seed=0).tokens  # (6, 6): valid SSFR sequences
X8 = torch.randn(20, 8, dtype=F64, generator=torch.Generator().manual_seed(5))  # captured pairs' rows
LOGITS, LABELS = torch.randn(2, 5, dtype=F64, generator=torch.Generator().manual_seed(6)), torch.tensor([0, 1])


class _NanMLP(torch.nn.Module):
    """Maps R^8 -> R^8 but outputs NaN: a broken MLP that must not yield an accuracy."""

    def forward(self, x):
        return x * math.nan


def _with(x: torch.Tensor, value: float, index=(0, 0)) -> torch.Tensor:
    out = x.clone()
    out[index] = value
    return out


PHI_NAN, PHI_INF = _with(PHI, NAN), _with(PHI, INF)

# (callable, args, kwargs, match): each must raise ValueError whose message matches `match`
# (the argument's name, or what overflowed).
EDIT_CORPUS = ED.build_corpus(ED.generate_book_facts(6, seed=0))
EDIT_MODEL = ED.EditingLM(ED.EditingLMConfig(vocab_size=EDIT_CORPUS.vocab_size, d=8, qk_hidden=4, aux_rank=2,
                                             router_hidden=4, dtype=F64),
                          ED.kaiming_embedding(EDIT_CORPUS.vocab_size, 8, dtype=F64),
                          ED.build_fact_expert("data_dependent", ED.expert_fact_set(
                              ED.kaiming_embedding(EDIT_CORPUS.vocab_size, 8, dtype=F64), EDIT_CORPUS), 16))

BOOK_FACTS = ED.generate_book_facts(6, seed=0)
EDIT_E = ED.kaiming_embedding(EDIT_CORPUS.vocab_size, 8, dtype=F64)
EDIT_FACTS = ED.expert_fact_set(EDIT_E, EDIT_CORPUS)
EDIT_SEQS = ED.training_sequences(EDIT_CORPUS)

EDIT_BILINEAR = ED.EditingLM(ED.EditingLMConfig(vocab_size=EDIT_CORPUS.vocab_size, d=8, dtype=F64),
                             ED.kaiming_embedding(EDIT_CORPUS.vocab_size, 8, dtype=F64),
                             BilinearMLP(Y[:, :8], Y[:, :8], W))  # a BilinearMLP expert: what the editors edit


BAD = [
    # --- non-finite features / keys / targets: refused, never a NaN readout -----------------
    pytest.param(hebbian_readout, (PHI_NAN, TARGETS, "none"), {}, "Phi contains non-finite", id="readout-none-nan"),
    pytest.param(hebbian_readout, (PHI_INF, TARGETS, "diag"), {}, "Phi contains non-finite", id="readout-diag-inf"),
    pytest.param(hebbian_readout, (PHI_NAN, TARGETS, "full"), {}, "Phi contains non-finite", id="readout-primal-nan"),
    pytest.param(hebbian_readout, (PHI_INF, TARGETS, "full"), {"branch": "dual"}, "Phi contains non-finite",
                 id="readout-dual-inf"),
    pytest.param(hebbian_readout, (PHI, _with(TARGETS, NAN), "full"), {}, "targets contains non-finite",
                 id="readout-targets-nan"),
    pytest.param(solve_factor, (_with(KEYS, NAN), Y, W, FACTS.targets), {}, "keys contains non-finite",
                 id="solve-factor-keys-nan"),
    pytest.param(solve_factor, (KEYS, _with(Y, INF), W, FACTS.targets), {}, "fixed contains non-finite",
                 id="solve-factor-fixed-inf"),
    pytest.param(solve_factor, (KEYS, Y, _with(W, NAN), FACTS.targets), {}, "readout contains non-finite",
                 id="solve-factor-readout-nan"),
    pytest.param(solve_factor, (KEYS, Y, W, FACTS.targets), {"x0": torch.full((4, 8), NAN, dtype=F64)},
                 "x0 contains non-finite", id="solve-factor-x0-nan"),
    pytest.param(solve_factor, (KEYS, Y, W, FACTS.targets), {"metric": torch.full((8, 8), NAN, dtype=F64)},
                 "metric contains non-finite", id="solve-factor-metric-nan"),
    pytest.param(solve_factor_reference, (_with(KEYS, NAN), Y[:2], W[:, :2], FACTS.targets), {},
                 "keys contains non-finite", id="solve-factor-reference-nan"),
    pytest.param(M.gram_from_features, (PHI_NAN,), {}, "features must be finite", id="margins-gram-nan"),
    pytest.param(M.hebbian_readout, (GRAM, _with(UNTIED.targets, INF)), {}, "codes must be finite",
                 id="margins-readout-inf"),
    pytest.param(bilinear_features, (_with(KEYS, NAN), Y, Y), {}, "keys contains non-finite", id="features-nan"),
    pytest.param(BilinearMLP, (_with(Y, NAN), Y, W), {}, "A contains non-finite", id="bilinear-weights-nan"),
    pytest.param(ExactK2Memory, (_with(KEYS, INF), FACTS.targets), {}, "keys contains non-finite",
                 id="exact-k2-keys-inf"),
    pytest.param(MODEL.features, (_with(UNTIED.keys, NAN),), {}, "x contains non-finite", id="mlp-features-nan"),
    pytest.param(M.perturb_queries, (_with(KEYS, NAN), 0.1), {}, "keys must be finite", id="perturb-keys-nan"),
    pytest.param(HT.hebbian_rewrite, (HT.gated_mlp(4, 6), _with(HT.random_unit_inputs(20, 4), NAN)), {},
                 "stored contains non-finite", id="rewrite-stored-nan"),
    pytest.param(HT.loglog_fit, ([4, 8, 16], [1.0, 0.7, 0.5], [0.1, NAN, 0.1]), {}, "se_log_y must be finite",
                 id="loglog-se-nan"),
    pytest.param(C.capacity_heuristic, (NAN,), {}, "d must be finite", id="capacity-heuristic-nan"),
    pytest.param(MS.log2_slope, ([32, 64], [1, None]), {}, "y must be finite", id="log2-slope-none"),
    # --- finite input whose result overflows: an overflow error, not "singular" or inf --------
    pytest.param(hebbian_readout, (PHI * 1e160, TARGETS, "full"), {}, "Phi\\^T Phi overflows",
                 id="readout-primal-gram-overflow"),
    pytest.param(hebbian_readout, (PHI * 1e160, TARGETS, "full"), {"branch": "dual"}, "Phi Phi\\^T overflows",
                 id="readout-dual-gram-overflow"),
    pytest.param(hebbian_readout, (PHI * 1e160, TARGETS, "diag"), {}, "diag\\(Sigma\\).*overflows",
                 id="readout-diag-overflow"),
    pytest.param(hebbian_readout, (PHI * 1e300, TARGETS * 1e300, "none"), {}, "readout.*overflows",
                 id="readout-none-overflow"),
    pytest.param(M.gram_from_features, (KEYS * 1e200,), {}, "Gram matrix of the features overflows",
                 id="margins-gram-overflow"),
    pytest.param(M.hebbian_readout, (GRAM * 1e200, UNTIED.targets * 1e200), {}, "Hebbian reads overflows",
                 id="margins-readout-overflow"),
    pytest.param(M.score_margins, ([[1e308, 1e308], [1e308, -1e308]], [0, 1]), {}, "margins overflows",
                 id="score-margins-overflow"),
    pytest.param(M.geometry_statistics, (GRAM * 1e300, UNTIED), {}, "overflows float64", id="geometry-overflow"),
    pytest.param(spike, (torch.full((2, 8), 1e307, dtype=F64), 10.0, random_direction(8)), {},
                 "norm of a spiked row overflows", id="spike-overflow"),
    pytest.param(MODEL.float().features, (UNTIED.keys * 1e300,), {}, "x overflows torch.float32", id="mlp-cast-overflow"),
    pytest.param(M.perturb_queries, (KEYS.float(), 1e39), {}, "noisy keys overflows torch.float32",
                 id="perturb-cast-overflow"),
    pytest.param(FactSet(KEYS * 1e300, FACTS.values, FACTS.mapping, unit_norm=False).to, (), {"dtype": torch.float32},
                 "keys overflows torch.float32", id="factset-to-overflow"),
    pytest.param(solve_factor, (KEYS, Y, W, FACTS.targets), {"metric": -torch.eye(8, dtype=F64)},
                 "conjugate gradients broke down", id="solve-factor-indefinite-metric"),
    pytest.param(train_mlp, (FACTS, 4), {"epochs": 20, "lr": 1e30, "device": "cpu", "dtype": torch.float32},
                 "training diverged",
                 id="train-diverges"),
    # --- a bool or a string where a real number is documented ---------------------------------
    pytest.param(spike, (KEYS, True, random_direction(8)), {}, "beta must be a real number", id="spike-beta-bool"),
    pytest.param(spike, (KEYS, "1.5", random_direction(8)), {}, "beta must be a real number", id="spike-beta-str"),
    pytest.param(with_spike, (FACTS, True), {}, "beta must be a real number", id="with-spike-beta-bool"),
    pytest.param(with_spike, (FACTS, "0.5"), {}, "beta must be a real number", id="with-spike-beta-str"),
    pytest.param(spike, (KEYS, -1.0, random_direction(8)), {}, "beta must be > -1", id="spike-beta-minus-one"),
    pytest.param(hebbian_mlp, (FACTS, 8, "full"), {"ridge": True}, "ridge must be a real number",
                 id="hebbian-ridge-bool"),
    pytest.param(hebbian_mlp, (FACTS, 8, "full"), {"ridge": "1e-6"}, "ridge must be a real number",
                 id="hebbian-ridge-str"),
    pytest.param(hebbian_readout, (PHI, TARGETS), {"ridge": True}, "ridge must be a real number",
                 id="readout-ridge-bool"),
    pytest.param(hebbian_readout, (PHI, TARGETS), {"ridge": -1.0}, "ridge must be >= 0", id="readout-ridge-negative"),
    pytest.param(data_dependent_mlp, (FACTS, 4), {"ridge": True}, "ridge must be a real number",
                 id="data-dependent-ridge-bool"),
    pytest.param(data_dependent_mlp, (FACTS, 4), {"cg_tol": "0.1"}, "cg_tol must be a real number",
                 id="data-dependent-tol-str"),
    pytest.param(solve_factor, (KEYS, Y, W, FACTS.targets), {"tol": True}, "tol must be a real number",
                 id="solve-factor-tol-bool"),
    pytest.param(train_mlp, (FACTS, 4), {"epochs": 2, "lr": True, "device": "cpu"}, "lr must be a real number",
                 id="train-lr-bool"),
    pytest.param(train_mlp, (FACTS, 4), {"epochs": 2, "tol": "0", "device": "cpu"}, "tol must be a real number",
                 id="train-tol-str"),
    pytest.param(M.perturb_queries, (KEYS, True), {}, "eps must be a real number", id="perturb-eps-bool"),
    pytest.param(M.perturb_queries, (KEYS, "0.1"), {}, "eps must be a real number", id="perturb-eps-str"),
    pytest.param(M.noisy_fact_margins, (MODEL, UNTIED, True), {}, "eps must be a real number",
                 id="noisy-margins-eps-bool"),
    pytest.param(M.log_term, (10,), {"C_L": True}, "C_L must be a real number", id="log-term-cl-bool"),
    pytest.param(M.log_term, (10,), {"delta": "0.5"}, "delta must be a real number", id="log-term-delta-str"),
    pytest.param(M.isotropic_bound, (10, 64, 16), {"C_s": True}, "C_s must be a real number",
                 id="isotropic-cs-bool"),
    pytest.param(M.isotropic_bound, (10, 64, 16), {"C_x": NAN}, "C_x must be finite", id="isotropic-cx-nan"),
    pytest.param(M.isotropic_bound, ([True, 2], 64, 16), {}, "F must hold real numbers", id="isotropic-F-bools"),
    pytest.param(M.fit_theory_curve, ("isotropic", [0.5, 0.4, 0.3], {"F": [10, 20, 40], "m": 64, "d": 16}),
                 {"free": ("C_s", "C_x"), "fixed": {"C_L": True}}, "fixed\\['C_L'\\] must be a real number",
                 id="fit-fixed-bool"),
    pytest.param(M.s_sig, ("1.0", 0.5, 10, 64), {}, "K_min\\^diag must be a real number", id="s-sig-str"),
    pytest.param(M.p_key, (True, 10, 64), {}, "E_K must be a real number", id="p-key-bool"),
    pytest.param(C.min_parameters_bound, (10, 10, True), {}, "bits must be a positive number",
                 id="counting-bits-bool"),
    pytest.param(C.capacity_heuristic, ("32",), {}, "d must be a real number", id="capacity-heuristic-str"),
    pytest.param(C.power_law_fit, ([True, 2, 3], [1, 2, 3]), {}, "x must hold real numbers",
                 id="power-law-bools"),
    pytest.param(HT.pair_with_overlap, (4, True), {}, "rho must be a real number", id="overlap-rho-bool"),
    pytest.param(HT.bonferroni_z, (3, "0.1"), {}, "alpha must be a real number", id="bonferroni-alpha-str"),
    pytest.param(CS.num_facts, (True, 8), {}, "alpha must be a real number", id="num-facts-alpha-bool"),
    pytest.param(CS.CapacityConfig, (), {"dims": (8,), "alphas": (0.5,), "beta": True}, "beta must be a real number",
                 id="capacity-config-beta-bool"),
    pytest.param(MS.SpikeConfig, ("keys", 8, 8, 8, "3", 3, 1), {}, "beta_max must be a real number",
                 id="spike-config-beta-str"),
    pytest.param(MS.theorem_b6_bits, ({"A": torch.ones(2, 2)}, "1"), {}, "gamma0 must be a real number",
                 id="theorem-b6-gamma-str"),
    pytest.param(M.min_bits_for_positive_margin, (lambda *a: True, [torch.ones(2)]), {}, "non-real margin",
                 id="bits-margin-bool"),
    # --- float16 / bfloat16: refused with the dtype policy's message --------------------------
    pytest.param(make_fact_set, (4, 4), {"dtype": torch.float16}, "torch.float16 is not supported",
                 id="make-facts-f16"),
    pytest.param(make_fact_set, (4, 4), {"dtype": torch.bfloat16}, "torch.bfloat16 is not supported",
                 id="make-facts-bf16"),
    pytest.param(make_fact_set, (4, 4), {"dtype": "float32"}, "dtype must be a torch dtype", id="make-facts-str"),
    pytest.param(random_direction, (4,), {"dtype": torch.int64}, "dtype must be torch.float32 or torch.float64",
                 id="random-direction-int"),
    pytest.param(FactSet, (KEYS.half(), FACTS.values.half(), FACTS.mapping), {}, "keys dtype torch.float16",
                 id="factset-f16"),
    pytest.param(FACTS.to, (), {"dtype": torch.bfloat16}, "torch.bfloat16 is not supported", id="factset-to-bf16"),
    pytest.param(spike, (KEYS.half(), 1.0, random_direction(8)), {}, "embeddings dtype torch.float16",
                 id="spike-f16"),
    pytest.param(hebbian_readout, (PHI.half(), TARGETS), {}, "Phi dtype torch.float16", id="readout-f16"),
    pytest.param(hebbian_readout, (PHI.bfloat16(), TARGETS), {}, "Phi dtype torch.bfloat16", id="readout-bf16"),
    pytest.param(solve_factor, (KEYS.half(), Y, W, FACTS.targets), {}, "keys dtype torch.float16",
                 id="solve-factor-f16"),
    pytest.param(train_mlp, (FACTS, 4), {"epochs": 2, "dtype": torch.float16, "device": "cpu"},
                 "torch.float16 is not supported", id="train-f16"),
    pytest.param(bilinear_features, (KEYS.bfloat16(), Y.bfloat16(), Y.bfloat16()), {}, "keys dtype torch.bfloat16",
                 id="features-bf16"),
    pytest.param(MODEL.features, (UNTIED.keys.half(),), {}, "x dtype torch.float16", id="mlp-features-f16"),
    pytest.param(M.gram_from_features, (KEYS.numpy().astype(np.float16),), {}, "features dtype torch.float16",
                 id="margins-gram-numpy-f16"),
    pytest.param(M.quantize, (torch.ones(3).half(), 4), {}, "tensor dtype torch.float16", id="quantize-f16"),
    pytest.param(M.fact_margins, (GRAM.half(), UNTIED), {}, "gram dtype torch.float16", id="fact-margins-f16"),
    pytest.param(HT.feature_covariance, (PHI.half(),), {}, "Phi dtype torch.float16", id="covariance-f16"),
    # --- empty fact sets, F = 0, shapes -------------------------------------------------------
    pytest.param(FactSet, (KEYS[:0], FACTS.values, FACTS.mapping[:0]), {}, "at least one fact", id="factset-empty"),
    pytest.param(hebbian_readout, (PHI[:0], TARGETS[:0], "none"), {}, "Phi must have at least 1 row",
                 id="readout-F0"),
    pytest.param(hebbian_readout, (PHI.tolist(), TARGETS), {}, "Phi must be a torch.Tensor", id="readout-list"),
    pytest.param(hebbian_readout, (PHI, TARGETS[:5]), {}, "need Phi \\(F, m\\) and targets", id="readout-rows"),
    pytest.param(solve_factor, (KEYS[:0], Y, W, FACTS.targets[:0]), {}, "keys must have at least 1 row",
                 id="solve-factor-F0"),
    pytest.param(solve_factor, (KEYS, Y, W, FACTS.targets), {"x0": torch.zeros(3, 8, dtype=F64)},
                 "x0 must have the shape of the free factor \\(4, 8\\)", id="solve-factor-x0-shape"),
    pytest.param(bilinear_features, (KEYS, Y[:, :3], Y), {}, "A, G of shape \\(m, d\\)", id="features-shapes"),
    pytest.param(BilinearMLP, (Y, Y, W.float()), {}, "must share one dtype", id="bilinear-mixed-dtypes"),
    pytest.param(GatedReLUMLP, (Y, Y, W[:, :3]), {}, "need W_gate, W_up", id="gated-relu-shapes"),
    pytest.param(HT.feature_covariance, (PHI[:0],), {}, "at least one row", id="covariance-F0"),
    pytest.param(HT.overlap_pairs, (4, []), {}, "rhos must hold at least one", id="overlap-pairs-empty"),
    pytest.param(HT.kernel_energy, (SIGMA, torch.eye(3, dtype=F64), 12), {}, "M must have shape \\(\\.\\.\\., 5, 5\\)",
                 id="kernel-energy-shape"),
    pytest.param(M.covariates_from_statistics, ([],), {}, "non-empty sequence", id="covariates-empty"),
    # --- singular systems: a clear error (the ridge is the documented way out) -----------------
    pytest.param(hebbian_mlp, (make_fact_set(64, 4, seed=0), 20, "full"), {"ridge": 0}, "singular",
                 id="hebbian-m-above-quadratic-forms"),
    pytest.param(hebbian_readout, (torch.zeros(12, 5, dtype=F64), TARGETS, "diag"), {"ridge": 0},
                 "zero feature variance", id="readout-diag-zero-feature"),
    pytest.param(HT.preconditioner_experiment,
                 (torch.randn(10, 2, dtype=F64, generator=torch.Generator().manual_seed(0))
                  @ torch.randn(2, 4, dtype=F64, generator=torch.Generator().manual_seed(1)), 2), {},
                 "Sigma must be positive definite", id="preconditioner-rank-deficient"),
    pytest.param(HT.random_preconditioners, (torch.zeros(4, 4, dtype=F64), 2), {}, "Sigma must be positive definite",
                 id="random-preconditioners-singular"),
    pytest.param(HT.normalise_preconditioner, (torch.zeros(5, 5, dtype=F64), SIGMA), {}, "tr\\(M Sigma\\) > 0",
                 id="normalise-zero-trace"),
    pytest.param(HT.welch_frobenius_bound, (torch.zeros(3, 3, dtype=F64),), {}, "positive diagonal",
                 id="welch-zero-diagonal"),
    pytest.param(HT.rewrite_errors,
                 (lambda z: torch.zeros(z.shape[0], 4, dtype=F64),
                  HT.hebbian_rewrite(HT.gated_mlp(4, 6), HT.random_unit_inputs(20, 4)), HT.random_unit_inputs(3, 4)),
                 {}, "all zero", id="rewrite-errors-zero-scale"),
    # --- flags that must be bools; sizes that used to be truncated -----------------------------
    pytest.param(make_fact_set, (4, 4), {"tied": "no"}, "tied must be True or False", id="make-facts-tied-str"),
    pytest.param(FactSet, (KEYS, FACTS.values, FACTS.mapping), {"unit_norm": "no"}, "unit_norm must be True or False",
                 id="factset-unit-norm-str"),
    pytest.param(hebbian_mlp, (FACTS, 8), {"require_unit_keys": "no"}, "require_unit_keys must be True or False",
                 id="hebbian-require-unit-str"),
    pytest.param(train_mlp, (FACTS, 4), {"epochs": 2, "stop_at_full_accuracy": "no", "device": "cpu"},
                 "stop_at_full_accuracy must be True or False", id="train-stop-str"),
    pytest.param(C.log2_num_fact_sets, (3, 5), {"injective": 1}, "injective must be True or False",
                 id="counting-injective-int"),
    pytest.param(C.hebbian_f_sweep, (8, [2.5]), {}, "num_facts entry must be an integer", id="f-sweep-F-float"),
    pytest.param(C.hebbian_capacity, (8.5,), {}, "d must be an integer", id="hebbian-capacity-d-float"),
    pytest.param(CS.accuracy_curve, (FACTS, "unwhitened", [2.5]), {}, "width must be an integer",
                 id="accuracy-curve-width-float"),
    pytest.param(M.covariates_from_statistics, ([STATS, STATS],), {"width": 2.5}, "width must be an integer",
                 id="covariates-width-float"),
    pytest.param(MS.sub_seeds, (2.5, 2), {}, "base must be an integer", id="sub-seeds-float"),
    pytest.param(MS.IsotropicConfig, ("sketch", "F", 8, None, None, 4, 16, 3, 1), {}, "m must be set",
                 id="isotropic-config-missing-m"),
    pytest.param(MS.NoisyConfig, (8, 8, 8, 0.0, 1.0, 3, 1), {}, "eps_lo must be > 0", id="noisy-config-eps-zero"),
    pytest.param(CS.build_memory, ("ntk", FACTS, 4), {"block_entries": True}, "block_entries must be a positive",
                 id="build-memory-block-bool"),
    # --- the SSFR task and Transformer (assocmem.mlps.transformer) -------------------------------
    pytest.param(TR.SSFRTask, (6, 2, -1), {}, "J must be >= 0", id="ssfr-negative-junk-length"),
    pytest.param(TR.SSFRTask, (6, 0, 2), {}, "V_J >= 1", id="ssfr-no-junk-vocab-with-junk"),
    pytest.param(TR.SSFRTask, (1, 2, 2), {}, "F >= 2", id="ssfr-one-fact"),
    pytest.param(TR.SSFRTransformer, (SSFR_CFG, SSFR_E, NARROW_MLP), {"task": SSFR}, "input width is 6",
                 id="transformer-mlp-input-width"),
    pytest.param(TR.SSFRTransformer, (SSFR_CFG, SSFR_E, SHORT_MLP), {"task": SSFR}, "must map R\\^d -> R\\^d",
                 id="transformer-mlp-output-width"),
    pytest.param(TR.inserted_mlp, (SSFR, SSFR_E, NARROW_MLP, torch.arange(6), SSFR_CFG, SSFR_TRAIN), {},
                 "input width is 6", id="inserted-mlp-width"),
    pytest.param(TR.SSFRTransformer, (SSFR_CFG, SSFR_E[:-1]), {"task": SSFR}, "vocab_size = F \\+ V_J \\+ 1 = 9",
                 id="transformer-embedding-rows"),
    pytest.param(TR.pretrained_attention, (SSFR, SSFR_E[:6], SSFR_CFG, SSFR_TRAIN), {}, "vocab_size",
                 id="pretrain-vocabulary-too-small-for-F"),
    pytest.param(TR.SSFRTransformer, (TR.TransformerConfig(d=6, device="cpu"), SSFR_E), {"task": SSFR},
                 "width must be d = 6", id="transformer-embedding-width"),
    pytest.param(TR.fact_set, (SSFR_E, SSFR, torch.zeros(6, dtype=torch.int64)), {}, "permutation",
                 id="ssfr-map-not-a-permutation"),
    pytest.param(TR.ssfr_eval_batch, (SSFR, torch.arange(5), 2), {}, "shape \\(F,\\)", id="ssfr-map-wrong-length"),
    pytest.param(SSFR_MODEL, (torch.tensor([[0, 9]]),), {}, "token ids must lie in \\[0, vocab_size\\)",
                 id="transformer-token-out-of-range"),
    pytest.param(SSFR_MODEL, (torch.tensor([[0.0, 8.0]]),), {}, "integer tensor", id="transformer-float-tokens"),
    pytest.param(TR.build_mlp, ("hopfield", FACTS, 4), {}, "valid methods", id="build-mlp-unknown-method"),
    pytest.param(TR.TrainConfig, (0, 4), {}, "steps must be a positive", id="train-config-zero-steps"),
    pytest.param(TR.noise_ceiling_bound, (0.0, 1.0, 8, 4), {}, "c0 must be > 0", id="noise-bound-zero-margin"),
    pytest.param(TSW.UsabilityConfig, (8, 8, 2, -1, (2, 4)), {}, "junk_length", id="usability-negative-junk"),
    pytest.param(TSW.UsabilityConfig, (8, 8, 2, 2, (4, 2)), {}, "increasing", id="usability-widths-unsorted"),
    pytest.param(TSW.NoiseConfig, (((8, 8),),), {"junk_lengths": (0,)}, "junk length", id="noise-zero-junk"),
    pytest.param(TSW.TransformerCapacityConfig, (8, (8,)), {"train_target": True}, "train_target",
                 id="transformer-capacity-bool-target"),
    pytest.param(TSW.sphere_perturbations, (KEYS, torch.full((16,), math.nan, dtype=F64), 1, 0), {}, "finite",
                 id="sphere-perturbations-nan-eps"),
    # review s4: silent wrong numbers and unclear errors in the transformer package
    pytest.param(TR.fact_adaptive_accuracy, (SSFR_MODEL, None, SSFR_MAP, 2), {}, "mlp_b must be the MLP",
                 id="fact-adaptive-none-mlp"),
    pytest.param(TR.ssfr_accuracy, (SSFR_MODEL.with_mlp(_NanMLP()), SSFR, SSFR_MAP, 2), {}, "logits are not finite",
                 id="ssfr-accuracy-nan-mlp"),
    pytest.param(SSFR_MODEL, (torch.zeros(2, 3, dtype=torch.long),), {}, "length 2 J \\+ 2 = 6",
                 id="transformer-wrong-sequence-length"),
    pytest.param(SSFR_MODEL, (SSFR_TOKENS[:, [0, 1, 2, 3, 4, 0]],), {}, "end with the query token",
                 id="transformer-no-query-token-last"),
    pytest.param(TR.build_mlp, ("gd_ce", SSFR_FACTS, 4), {"epochs": 20, "lr": 1e6}, "diverged",
                 id="build-mlp-gd-ce-diverges"),
    pytest.param(TR.TransformerConfig, (8.5,), {}, "d must be an integer", id="transformer-config-fractional-d"),
    pytest.param(TR.TrainConfig, (3, 4), {"betas": 0}, "betas must be a pair", id="train-config-betas-not-a-pair"),
    pytest.param(TR.TrainConfig, (3, 4), {"betas": (0.9, 1.0)}, "\\[0, 1\\)", id="train-config-beta-one"),
    pytest.param(TR.seed_stream, (0, -1), {}, "stream must be >= 0", id="seed-stream-negative-stream"),
    pytest.param(TR.seed_stream, (-1, 0), {}, "\\[0, 2\\^63\\)", id="seed-stream-negative-seed"),
    pytest.param(TR.local_lipschitz, (NARROW_MLP, torch.randn(2, 5, dtype=F64)), {}, "input width",
                 id="local-lipschitz-wrong-width"),
    pytest.param(SSFR_MODEL.with_mlp, (torch.nn.Linear(8, 5),), {}, "must map R\\^d -> R\\^d",
                 id="with-mlp-float32-wrong-width"),
    pytest.param(TR.SSFRTransformer, (SSFR_CFG, SSFR_E), {"task": SSFR, "seed": -1}, "\\[0, 2\\^63\\)",
                 id="transformer-negative-seed"),
    # one seed rule in the package: every function refuses what seed_stream refuses
    pytest.param(TR.embedding_table, (SSFR, 8), {"seed": -1}, "\\[0, 2\\^63\\)", id="embedding-negative-seed"),
    pytest.param(TR.embedding_table, (SSFR, 8), {"seed": 2**70}, "\\[0, 2\\^63\\)", id="embedding-huge-seed"),
    pytest.param(TR.fact_map, (SSFR,), {"seed": -1}, "\\[0, 2\\^63\\)", id="fact-map-negative-seed"),
    pytest.param(TR.ssfr_eval_batch, (SSFR, SSFR_MAP, 2), {"seed": -1}, "\\[0, 2\\^63\\)",
                 id="eval-batch-negative-seed"),
    pytest.param(TR.TrainConfig, (3, 4), {"seed": -1}, "\\[0, 2\\^63\\)", id="train-config-negative-seed"),
    # fact editing (issue 15): training, residuals, the sweep's config
    pytest.param(ED.LMTrainConfig, (3,), {"batch_size": 0}, "batch_size", id="lm-train-config-zero-batch"),
    pytest.param(ED.LMTrainConfig, (3,), {"lr": float("nan")}, "lr", id="lm-train-config-nan-lr"),
    pytest.param(ED.training_sequences, (EDIT_CORPUS,), {"templates": []}, "at least one template",
                 id="training-sequences-no-template"),
    pytest.param(ED.training_sequences, (EDIT_CORPUS,), {"facts": [0, 99]}, "\\[0, F\\)",
                 id="training-sequences-fact-out-of-range"),
    pytest.param(ED.ResidualConfig, (), {"lr": -0.05}, "lr", id="residual-config-negative-lr"),
    pytest.param(ED.ResidualConfig, (), {"clip_norm": float("inf")}, "clip_norm", id="residual-config-inf-clip"),
    pytest.param(ED.prompt_keys, (EDIT_MODEL, EDIT_CORPUS, torch.tensor([], dtype=torch.long)), {}, "non-empty",
                 id="prompt-keys-no-fact"),
    pytest.param(ED.prompt_keys, (EDIT_MODEL.with_fact_expert(torch.nn.Linear(8, 8)), EDIT_CORPUS,
                                  torch.tensor([0])), {}, "BilinearMLP", id="prompt-keys-not-bilinear"),
    pytest.param(ED.weight_edit, (EDIT_MODEL, "kn", None, None), {}, "unknown editor", id="weight-edit-unknown"),
    pytest.param(ED.EditEvaluation, (EDIT_MODEL, EDIT_CORPUS, ED.edit_assignment(5, 0.5)), {}, "EditAssignment",
                 id="edit-evaluation-wrong-size"),
    pytest.param(ESW.FactEditingConfig, (), {"num_facts": 64, "d": 8, "experts": (("gd_mse", 0),)}, "m must",
                 id="fact-editing-zero-width"),
    pytest.param(ESW.FactEditingConfig, (), {"num_facts": 64, "d": 8, "experts": (("gd_mse", 4),),
                                             "alphaedit_rel_tol": (-0.1,)}, "alphaedit_rel_tol",
                 id="fact-editing-negative-tolerance"),
    # --- the Hugging Face capture (assocmem.mlps.lm_embeddings.hf; the Qwen3 cases: its own tests) --
    pytest.param(HF.token_blocks, ([[0, 1]], 0, 2), {}, "seq_len", id="hf-token-blocks-zero-seq-len"),
    pytest.param(HF.token_blocks, ([[0, 1]], 2, 1.5), {}, "batch_size", id="hf-token-blocks-fractional-batch"),
    pytest.param(HF.token_blocks, ([[0, 1]], 2, 2), {"separator": -1}, "separator",
                 id="hf-token-blocks-negative-separator"),
    pytest.param(HF.token_blocks, ("raw text", 2, 2), {}, "token-id lists", id="hf-token-blocks-raw-string"),
    pytest.param(HF.capture_mlp_pairs, (torch.nn.Linear(2, 2), []), {}, "no decoder blocks",
                 id="hf-capture-not-a-decoder"),
    pytest.param(HF.mid_layer, (torch.nn.Linear(2, 2),), {}, "no decoder blocks", id="hf-mid-layer-not-a-decoder"),
    pytest.param(HF.load_causal_lm, (".",), {"dtype": torch.int64}, "dtype", id="hf-load-integer-dtype"),
    pytest.param(HF.load_causal_lm, (None,), {}, "path", id="hf-load-no-path"),
    # --- issue 31: every public function of transformer, editing and lm_embeddings ---------------
    # transformer.ssfr
    pytest.param(TR.identity_map, ("task",), {}, "task must be an SSFRTask", id="i31-identity-map-not-a-task"),
    pytest.param(TR.check_mapping, (torch.arange(6.0), SSFR), {}, "integer tensor", id="i31-check-mapping-float"),
    pytest.param(TR.check_mapping, (torch.ones(6, dtype=torch.bool), SSFR), {}, "integer tensor",
                 id="i31-check-mapping-bool"),
    pytest.param(TR.check_mapping, ([0, 1, 2, 3, 4, 5], SSFR), {}, "torch.Tensor", id="i31-check-mapping-list"),
    pytest.param(TR.check_embedding, (SSFR_E * math.nan, SSFR, 8), {}, "non-finite", id="i31-check-embedding-nan"),
    pytest.param(TR.check_embedding, (SSFR_E.half(), SSFR, 8), {}, "float32 or float64",
                 id="i31-check-embedding-float16"),
    pytest.param(TR.ssfr_batch, (SSFR, SSFR_MAP, True, torch.Generator()), {}, "batch_size must be a positive",
                 id="i31-ssfr-batch-bool-size"),
    pytest.param(TR.ssfr_batch, (SSFR, SSFR_MAP, 1.5, torch.Generator()), {}, "batch_size must be a positive",
                 id="i31-ssfr-batch-float-size"),
    pytest.param(TR.ssfr_batch, (SSFR, SSFR_MAP, 2, 3), {}, "CPU torch.Generator", id="i31-ssfr-batch-int-generator"),
    pytest.param(TR.check_seed, (True,), {}, "seed must be an integer", id="i31-check-seed-bool"),
    pytest.param(TR.check_seed, (2**63,), {}, "\\[0, 2\\^63\\)", id="i31-check-seed-too-large"),
    # transformer.model
    pytest.param(TR.CausalAttention, (0, True, 0.02, torch.Generator(), F64), {}, "d must be >= 1",
                 id="i31-attention-zero-width"),
    pytest.param(TR.CausalAttention, (4, True, math.nan, torch.Generator(), F64), {}, "init_std must be finite",
                 id="i31-attention-nan-std"),
    pytest.param(TR.CausalAttention, (4, True, -1.0, torch.Generator(), F64), {}, "init_std must be >= 0",
                 id="i31-attention-negative-std"),
    pytest.param(TR.CausalAttention, (4, "no", 0.02, torch.Generator(), F64), {}, "freeze_value_output must be True",
                 id="i31-attention-str-flag"),
    pytest.param(TR.CausalAttention, (4, True, 0.02, None, F64), {}, "CPU torch.Generator",
                 id="i31-attention-no-generator"),
    pytest.param(TR.CausalAttention, (4, True, 0.02, torch.Generator(), torch.float16), {}, "not supported",
                 id="i31-attention-float16"),
    pytest.param(TR.check_tokens, (torch.zeros(2, 6), SSFR), {}, "integer tensor", id="i31-check-tokens-float"),
    pytest.param(TR.check_tokens, ([[0] * 6], SSFR), {}, "torch.Tensor", id="i31-check-tokens-list"),
    # transformer.insertion, training, evaluation, noise
    pytest.param(TR.check_mlp_width, ("mlp", 8), {}, "mlp must be a torch.nn.Module", id="i31-check-mlp-width-str"),
    pytest.param(TR.check_mlp_width, (NARROW_MLP, 0), {}, "d must be >= 1", id="i31-check-mlp-width-zero"),
    pytest.param(TR.check_mlp_width, (NARROW_MLP, 8), {}, "must map R\\^d -> R\\^d", id="i31-check-mlp-width-wrong"),
    pytest.param(TR.train_attention, (SSFR_MODEL, TR.SSFRTask(6, 2, 3), SSFR_MAP, SSFR_TRAIN), {},
                 "is not the model's task", id="i31-train-attention-other-task"),
    pytest.param(TR.train_attention, (SSFR_MODEL, SSFR, SSFR_MAP, {"steps": 1}), {}, "config must be a TrainConfig",
                 id="i31-train-attention-dict-config"),
    pytest.param(TR.train_attention, (SSFR_MODEL, SSFR, SSFR_MAP.double(), SSFR_TRAIN), {}, "integer tensor",
                 id="i31-train-attention-float-map"),
    pytest.param(TR.ssfr_correct, (SSFR_MODEL, SSFR, SSFR_MAP, True), {}, "contexts_per_key must be a positive",
                 id="i31-ssfr-correct-bool-contexts"),
    pytest.param(TR.ssfr_correct, (SSFR_MODEL, SSFR, SSFR_MAP, 1, -1), {}, "\\[0, 2\\^63\\)",
                 id="i31-ssfr-correct-negative-seed"),
    pytest.param(TR.per_key_accuracy, (torch.tensor([[0, 2]]),), {}, "bool tensor of hits",
                 id="i31-per-key-accuracy-counts"),
    pytest.param(TR.per_key_accuracy, (torch.ones(3, 0, dtype=torch.bool),), {}, "F, C >= 1",
                 id="i31-per-key-accuracy-no-context"),
    pytest.param(TR.per_key_accuracy, ([[True]],), {}, "\\(F, C\\) tensor", id="i31-per-key-accuracy-list"),
    pytest.param(TR.per_key_diagnostic, (SSFR_MODEL, SSFR_MAP, 0), {}, "contexts_per_key", id="i31-diagnostic-zero-c"),
    pytest.param(TR.per_key_diagnostic, (SSFR_MODEL, torch.zeros(6, dtype=torch.long)), {}, "permutation",
                 id="i31-diagnostic-not-a-permutation"),
    pytest.param(TR.usable_key_fraction, ([True, False],), {}, "reals", id="i31-usable-fraction-bools"),
    pytest.param(TR.usable_key_fraction, ([1.0, math.nan],), {}, "finite", id="i31-usable-fraction-nan"),
    pytest.param(TR.usable_key_fraction, ([],), {}, "non-empty", id="i31-usable-fraction-empty"),
    pytest.param(TR.usable_key_fraction, ([1.0], "0"), {}, "threshold must be a real", id="i31-usable-threshold-str"),
    pytest.param(TR.attention_noise, ("m", SSFR), {}, "model must be an SSFRTransformer", id="i31-noise-not-a-model"),
    pytest.param(TR.noise_ceiling, (SSFR_MODEL, SSFR, True), {}, "contexts_per_key", id="i31-ceiling-bool-contexts"),
    pytest.param(TR.noise_ceiling, (SSFR_MODEL, TR.SSFRTask(6, 2, 3), 1), {}, "is not the model's task",
                 id="i31-ceiling-other-task"),
    # editing.data, model
    pytest.param(ED.BookFacts, ((1,), (2,)), {}, "non-empty strings", id="i31-book-facts-ints"),
    pytest.param(ED.BookFacts, ((), ()), {}, "F >= 1", id="i31-book-facts-empty"),
    pytest.param(ED.write_book_facts_csv, ("x", "x.csv"), {}, "facts must be a BookFacts", id="i31-write-csv-not-facts"),
    pytest.param(ED.load_book_facts_csv, (".",), {}, "is a folder", id="i31-load-csv-folder"),
    pytest.param(ED.load_book_facts_csv, ("x.csv",), {"max_facts": 0}, "max_facts", id="i31-load-csv-zero-max"),
    pytest.param(EDIT_CORPUS.sequences, (True,), {}, "template must be an integer", id="i31-sequences-bool-template"),
    pytest.param(EDIT_CORPUS.sequences, (0, [0.5]), {}, "whole numbers", id="i31-sequences-float-fact"),
    pytest.param(EDIT_CORPUS.sequences, (0, [True]), {}, "facts must hold integers", id="i31-sequences-bool-fact"),
    pytest.param(ED.rope, (torch.ones(1, 2, 3),), {}, "d even", id="i31-rope-odd-width"),
    pytest.param(ED.rope, (torch.ones(1, 2, 4), 0.0), {}, "base must be > 0", id="i31-rope-zero-base"),
    pytest.param(ED.rope, (torch.ones(1, 2, 4), math.nan), {}, "base must be finite", id="i31-rope-nan-base"),
    pytest.param(ED.rope, ([[1.0, 2.0]],), {}, "floating \\(B, T, d\\) tensor", id="i31-rope-list"),
    pytest.param(ED.check_lm_tokens, (torch.zeros(1, 3, dtype=torch.long), True), {}, "vocab_size must be an integer",
                 id="i31-lm-tokens-bool-vocab"),
    pytest.param(ED.check_lm_tokens, (torch.zeros(1, 3), 10), {}, "integer tensor", id="i31-lm-tokens-float"),
    pytest.param(ED.EditingLM, (ED.EditingLMConfig(vocab_size=EDIT_CORPUS.vocab_size, d=8),
                                ED.kaiming_embedding(EDIT_CORPUS.vocab_size, 8), torch.nn.Linear(8, 3)), {},
                 "must map R\\^d -> R\\^d", id="i31-editing-lm-wrong-expert"),
    # editing.training
    pytest.param(ED.train_lm, (EDIT_MODEL, "data", ED.LMTrainConfig(1)), {}, "data must be Sequences",
                 id="i31-train-lm-not-sequences"),
    pytest.param(ED.train_lm, (EDIT_MODEL, ED.training_sequences(EDIT_CORPUS), {"steps": 1}), {},
                 "config must be an LMTrainConfig", id="i31-train-lm-dict-config"),
    pytest.param(ED.author_logits, (EDIT_MODEL, EDIT_CORPUS, 0), {"batch": 1.5}, "batch must be a positive",
                 id="i31-author-logits-float-batch"),
    pytest.param(ED.author_logits, (EDIT_MODEL, "corpus", 0), {}, "corpus must be a BookCorpus",
                 id="i31-author-logits-not-a-corpus"),
    pytest.param(ED.lm_accuracy, (EDIT_MODEL, EDIT_CORPUS, 0, [0.5]), {}, "whole numbers", id="i31-lm-accuracy-float"),
    pytest.param(ED.lm_accuracy, (EDIT_MODEL, EDIT_CORPUS, 0, [0, 1], [0]), {}, "same length",
                 id="i31-lm-accuracy-lengths"),
    pytest.param(ED.expert_accuracy, ("e", EDIT_MODEL.embedding, EDIT_CORPUS), {}, "torch.nn.Module",
                 id="i31-expert-accuracy-not-a-module"),
    pytest.param(ED.base_model, ("c",), {"d": 8, "expert": "gd_mse", "m": 4, "train": ED.LMTrainConfig(1)},
                 "corpus must be a BookCorpus", id="i31-base-model-not-a-corpus"),
    pytest.param(ED.base_model, (EDIT_CORPUS,), {"d": 7, "expert": "gd_mse", "m": 4, "train": ED.LMTrainConfig(1)},
                 "d must be even", id="i31-base-model-odd-width"),
    pytest.param(ED.base_model, (EDIT_CORPUS,), {"d": 8, "expert": "x", "m": 4, "train": ED.LMTrainConfig(1)},
                 "unknown method", id="i31-base-model-unknown-expert"),
    pytest.param(ED.base_model, (EDIT_CORPUS,), {"d": 8, "expert": "gd_mse", "m": 4, "train": ED.LMTrainConfig(1),
                                                 "seed": 1.5}, "seed must be an integer", id="i31-base-model-float-seed"),
    pytest.param(ED.expert_seed, (True,), {}, "seed must be an integer", id="i31-expert-seed-bool"),
    pytest.param(ED.expert_seed, (-1,), {}, "\\[0, 2\\^63\\)", id="i31-expert-seed-negative"),
    # editing.swapping, editors, metrics
    pytest.param(ED.num_edits, (10, 1.5), {}, "fraction must be <= 1", id="i31-num-edits-fraction-above-one"),
    pytest.param(ED.num_edits, (10, True), {}, "fraction must be a real", id="i31-num-edits-bool-fraction"),
    pytest.param(ED.num_edits, (True, 0.5), {}, "num_facts must be a positive", id="i31-num-edits-bool-facts"),
    pytest.param(ED.mlp_swap, ("m", EDIT_CORPUS, None, None, "gd_mse", 4), {}, "model must be an EditingLM",
                 id="i31-mlp-swap-not-a-model"),
    pytest.param(ED.key_covariance, (torch.full((3, 4), math.nan, dtype=F64),), {}, "non-finite",
                 id="i31-key-covariance-nan"),
    pytest.param(ED.key_covariance, (torch.ones(4, dtype=F64),), {}, "2-D", id="i31-key-covariance-1d"),
    pytest.param(ED.nullspace_projector, (torch.eye(4, dtype=F64), 1.0), {}, "rel_tol", id="i31-nullspace-tol-one"),
    pytest.param(ED.nullspace_projector, (torch.zeros(4, 4, dtype=F64),), {}, "C is zero", id="i31-nullspace-zero"),
    pytest.param(ED.rome_edit, (torch.eye(4, dtype=F64), torch.ones(2, 4, dtype=F64), torch.ones(1, 4, dtype=F64),
                                torch.eye(4, dtype=F64)), {}, "targets must have shape", id="i31-rome-shapes"),
    pytest.param(ED.memit_edit, (torch.eye(4, dtype=F64), torch.ones(2, 4, dtype=F64), torch.ones(2, 4, dtype=F64),
                                 torch.eye(4, dtype=F64)), {"lam": True}, "lam must be a real", id="i31-memit-bool-lam"),
    pytest.param(ED.alphaedit_edit, (torch.eye(4, dtype=F64), torch.ones(2, 4, dtype=F64),
                                     torch.ones(2, 4, dtype=F64), torch.eye(4, dtype=F64)), {"alpha": 0.0},
                 "alpha must be > 0", id="i31-alphaedit-zero-alpha"),
    pytest.param(ED.fact_accuracy, (torch.tensor([[math.nan, 1.0]]), torch.tensor([0])), {}, "non-finite",
                 id="i31-fact-accuracy-nan"),
    pytest.param(ED.fact_accuracy, (torch.ones(1, 2), torch.tensor([0.0])), {}, "integer tensor",
                 id="i31-fact-accuracy-float-labels"),
    pytest.param(ED.edit_score, (True, 1, 1), {}, "efficacy must be a real", id="i31-edit-score-bool"),
    pytest.param(ED.edit_score, (1.5, 1, 1), {}, "efficacy must be <= 1", id="i31-edit-score-above-one"),
    pytest.param(ED.token_cross_entropy, (torch.ones(1, 2, 3), torch.zeros(1, 2, dtype=torch.long),
                                          torch.zeros(1, 2, dtype=torch.bool)), {}, "selects no position",
                 id="i31-token-ce-empty-mask"),
    pytest.param(ED.nonfact_ppl_ratio, (-1.0, 1.0), {}, "ce_pre must be >= 0", id="i31-ppl-ratio-negative"),
    pytest.param(ED.nonfact_ppl_ratio, (True, 1.0), {}, "ce_pre must be a real", id="i31-ppl-ratio-bool"),
    pytest.param(ED.learn_residuals, (EDIT_BILINEAR, "c", torch.tensor([0, 1]), torch.tensor([1, 0]),
                                      ED.ResidualConfig(steps=1)), {}, "corpus must be a BookCorpus",
                 id="i31-residuals-not-a-corpus"),
    pytest.param(ED.learn_residuals, (EDIT_BILINEAR, EDIT_CORPUS, torch.tensor([0, 1]), torch.tensor([1.0, 0.0]),
                                      ED.ResidualConfig(steps=1)), {}, "integer tensor of fact indices",
                 id="i31-residuals-float-authors"),
    pytest.param(ED.learn_residuals, (EDIT_BILINEAR, EDIT_CORPUS, torch.tensor([0, 1]), torch.tensor([1]),
                                      ED.ResidualConfig(steps=1)), {}, "one entry per fact",
                 id="i31-residuals-short-authors"),
    pytest.param(ED.learn_residuals, (EDIT_BILINEAR, EDIT_CORPUS, torch.tensor([0, 1]), torch.tensor([1, 0]),
                                      {"steps": 1}), {}, "config must be a ResidualConfig",
                 id="i31-residuals-dict-config"),
    pytest.param(ED.learn_residuals, (EDIT_BILINEAR, EDIT_CORPUS, torch.tensor([0, 1]), torch.tensor([1, 0]),
                                      ED.ResidualConfig(steps=1), True), {}, "template must be an integer",
                 id="i31-residuals-bool-template"),
    pytest.param(ED.edit_metrics, (LOGITS, LABELS, LOGITS, LABELS, LOGITS, LABELS), {"ce_pre": math.nan, "ce_post": 1.0},
                 "ce_pre must be finite", id="i31-edit-metrics-nan-ce"),
    pytest.param(ED.edit_metrics, (LOGITS, LABELS.float(), LOGITS, LABELS, LOGITS, LABELS),
                 {"ce_pre": 1.0, "ce_post": 1.0}, "integer tensor", id="i31-edit-metrics-float-labels"),
    pytest.param(ED.edit_metrics, (LOGITS * math.nan, LABELS, LOGITS, LABELS, LOGITS, LABELS),
                 {"ce_pre": 1.0, "ce_post": 1.0}, "non-finite", id="i31-edit-metrics-nan-logits"),
    # lm_embeddings
    pytest.param(LME.EmbeddingPairs, (X8, X8[:3], "s"), {}, "same number of rows", id="i31-pairs-rows"),
    pytest.param(LME.EmbeddingPairs, (X8 * math.nan, X8, "s"), {}, "non-finite", id="i31-pairs-nan"),
    pytest.param(LME.EmbeddingPairs, (X8.tolist(), X8, "s"), {}, "torch.Tensor", id="i31-pairs-list"),
    pytest.param(LME.EmbeddingPairs, (X8, X8, 3), {}, "source must be a non-empty string", id="i31-pairs-int-source"),
    pytest.param(LME.EmbeddingPairs, (X8[:0], X8[:0], "s"), {}, "at least 1 row", id="i31-pairs-empty"),
    pytest.param(LME.sample_fact_set, (LME.EmbeddingPairs(X8, X8, "s"), True), {}, "num_facts must be an integer",
                 id="i31-sample-bool-facts"),
    pytest.param(LME.sample_fact_set, (LME.EmbeddingPairs(X8, X8, "s"), 30), {}, "exceeds", id="i31-sample-too-many"),
    pytest.param(LME.sample_fact_set, (LME.EmbeddingPairs(X8, X8, "s"), 3), {"max_cosine": math.nan},
                 "max_cosine must be finite", id="i31-sample-nan-cosine"),
    pytest.param(LME.save_pairs, ("x", "x.npz"), {}, "pairs must be EmbeddingPairs", id="i31-save-not-pairs"),
    pytest.param(LME.load_pairs, ("x.npz", 0), {}, "max_pairs must be >= 1", id="i31-load-zero-max"),
    pytest.param(LME.capture_editing_lm, ("m", EDIT_CORPUS), {}, "model must be an EditingLM", id="i31-capture-not-lm"),
    pytest.param(LME.capture_editing_lm, (EDIT_MODEL, EDIT_CORPUS, [True]), {}, "boolean", id="i31-capture-bool-tpl"),
    pytest.param(LME.capture_editing_lm, (EDIT_MODEL, EDIT_CORPUS, [99]), {}, "out of range", id="i31-capture-tpl-99"),
    pytest.param(LME.capture_editing_lm, (EDIT_MODEL, EDIT_CORPUS), {"batch_size": 0}, "batch_size",
                 id="i31-capture-zero-batch"),
    pytest.param(LME.distinct_prefix_rows, (torch.ones(2, 3),), {}, "2-D integer tensor", id="i31-distinct-float"),
    pytest.param(LME.distinct_prefix_rows, (torch.ones(2, 3, dtype=torch.long),), {"seen": []}, "seen must be a set",
                 id="i31-distinct-seen-list"),
    pytest.param(HF.decoder_layers, (torch.nn.Linear(2, 2),), {}, "no decoder blocks", id="i31-decoder-layers-linear"),
    pytest.param(HF.capture_from_folder, (".", [[1, 2, 3]]), {"seq_len": 0}, "seq_len", id="i31-capture-folder-seq"),
    pytest.param(HF.load_causal_lm, (".",), {"device": "tpu"}, "unknown device", id="i31-hf-load-unknown-device"),
    # issue 31, closing audit: the public names of transformer and editing that had no row
    pytest.param(lambda: TR.ssfr_batch(SSFR, SSFR_MAP, 2, torch.Generator()).to("tpu"), (), {}, "unknown device",
                 id="i31-ssfr-batch-to-unknown-device"),
    pytest.param(ED.generate_book_facts, (0,), {}, "num_facts must be a positive integer", id="i31-book-facts-zero"),
    pytest.param(ED.generate_book_facts, (6, True), {}, "seed must be an integer", id="i31-book-facts-bool-seed"),
    pytest.param(ED.build_corpus, ("facts",), {}, "facts must be a BookFacts", id="i31-corpus-not-facts"),
    pytest.param(ED.build_corpus, (BOOK_FACTS,), {"bpe_vocab_size": 2.5}, "bpe_vocab_size must be a positive integer",
                 id="i31-corpus-fractional-bpe"),
    pytest.param(ED.build_corpus, (BOOK_FACTS,), {"train_templates": (("The author of",),)},
                 "\\(prefix, suffix\\) pair", id="i31-corpus-template-without-suffix"),
    pytest.param(ED.kaiming_embedding, (True, 8), {}, "vocab_size must be an integer, got the boolean",
                 id="i31-kaiming-bool-vocab"),
    pytest.param(ED.kaiming_embedding, (10, 8), {"dtype": torch.float16}, "float16 is not supported",
                 id="i31-kaiming-half"),
    pytest.param(ED.EditingLMConfig, (True,), {}, "vocab_size must be an integer, got the boolean",
                 id="i31-lm-config-bool-vocab"),
    pytest.param(ED.EditingLMConfig, (10,), {"d": 7}, "d must be even", id="i31-lm-config-odd-width"),
    pytest.param(ED.edit_assignment, (6, 1.5), {}, "fraction must be <= 1", id="i31-edit-assignment-fraction"),
    pytest.param(ED.edit_assignment, (6, "0.5"), {}, "fraction must be a real number", id="i31-edit-assignment-str"),
    pytest.param(ED.EditAssignment, ([0], [1, 1, 2]), {}, "authors must be a permutation",
                 id="i31-assignment-not-a-permutation"),
    pytest.param(ED.EditAssignment, ([0, 0], [1, 0, 2]), {}, "distinct fact indices", id="i31-assignment-repeated"),
    pytest.param(ED.EditAssignment, ([0.5], [1, 0, 2]), {}, "altered must hold whole numbers",
                 id="i31-assignment-fractional-index"),
    pytest.param(ED.EditAssignment, ([0], [0, 1, 2]), {}, "every altered fact must change its author",
                 id="i31-assignment-unchanged-author"),
    pytest.param(ED.EditAssignment, ([5], [1, 0, 2]), {}, "altered must lie in \\[0, F\\)",
                 id="i31-assignment-out-of-range"),
    pytest.param(ED.expert_fact_set, (EDIT_E[:3], EDIT_CORPUS), {}, "vocab_size", id="i31-expert-facts-short-table"),
    pytest.param(ED.expert_fact_set, (EDIT_E, EDIT_CORPUS, [True] * 6), {}, "authors must hold integers",
                 id="i31-expert-facts-bool-authors"),
    pytest.param(ED.expert_fact_set, (EDIT_E, EDIT_CORPUS, [0.5] * 6), {}, "authors must hold whole numbers",
                 id="i31-expert-facts-fractional-authors"),
    pytest.param(ED.build_fact_expert, ("hebbian", EDIT_FACTS, 8), {}, "unknown method",
                 id="i31-fact-expert-unknown-method"),
    pytest.param(ED.build_fact_expert, ("data_dependent", EDIT_FACTS, True), {}, "m must be a positive integer",
                 id="i31-fact-expert-bool-width"),
    pytest.param(ED.Sequences, (EDIT_SEQS.tokens, EDIT_SEQS.targets[:, :-1], EDIT_SEQS.mask, EDIT_SEQS.author_mask),
                 {}, "targets must have the tokens' shape", id="i31-sequences-shapes"),
    pytest.param(ED.Sequences, (EDIT_SEQS.tokens.float(), EDIT_SEQS.targets, EDIT_SEQS.mask, EDIT_SEQS.author_mask),
                 {}, "tokens must be an integer tensor", id="i31-sequences-float-tokens"),
    pytest.param(ED.Sequences, (EDIT_SEQS.tokens, EDIT_SEQS.targets, EDIT_SEQS.mask & False, EDIT_SEQS.author_mask),
                 {}, "every row needs a real position", id="i31-sequences-empty-mask"),
    pytest.param(ED.weight_edit, (EDIT_BILINEAR, "rome", "targets", "preserved"), {},
                 "targets must be EditTargets .* and preserved PromptKeys", id="i31-weight-edit-not-records"),
]


@pytest.mark.parametrize(("func", "args", "kwargs", "match"), BAD)
def test_bad_input_raises_a_clear_value_error(func, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(*args, **kwargs)


def test_transformer_inputs_that_are_fine_after_the_review_fixes():
    """An integral float width is stored as an int (the model then builds); a float32 MLP is
    accepted by a float32 or float64 model, its input cast to its dtype; the every-position
    methods take any causal sequence."""
    cfg = TR.TransformerConfig(d=8.0, dtype=F64, device="cpu")
    assert cfg.d == 8 and type(cfg.d) is int
    model = TR.SSFRTransformer(cfg, SSFR_E, task=SSFR)
    assert model(SSFR_TOKENS).shape == (6, 6)
    lin = torch.nn.Linear(8, 8)  # float32
    assert model.with_mlp(lin)(SSFR_TOKENS).dtype == F64
    assert model.attention_pattern(torch.zeros(2, 3, dtype=torch.long)).shape == (2, 3, 3)
    assert TR.TrainConfig(3, 4, betas=[0.5, 0.9]).betas == (0.5, 0.9)


def test_the_table_is_as_large_as_the_task_asks():
    assert len(BAD) >= 20


# --- edge cases whose answer is a value -----------------------------------------------------


def test_integer_features_are_read_as_float64_not_truncating_the_targets():
    ints = torch.arange(12 * 5).reshape(12, 5) % 7  # int64 features
    out = hebbian_readout(ints, TARGETS, "none")
    assert out.dtype == F64
    torch.testing.assert_close(out, TARGETS.T @ ints.double() / 12, rtol=0, atol=0)


def test_solve_factor_casts_the_other_tensors_to_the_keys_dtype():
    X32, info32 = solve_factor(KEYS.float(), Y, W, FACTS.targets, tol=1e-6, max_iter=500)
    X64, _ = solve_factor(KEYS, Y, W, FACTS.targets, tol=1e-6, max_iter=500)
    assert X32.dtype == torch.float32 and info32["converged"]
    torch.testing.assert_close(X32.double(), X64, rtol=1e-3, atol=1e-4)


def test_a_ridge_regularises_the_singular_system():
    facts = make_fact_set(64, 4, seed=0)  # m = 20 > d(d+1)/2 = 10: rank Phi <= 10
    model = hebbian_mlp(facts, 20, "full", ridge=1e-6)
    assert bool(torch.isfinite(model.B).all())


def test_a_huge_but_finite_direction_still_spikes_float32_rows():
    out = spike(KEYS.float(), 1.0, torch.full((8,), 1e300, dtype=F64))
    torch.testing.assert_close(out, spike(KEYS.float(), 1.0, torch.ones(8)), rtol=1e-6, atol=1e-7)


def test_mixed_dtype_kernel_of_the_exact_memory_promotes():
    mem = exact_k2_memory(UNTIED)
    g = mem.kernel(UNTIED.keys.float(), UNTIED.keys)
    assert g.dtype == F64 and g.shape == (16, 16)


def test_score_margins_of_zero_facts_is_empty():
    assert M.score_margins(torch.zeros(0, 3, dtype=F64), torch.zeros(0, dtype=torch.long)).shape == (0,)


def test_zero_width_readout_is_empty_not_an_error():
    assert hebbian_readout(PHI[:, :0], TARGETS, "full").shape == (3, 0)


def test_one_element_margins_are_read_as_numbers():
    res = M.min_bits_for_positive_margin(lambda x: torch.tensor([1.0]), [torch.ones(2)])
    assert res.bits == 1 and res.full_precision_margin == 1.0


def test_series_and_integral_floats_still_work():
    fit = C.power_law_fit(pd.Series([1, 2, 4, 8]), pd.Series([1.0, 4.0, 16.0, 64.0]))
    assert fit.exponent == pytest.approx(2.0)
    assert M.covariates_from_statistics([STATS], width=64.0)["m"].tolist() == [64.0]
    assert CS.num_facts(np.float64(1 / 8), np.int64(90)) == 1013


# --- a call that raises leaves its inputs as they were --------------------------------------


def _snapshot(*tensors):
    return [t.clone() for t in tensors]


def _unchanged(before, *tensors):
    return all(torch.equal(b, t) for b, t in zip(before, tensors))


def test_failed_readout_leaves_the_features_unchanged():
    # m = 300 > 256: the blocked CPU Cholesky, which overwrites its Gram matrix in place
    phi = torch.randn(400, 20, dtype=F64, generator=torch.Generator().manual_seed(0))
    phi = torch.cat([phi, phi[:, :1].expand(400, 280)], dim=1)  # rank 20 < m = 300
    before = _snapshot(phi, TARGETS.repeat(34, 1)[:400])
    with pytest.raises(ValueError, match="singular"):
        hebbian_readout(phi, TARGETS.repeat(34, 1)[:400], "full", ridge=0)
    assert _unchanged(before, phi, TARGETS.repeat(34, 1)[:400])


def test_failed_solve_leaves_its_inputs_unchanged():
    x0 = torch.randn(4, 8, dtype=F64, generator=torch.Generator().manual_seed(5))
    metric = -torch.eye(8, dtype=F64)
    tensors = (KEYS, Y, W, FACTS.targets, x0, metric)
    before = _snapshot(*tensors)
    with pytest.raises(ValueError, match="broke down"):
        solve_factor(KEYS, Y, W, FACTS.targets, x0=x0, metric=metric)
    assert _unchanged(before, *tensors)


def test_failed_spike_and_cast_leave_the_fact_set_unchanged():
    facts = make_fact_set(8, 4, seed=3)
    before = _snapshot(facts.keys, facts.values, facts.mapping)
    with pytest.raises(ValueError, match="beta"):
        with_spike(facts, True)
    with pytest.raises(ValueError, match="float16"):
        facts.to(dtype=torch.float16)
    assert _unchanged(before, facts.keys, facts.values, facts.mapping)


def test_a_fact_set_that_fails_validation_keeps_the_callers_map():
    mapping = torch.arange(8, dtype=torch.int32)
    with pytest.raises(ValueError, match="unit-norm"):
        FactSet(2 * FACTS.keys[:8], FACTS.values[:8], mapping)
    assert mapping.dtype == torch.int32 and torch.equal(mapping, torch.arange(8, dtype=torch.int32))


def test_diverging_training_leaves_the_facts_unchanged():
    facts = make_fact_set(8, 4, seed=4)
    before = _snapshot(facts.keys, facts.values, facts.mapping)
    with pytest.raises(ValueError, match="diverged"):
        train_mlp(facts, 4, epochs=20, lr=1e30, device="cpu", dtype=torch.float32)
    assert _unchanged(before, facts.keys, facts.values, facts.mapping)


def test_a_construction_that_fails_late_returns_nothing_and_mutates_nothing(monkeypatch):
    """Inject a failure in the readout, after the features are drawn: the facts are untouched."""
    import assocmem.mlps.mlp.hebbian as hebbian_module

    def boom(*args, **kwargs):
        raise ValueError("injected readout failure")

    monkeypatch.setattr(hebbian_module, "hebbian_readout", boom)
    facts = make_fact_set(8, 4, seed=5)
    before = _snapshot(facts.keys, facts.values, facts.mapping)
    with pytest.raises(ValueError, match="injected"):
        hebbian_module.hebbian_mlp(facts, 6, "full")
    assert _unchanged(before, facts.keys, facts.values, facts.mapping)


def test_ntk_and_exact_memory_reject_non_bool_flags():
    with pytest.raises(ValueError, match="require_unit_keys"):
        ntk_mlp(FACTS, 4, require_unit_keys=1)
    with pytest.raises(ValueError, match="require_unit_keys"):
        exact_k2_memory(FACTS, require_unit_keys="yes")
