"""assocmem: associative memories, from linear attention to sparse distributed memory.

The library behind the executable book *How Much Can a Matrix Remember?*. Its layout is the
book's table of contents: one package per Part, over one shared floor that every Part uses.

Parts
-----
linear      Part I (chapters 01-03): linear attention as a matrix memory. Softmax and linear
            attention, outer-product / least-squares / delta-rule memories, closed-form read
            errors, the geometry of stored pairs, Monte Carlo capacity (seed 000).
mlps        Part II (chapters 10-13): fact-storing MLPs. Fact sets, the Hebbian MLP constructions
            and their baselines, decoding margins and their bounds, the counting bound, the
            theorems of *MLPs are Hebbians*, and the capacity and margin sweeps (seed 001).
sdm         Part III (chapters 30-36): sparse distributed memory and attention. Hamming and
            spherical intersections, the beta fits, SNR and optimal radii, read rules, SDM as a
            kernel memory, the convergence experiments (seed 002).
compare     Part IV (chapter 50): one table for every memory. Adapters that fit each memory of
            Parts I-III to one protocol, the harness that measures them on the same fact sets,
            and the ``memory_table`` sweep.

The shared floor
----------------
memory_protocol  the associative-memory protocol (``write``, ``read``, ``num_parameters``,
              ``num_bits``) and the one decoding rule (strict argmax over the value table)
sweeps        named sweeps with presets, a resumable results store, executors, the capacity
              search, and the live-against-stored check
repro         reproduction-check tables: what the source says, ours, tolerance, verdict
claims        the registry of the three sources' claims: one record per checkable claim, its
              location, value and kind of test, and the chapters that check it
display       the display policy: numbers at the precision the computation supports
dtypes        the dtype policy: float32/float64 computed, float16/bfloat16 refused
plotting      the house figure style
devices       device selection (``device="auto"``) and CPU thread control
benchmarking  machine description and same-run reference rates for timings
datasets      real patterns: scikit-learn's digits, a local MNIST reader
progress      progress bars that stay silent under CI and in the book build

The floor imports no Part. Part II uses Part I's matrix memory (its linear Hebbian baseline),
Part III uses Part I's softmax attention, and Part IV imports every Part to measure its memories;
no other Part imports another (``tests/test_layout.py``).
"""

__version__ = "0.1.0"
