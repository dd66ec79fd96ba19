"""Softmax attention and unnormalised causal linear attention, in the seed's conventions (chapter 01).

Seed 000 §1-§3 goes from softmax attention to linear attention and reads the latter as a matrix
memory ``S_t = sum_{i<=t} v_i k_i^T``. Chapter 01 ("From attention to a matrix") imports this
package as ``att`` (``from assocmem.linear import attention as att``); every public name of the
submodules is re-exported here. Part III (:mod:`assocmem.sdm.kernels`) uses :func:`linear_attention`.

Modules
-------
softmax        softmax attention without the ``1/sqrt(d_k)`` by default (seed §2), its weights
               and the causal mask (:func:`softmax_attention`, :func:`softmax_weights`,
               :func:`causal_mask`)
linear_forms   unnormalised causal linear attention in its parallel, recurrent and chunked forms
               (seed §3; :func:`linear_attention`, :data:`LINEAR_ATTENTION_FORMS`), also in
               flash-linear-attention's ``[B, T, H, K]`` layout, from an initial state and
               returning the final one
rounding       the forms' agreement against Higham's rounding bound (:func:`gamma`,
               :func:`linear_attention_agreement`, :data:`FLOAT64_UNIT_ROUNDOFF`)
shared_qk      one vector as query, key and value: :func:`self_top_rate`, :func:`score_asymmetry`
               (seed §1)
decoding       token-by-token decoders with a key-value cache or the recurrent state, with exact
               counts of what each holds and does (seed §2-§3; :class:`KVCacheDecoder`,
               :class:`LinearAttentionDecoder`, :func:`decode`)

Tensors are ``(..., T, d)``: time on the second-to-last axis, features last, any leading batch or
head axes. Libraries such as flash-linear-attention store the state as ``(d_k, d_v)`` (the
transpose of the seed's ``S``) and scale queries by ``1/sqrt(d_k)``; we follow the seed. The
wall-clock timing of the forms and decoders is in :mod:`assocmem.linear.timing`.
"""

from assocmem.linear.attention.decoding import KVCacheDecoder, LinearAttentionDecoder, decode
from assocmem.linear.attention.linear_forms import LINEAR_ATTENTION_FORMS, LINEAR_ATTENTION_LAYOUTS, linear_attention
from assocmem.linear.attention.rounding import FLOAT64_UNIT_ROUNDOFF, gamma, linear_attention_agreement
from assocmem.linear.attention.shared_qk import score_asymmetry, self_top_rate
from assocmem.linear.attention.softmax import causal_mask, softmax_attention, softmax_weights

__all__ = [
    "causal_mask",
    "softmax_attention",
    "softmax_weights",
    "linear_attention",
    "LINEAR_ATTENTION_FORMS",
    "LINEAR_ATTENTION_LAYOUTS",
    "FLOAT64_UNIT_ROUNDOFF",
    "gamma",
    "linear_attention_agreement",
    "self_top_rate",
    "score_asymmetry",
    "KVCacheDecoder",
    "LinearAttentionDecoder",
    "decode",
]
