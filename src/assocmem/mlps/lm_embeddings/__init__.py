"""Margins and capacity on a language model's own activations (seed 001, App. A.5.3; chapter 17).

Seed 001 checks its margin bounds and its ``W = Theta(F log F)`` capacity on keys and values that
a real language model presents to an MLP block: the block's inputs ``x`` and outputs ``y`` at the
middle layer of Qwen3-0.6B-Base, captured per token of WikiText. This package captures such pairs
and turns them into fact sets; the sweeps that use them are in
:mod:`assocmem.mlps.lm_embedding_sweeps`.

Modules
-------
pairs       :class:`EmbeddingPairs` (captured ``(x, y)`` rows with their provenance),
            :func:`save_pairs` / :func:`load_pairs` (``.npz``), :func:`sample_fact_set` (``F``
            pairs drawn uniformly, on the unit sphere, identity map)
editing_lm  :func:`capture_editing_lm`: the pairs of the book's own trained language model
            (chapter 16), one per distinct token prefix
hf          the capture code for Hugging Face decoder models (Qwen3 and the Llama family):
            :func:`load_causal_lm` (a local folder, no download), :func:`token_blocks` (a token
            stream cut into batches), :func:`capture_mlp_pairs` (forward hooks on one layer's
            ``post_attention_layernorm`` and ``mlp``), :func:`capture_from_folder` (both in one
            call), :func:`decoder_layers`, :func:`mid_layer`
twins       :func:`~assocmem.mlps.lm_embeddings.twins.near_twin_stats`: the share of facts whose
            key or value has a near-twin (cosine above ``1 - twin_gap``)
specs       the checks of the settings the language-model sweeps share (pairs source,
            trainings, grids)
"""

from assocmem.mlps.lm_embeddings import editing_lm, hf, pairs
from assocmem.mlps.lm_embeddings.editing_lm import capture_editing_lm, distinct_prefix_rows
from assocmem.mlps.lm_embeddings.hf import (
    capture_from_folder,
    capture_mlp_pairs,
    decoder_layers,
    load_causal_lm,
    mid_layer,
    token_blocks,
)
from assocmem.mlps.lm_embeddings.pairs import EmbeddingPairs, load_pairs, sample_fact_set, save_pairs

__all__ = [*pairs.__all__, *editing_lm.__all__, *hf.__all__]
