"""Part I: linear attention as an associative memory (chapters 01-03, seed 000).

A matrix ``S`` of shape ``(d_v, d_k)`` stores key-value pairs by outer products; linear attention
is exactly such a memory, softmax attention is its kernel-weighted relative. This package holds
the memories, the attention forms that build them, and the analyses of the three chapters.

Modules
-------
attention     (subpackage) softmax attention (``softmax``); causal linear attention in parallel,
              recurrent and chunked forms (``linear_forms``) and their agreement within a rounding
              bound (``rounding``); one vector as query and key (``shared_qk``); token-by-token
              decoders with a KV cache or a state (``decoding``) (chapter 01)
memory        matrix memories: outer-product (Hebbian), least-squares (pseudoinverse), delta rule
              (chapters 01-03)
geometry      the geometry of a few stored pairs: coordinates in the key basis, dual vectors,
              overlaps, reads of noisy queries (chapter 02)
theory        closed forms: read-error curves ``e_add(n) = (n-1)/d_k``, ``e_ls(n) = 1 - d_k/n``,
              the ``eps d_k`` rule, dual-vector lengths (chapters 02-03)
capacity      (subpackage) Monte Carlo read errors of random key-value pairs (``read_error``), the
              ``eps d_k`` rule measured (``pairs_at_error``), the batched least-squares state and
              delta rule (``delta_rule``), the delta rule's passes and limit against ``S*``
              (``delta_convergence``), the chapter's presets (``presets``) (chapter 03)
timing        wall-clock timing of the attention forms and of decoding (chapter 01;
              machine-dependent figures; the generic helpers are in :mod:`assocmem.benchmarking`)
demo_sweeps   the ``demo`` sweep: the additive memory's read error, the sweep engine's worked
              example
figures       (subpackage) the chapters' figures, one function per figure (chapters 01-03)
"""

from assocmem._lazy import lazy_modules

#: The modules and subpackages named above, each imported on first use
#: (``assocmem.linear.attention``), so importing the Part stays light.
__all__ = [
    "attention",
    "memory",
    "geometry",
    "theory",
    "capacity",
    "timing",
    "demo_sweeps",
    "figures",
]


__getattr__, __dir__ = lazy_modules(__name__, __all__, globals())
