"""Fact editing by MLP swapping, against ROME, MEMIT and AlphaEdit (seed 001, Sec. 5.2, App. A.4.5).

The practical payoff of Part II: to change what a Transformer knows, build a new fact-storing MLP
for the edited fact set and swap it in. This package holds the book-author language-modelling
task of seed 001 (App. A.4.5), its one-layer language model with a frozen, swappable fact
expert, MLP swapping, the three weight-editing baselines on the expert's output matrix, and the
editing metrics of Table 1, the training of the base model, the residuals the weight editors
learn, and the scoring of an edit. Chapter 16, *Editing facts*, uses all of it (through the
``fact_editing`` sweep, :mod:`assocmem.mlps.editing_sweeps`).

Map
---
============== ============================================================================ ========
module         holds                                                                        chapters
============== ============================================================================ ========
``editors``    :func:`rome_edit` (sequential rank-one), :func:`memit_edit` (batched,        16
               preserved-key regularised), :func:`alphaedit_edit` (null-space projected),
               :func:`nullspace_projector`, :func:`key_covariance`; float64 solves
``metrics``    :func:`fact_accuracy`, :func:`edit_score`, :func:`token_cross_entropy`,      16
               :func:`nonfact_ppl_ratio`, :func:`edit_metrics`, :class:`EditMetrics`
``data``       :class:`BookFacts`, :func:`generate_book_facts` (Faker, seeded),             16
               :func:`load_book_facts_csv`, :func:`write_book_facts_csv`,
               :data:`TRAIN_TEMPLATES`, :data:`HELDOUT_TEMPLATES`, :class:`BookCorpus`,
               :func:`build_corpus` (BPE tokenizer, atomic title and author tokens)
``model``      :class:`EditingLMConfig`, :class:`EditingLM` (RoPE, nonlinear query/key      16
               maps, two-expert FFN), :func:`rope`, :func:`kaiming_embedding`
``swapping``   :func:`edit_assignment`, :func:`num_edits`, :class:`EditAssignment`,         16
               :func:`expert_fact_set`, :func:`build_fact_expert`, :func:`mlp_swap`
``training``   :class:`LMTrainConfig`, :func:`training_sequences`, :func:`train_lm`,        16
               :func:`base_model` (frozen expert, the rest trained), :func:`author_logits`,
               :func:`lm_accuracy`, :func:`expert_accuracy`
``residuals``  :class:`ResidualConfig`, :func:`prompt_keys`, :func:`learn_residuals`        16
               (one templated prompt per fact), :func:`corpus_key_moment` (the
               preserved-key moment from the corpus), :func:`weight_edit` (ROME, MEMIT or
               AlphaEdit into the expert's output matrix, on a copy)
``evaluation`` :class:`EditEvaluation`: efficacy, paraphrase, specificity, score and        16
               ``r_NF`` of any model sharing the base model's attention
============== ============================================================================ ========

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians" (arXiv 2607.10034), Sec. 5.2, App. A.4.5,
Table 1, Figs. 3c, 8, 9. ROME: Meng et al., NeurIPS 2022. MEMIT: Meng et al., ICLR 2023.
AlphaEdit: Fang et al., ICLR 2025.
"""

from assocmem.mlps.editing import data, editors, evaluation, metrics, model, residuals, swapping, training
from assocmem.mlps.editing.data import (
    HELDOUT_TEMPLATES,
    TRAIN_TEMPLATES,
    BookCorpus,
    BookFacts,
    build_corpus,
    generate_book_facts,
    load_book_facts_csv,
    write_book_facts_csv,
)
from assocmem.mlps.editing.editors import alphaedit_edit, key_covariance, memit_edit, nullspace_projector, rome_edit
from assocmem.mlps.editing.metrics import (
    EditMetrics,
    edit_metrics,
    edit_score,
    fact_accuracy,
    nonfact_ppl_ratio,
    token_cross_entropy,
)
from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, check_lm_tokens, kaiming_embedding, rope
from assocmem.mlps.editing.evaluation import EditEvaluation
from assocmem.mlps.editing.residuals import (
    EDITORS,
    EditTargets,
    PromptKeys,
    ResidualConfig,
    corpus_key_moment,
    learn_residuals,
    prompt_keys,
    weight_edit,
)
from assocmem.mlps.editing.swapping import (
    EditAssignment,
    build_fact_expert,
    edit_assignment,
    expert_fact_set,
    mlp_swap,
    num_edits,
)
from assocmem.mlps.editing.training import (
    LMTrainConfig,
    LMTrainResult,
    Sequences,
    author_logits,
    base_model,
    expert_accuracy,
    expert_seed,
    lm_accuracy,
    train_lm,
    training_sequences,
)

__all__ = [
    *editors.__all__,
    *metrics.__all__,
    *data.__all__,
    *model.__all__,
    *swapping.__all__,
    *training.__all__,
    *residuals.__all__,
    *evaluation.__all__,
]
