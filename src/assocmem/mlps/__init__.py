"""Part II: fact-storing MLPs (chapters 10-17, seed 001, *MLPs are Hebbians*).

A fact is a key mapped to a value; an MLP stores a set of facts when every key decodes to its
value by an argmax over the value table. This package holds the fact sets, the MLP
constructions and their baselines, the decoding margins and the bounds on them, the counting
bound, the checks of the paper's theorems, the sweeps behind chapters 12 and 13, and the MLPs
inside the SSFR Transformer (chapters 14-15), fact editing (chapter 16) and the margin and
capacity laws on a language model's own activations (chapter 17).

Modules
-------
facts             fact sets: key and value tables and the map between them, random and tied,
                  the rank-1 spike (chapters 10-13)
mlp               fact-storing MLPs: the bilinear Hebbian construction (whitening none, diagonal,
                  full), the exact-K2 memory, the data-dependent construction, the NTK baseline and
                  gradient descent (chapters 10-13)
margins           decoding scores, accuracy and margins (Defs. 2.1-2.2), the geometric and penalty
                  statistics of App. B.5, the margin bounds (Theorems 4.1 and 4.3, Table 2) and
                  their fits, noisy queries, bit complexity (chapters 10-12)
counting          the counting lower bound on parameters (Theorem 2.4) and the capacity of
                  Hebbian memories (chapters 10, 13)
hebbian_theory    Theorem 3.1 and Lemmas B.2, B.3, B.34 checked on random instances (chapter 11)
capacity_sweeps   the ``capacity`` sweep: the smallest width storing F facts, per method (chapter 13)
capacity_replicate_sweeps
                  the ``capacity_more`` sweep: GD at more loads and more fact sets per point,
                  beside the ``capacity`` sweep (chapter 13)
margin_sweeps     the ``margin_*`` sweeps: minimum margins against F, m and noise, and bit counts
                  (chapter 12)
transformer       fact-storing MLPs inside a Transformer: the SSFR task (Def. 3.2), the one-layer
                  SSFR Transformer (App. A.1.2), MLP insertion, attention training, the
                  fact-adaptive evaluation and the attention-noise ceiling (Def. 5.1)
                  (chapters 14-15)
editing           fact editing: the book-author language model and its training, MLP swapping,
                  ROME, MEMIT and AlphaEdit with learned residuals, the editing metrics
                  (seed 001, Sec. 5.2, App. A.4.5) (chapter 16)
editing_sweeps    the ``fact_editing`` sweep: Table 1, Figs. 8 and 9 at our scale (chapter 16)
editing_scale_sweeps  the ``editing_scale`` sweep: fact editing's GD expert at other scales (the
                  source's room per edit, ROME after 328 sequential edits, a longer-trained
                  language model) (chapter 16)
lm_embeddings     a language model's MLP inputs and outputs as fact sets: capture from the book's
                  own language model and from Hugging Face models (Qwen3), sampling (seed 001,
                  App. A.5.3) (chapter 17)
lm_embedding_sweeps  the ``lm_margin`` and ``lm_capacity`` sweeps: Figs. 12-13 on captured
                  activations (chapter 17)
transformer_setup  what the SSFR Transformer sweeps share: training-field checks, seed streams, the
                  configs of one training, the inserted MLP's draws (chapters 14-15)
transformer_sweeps  the ``transformer_usability``, ``attention_noise`` and ``transformer_capacity``
                  sweeps: margins, noise ceiling and capacity inside the SSFR Transformer
                  (chapters 14-15)
transformer_summaries  what the stored rows of those sweeps say: the predictors of accuracy,
                  the lag test, the noise summary (chapter 14)
transformer_capacity_sweeps  the ``transformer_facts`` and ``transformer_architecture`` sweeps:
                  Fig. 10's protocol (fixed width, largest F) and App. A.4.3's changes reverted
                  (chapter 15)
lm_dedup_sweeps   the ``lm_dedup`` sweep: Fig. 13 on deduplicated captured activations and the
                  near-twin share of every draw (chapter 17)
lm_block_sweeps   the ``lm_block_capacity`` and ``lm_block_recipe`` sweeps: Fig. 14's untied block
                  on captured activations (chapter 17)
transformer_rerun  the rules by which a rerun of the Transformer sweeps (usability, noise, capacity,
                  ``transformer_facts``, ``transformer_architecture``) is checked against the spread
                  of their stored trainings (chapters 14-15); the ``lm_dedup`` and ``lm_block``
                  sweeps keep their rules in their own modules
figures           (subpackage) the chapters' figures, one function per figure (chapters 10-17)
"""

from assocmem._lazy import lazy_modules

#: The modules and subpackages named above, each imported on first use
#: (``assocmem.mlps.facts``), so importing the Part stays light.
__all__ = [
    "facts",
    "mlp",
    "margins",
    "counting",
    "hebbian_theory",
    "capacity_sweeps",
    "capacity_replicate_sweeps",
    "margin_sweeps",
    "transformer",
    "transformer_rerun",
    "transformer_setup",
    "transformer_sweeps",
    "transformer_summaries",
    "transformer_capacity_sweeps",
    "editing",
    "editing_sweeps",
    "editing_scale_sweeps",
    "lm_embeddings",
    "lm_embedding_sweeps",
    "lm_dedup_sweeps",
    "lm_block_sweeps",
    "figures",
]


__getattr__, __dir__ = lazy_modules(__name__, __all__, globals())
