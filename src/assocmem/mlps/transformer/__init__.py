"""Fact-storing MLPs inside a Transformer: the SSFR task and the one-layer SSFR Transformer (seed 001).

The second half of Part II: the book's MLP memories inserted, frozen, into the one-layer,
one-head Transformer of seed 001 (App. A.1.2) and used on Synthetic Sequential Factual Recall
(Definition 3.2), with the attention-noise ceiling of Definition 5.1 and the fact-adaptive
evaluation of App. A.4.3. Chapters 14 ("Margins inside a Transformer": usability, per-key margins,
attention noise) and 15 ("How many facts fit in a Transformer block?": capacity) use it, directly
and through :mod:`assocmem.mlps.transformer_sweeps` for the sweeps.

Map
---
==============  =========================================================================  ========
module          holds                                                                      chapters
==============  =========================================================================  ========
``ssfr``        :class:`SSFRTask`, :class:`SSFRBatch`, :func:`embedding_table`,            14-15
                :func:`fact_map`, :func:`fact_set`, :func:`ssfr_batch`,
                :func:`ssfr_eval_batch`, :func:`check_seed` (the one seed rule:
                integers in ``[0, 2^63)``) (Def. 3.2, App. A.2.1)
``model``       :class:`TransformerConfig`, :class:`SSFRTransformer`,                      14-15
                :class:`CausalAttention`, :class:`IdentityMLP` (App. A.1.2)
``insertion``   :data:`METHODS`, :func:`build_mlp`: the MLP memories built for the task's  14-15
                fact set, frozen (App. A.1.1, A.4.3, A.4.5)
``training``    :class:`TrainConfig`, :func:`train_attention`,                             14-15
                :func:`pretrained_attention`, :func:`inserted_mlp` (App. A.1.2)
``evaluation``  :func:`ssfr_correct`, :func:`ssfr_accuracy`,                               14-15
                :func:`fact_adaptive_accuracy`, per-key margins against per-key
                correctness (App. A.4.3, A.4.4, Fig. 7)
``noise``       :func:`attention_noise`, :func:`noise_ceiling`,                            14-15
                :func:`noise_ceiling_bound`, :func:`local_lipschitz` (Def. 5.1, Thm 5.2,
                App. A.4.1, B.10), :func:`noisy_margin_threshold` (Thm B.62, eq. 70)
``injection``   :func:`tangent_noise`, :func:`query_inputs`,                               14
                :func:`injected_correct`: noise of a set size injected into the MLP's
                input at the query (the lag sensitivity of chapter 14)
==============  =========================================================================  ========

Choices where the authors' code and text differ (each module says why): ``J`` is the length of
*each* junk string (App. A.2.1; the sequence is ``junk^J key junk^J Q``); the read-out is over the
``F`` fact tokens; the GD MLP is the bilinear one of chapters 10-13, not the authors' gated ReLU
MLP with biases.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 3.2, Sec. 5.1,
App. A.1.2, A.2.1-A.2.2, A.4.1-A.4.5, B.10.
"""

from assocmem.mlps.transformer import evaluation, injection, insertion, model, noise, ssfr, training
from assocmem.mlps.transformer.evaluation import (
    fact_adaptive_accuracy,
    per_key_accuracy,
    per_key_diagnostic,
    ssfr_accuracy,
    ssfr_correct,
    usable_key_fraction,
)
from assocmem.mlps.transformer.insertion import METHODS, build_mlp, check_mlp_width
from assocmem.mlps.transformer.model import (
    CHUNK_ENTRIES,
    CausalAttention,
    IdentityMLP,
    SSFRTransformer,
    TransformerConfig,
    check_tokens,
)
from assocmem.mlps.transformer.injection import injected_correct, query_inputs, tangent_noise
from assocmem.mlps.transformer.noise import (
    attention_noise,
    local_lipschitz,
    noise_ceiling,
    noise_ceiling_bound,
    noisy_margin_threshold,
)
from assocmem.mlps.transformer.ssfr import (
    MAX_SEED,
    SSFRBatch,
    SSFRTask,
    check_embedding,
    check_mapping,
    check_seed,
    embedding_table,
    fact_map,
    fact_set,
    identity_map,
    ssfr_batch,
    ssfr_eval_batch,
)
from assocmem.mlps.transformer.training import (
    TrainConfig,
    TrainResult,
    inserted_mlp,
    pretrained_attention,
    seed_stream,
    train_attention,
)

__all__ = [
    *ssfr.__all__,
    *model.__all__,
    *insertion.__all__,
    *training.__all__,
    *evaluation.__all__,
    *noise.__all__,
    *injection.__all__,
]
