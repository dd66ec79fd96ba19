"""The library's sweeps, by name, for listing them without importing them (generated).

Written by :func:`assocmem.sweeps.registry.write_sweep_index` (``python tools/sweep_index.py``)
from the live registry; do not edit. ``tests/sweeps/test_registry.py`` checks that it equals
the registry. ``python -m assocmem sweep --list`` reads it, so listing imports no sweep.
"""

#: ``{name: {"module": ..., "description": ..., "presets": {preset: points}}}``.
SWEEPS = {
    "attention_noise": {
        "module": "assocmem.mlps.transformer_sweeps",
        "description": "attention noise ceiling of a pretrained SSFR attention against junk length J, V_J = J (seed 001, Def. 5.1, Fig. 3a)",
        "presets": {"quick": 6, "cpu": 24, "recipe": 6, "recipe_mid": 6, "paper": 48},
    },
    "capacity": {
        "module": "assocmem.mlps.capacity_sweeps",
        "description": "smallest width (W = 3md) storing every fact: GD, NTK, unwhitened, whitened, data-dependent; isotropic and spiked (seed 001, Fig. 2c and 11); a searched upper bound that depends on the search's start lo (compare runs at one lo)",
        "presets": {"quick": 24, "cpu": 68, "paper": 294},
    },
    "capacity_more": {
        "module": "assocmem.mlps.capacity_replicate_sweeps",
        "description": "the capacity search at more GD loads and on more fact sets per point (seed 001, Fig. 2c and 11; extends the capacity sweep)",
        "presets": {"quick": 16, "cpu": 82, "gd_quarter": 3, "paper": 1176},
    },
    "convergence": {
        "module": "assocmem.sdm.convergence_sweeps",
        "description": "iterated SDM and attention reads, eight rules, random patterns and digits (seed 002, App. B.7, claim C5)",
        "presets": {"quick": 14, "cpu": 21, "paper": 28},
    },
    "demo": {
        "module": "assocmem.linear.demo_sweeps",
        "description": "Monte Carlo read error of the additive memory vs (n-1)/d_k (Part I; the engine's example)",
        "presets": {"quick": 6, "cpu": 15, "paper": 30},
    },
    "editing_moments": {
        "module": "assocmem.mlps.editing_sweeps",
        "description": "fact editing's weight editors rerun with a preserved-key moment from the corpus, not from the preserved facts' own prompts (seed 001, Table 1; ROME, MEMIT, AlphaEdit)",
        "presets": {"quick": 3, "paper": 6, "cpu": 3},
    },
    "editing_scale": {
        "module": "assocmem.mlps.editing_scale_sweeps",
        "description": "fact editing's GD expert at other scales: the source's edits per hidden unit, ROME after 328 sequential edits, swapping against the language model's training length (seed 001, Table 1, Fig. 8)",
        "presets": {"quick": 2, "room": 3, "room_memit": 3, "room_memit_low": 3, "rome328": 3, "lm8k": 3, "lm16k": 3, "paper": 3},
    },
    "fact_editing": {
        "module": "assocmem.mlps.editing_sweeps",
        "description": "fact editing in the one-layer book-author LM: MLP swapping against ROME, MEMIT and AlphaEdit at 2, 5 and 10 % edited facts (seed 001, Table 1, Figs. 8 and 9)",
        "presets": {"quick": 6, "cpu": 9, "cpu_dd": 3, "paper": 9},
    },
    "lm_block_capacity": {
        "module": "assocmem.mlps.lm_block_sweeps",
        "description": "smallest whitened MLP width at which an untied Transformer block on language-model embeddings (residual, trained V/O) reaches 100 % SSFR training accuracy (seed 001, Fig. 14)",
        "presets": {"quick": 6, "cpu": 24, "paper": 16},
    },
    "lm_block_recipe": {
        "module": "assocmem.mlps.lm_block_sweeps",
        "description": "training accuracy and attention noise of the untied block on language-model embeddings against the attention's training length (seed 001, Fig. 14)",
        "presets": {"quick": 6, "cpu": 6},
    },
    "lm_capacity": {
        "module": "assocmem.mlps.lm_embedding_sweeps",
        "description": "smallest whitened width recalling 98 % of F captured language-model facts (seed 001, Fig. 13)",
        "presets": {"quick": 24, "cpu": 36, "paper": 12},
    },
    "lm_dedup": {
        "module": "assocmem.mlps.lm_dedup_sweeps",
        "description": "near-twin share of every Fig. 13 draw, and Fig. 13 on deduplicated language-model facts (seed 001, App. A.5.3)",
        "presets": {"quick": 36, "cpu": 54, "paper": 18},
    },
    "lm_margin": {
        "module": "assocmem.mlps.lm_embedding_sweeps",
        "description": "minimum margin of the bilinear random-feature Hebbian MLP on a language model's captured MLP inputs and outputs (seed 001, Fig. 12)",
        "presets": {"quick": 96, "cpu": 660, "paper": 110},
    },
    "lm_pairs": {
        "module": "assocmem.mlps.lm_embedding_sweeps",
        "description": "the captured language-model pairs: anisotropy and near-duplicates (seed 001, App. A.5.3)",
        "presets": {"quick": 6, "cpu": 6, "paper": 2},
    },
    "margin_bits": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "smallest bits per parameter keeping gamma_min > 0, F = d^2/16, m d = 32 F ln F (seed 001, App. B.2.6; our design)",
        "presets": {"quick": 4, "cpu": 30},
    },
    "margin_f_exact": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min of the exact-K2 Hebbian memory vs F (d=32; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "margin_f_sketch": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min of the sketched-K2 Hebbian MLP vs F (d=64, m=512; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "margin_m_sketch": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min of the sketched-K2 Hebbian MLP vs m (d=64, F=256; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "margin_noisy": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "clean and noisy-query gamma_min vs eps (d=64, F=256, m=512; seed 001, App. A.4.2)",
        "presets": {"quick": 8, "paper": 45},
    },
    "margin_spike_both": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min and App. B.5 statistics under a rank-1 spike on keys and values (beta in [0, 3.35]; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "margin_spike_keys": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min and App. B.5 statistics under a rank-1 spike on the keys (beta in [0, 5]; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "margin_spike_values": {
        "module": "assocmem.mlps.margin_sweeps",
        "description": "gamma_min and App. B.5 statistics under a rank-1 spike on the values (beta in [0, 10]; seed 001, App. A.3.2)",
        "presets": {"quick": 10, "paper": 150},
    },
    "memory_table": {
        "module": "assocmem.compare.table_sweeps",
        "description": "every memory of the book on the same fact sets: capacity at 100 % argmax recall, read error, query noise, time (chapter 50)",
        "presets": {"quick": 46, "cpu": 106, "paper": 130},
    },
    "trained_recall": {
        "module": "assocmem.sdm.trained_sweeps",
        "description": "one-layer attention trained on associative recall: learned beta, recall against m, effective beta, value norms (seed 002, C7-C13, open question)",
        "presets": {"quick": 6, "cpu": 21, "paper": 350},
    },
    "transformer_architecture": {
        "module": "assocmem.mlps.transformer_capacity_sweeps",
        "description": "training and fact-adaptive accuracy of the SSFR block with App. A.4.3's changes reverted one at a time: residual on, W_V or W_O trainable (seed 001)",
        "presets": {"quick": 15, "cpu": 48, "paper": 30},
    },
    "transformer_capacity": {
        "module": "assocmem.mlps.transformer_sweeps",
        "description": "smallest MLP width (W = 3md) at which the SSFR Transformer reaches 100 % fact-adaptive and 99 % training accuracy, per method (seed 001, Fig. 1c, 3b and 10)",
        "presets": {"quick": 12, "cpu": 24, "paper": 48},
    },
    "transformer_facts": {
        "module": "assocmem.mlps.transformer_capacity_sweeps",
        "description": "largest F at a fixed MLP width reaching 99 % training and 100 % fact-adaptive accuracy in the SSFR Transformer (seed 001, Fig. 10's protocol)",
        "presets": {"quick": 6, "cpu": 9, "paper": 30},
    },
    "transformer_usability": {
        "module": "assocmem.mlps.transformer_sweeps",
        "description": "GD MLPs of growing width inserted into a pretrained SSFR attention: standalone margin and accuracy, Transformer accuracy, usable keys (seed 001, Fig. 2a and 7)",
        "presets": {"quick": 3, "cpu": 3, "recipe": 3, "paper": 4},
    },
}
