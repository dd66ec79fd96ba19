"""assocmem: associative memories, from linear attention to sparse distributed memory.

The library behind the executable book *How Much Can a Matrix Remember?*. Each module
implements one family of memories or one kind of analysis; the chapters of the book call
these functions and stay thin.

Modules
-------
attention   softmax attention and causal linear attention (parallel, recurrent, chunked)
memory      matrix memories: outer-product (Hebbian), least-squares, delta rule
theory      closed forms for read errors and capacity
geometry    the geometry of stored pairs: coordinates in the key basis, coherence, noisy reads
capacity    Monte Carlo read errors of random key-value pairs
sdm         sparse distributed memory: Hamming and spherical intersections, beta fits,
            signal-to-noise and optimal radii, read rules
repro       reproduction checks: seed value, our value, tolerance, verdict
plotting    the house figure style
devices     device selection (``device="auto"``)
timing      wall-clock timing of attention forms and decoders (machine-dependent figures)
progress    progress bars that stay silent under CI and in the book build
"""

__version__ = "0.1.0"
