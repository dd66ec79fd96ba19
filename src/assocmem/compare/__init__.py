"""Part IV: one table for every memory in the book (chapter 50, "One table for every memory").

Every memory of Parts I-III is measured through one protocol
(:class:`assocmem.memory_protocol.AssociativeMemory`) by one harness, on the same seeded fact sets.
This package imports every Part; no Part imports it.

Modules
-------
adapters       thin adapters fitting each memory to the protocol: the outer-product,
               least-squares and delta-rule matrices and linear attention's state (Part I), the
               softmax key-value cache (Part I), the MLP memories (Part II), binary and continuous
               SDM, classical and modern Hopfield (Part III); :func:`make_memory` builds one by name
harness        the measurements: the fact sets, recall by the one decoding rule, capacity (the
               largest number of facts stored at 100 % argmax accuracy), read error, recall under
               query noise, write and read time
table_sweeps   the ``memory_table`` sweep: every memory, every size, both geometries (chapter 50)
figures        (subpackage) chapter 50's figures, one function per figure
"""

from assocmem._lazy import lazy_modules

#: The modules and subpackages named above, each imported on first use
#: (``assocmem.compare.adapters``), so importing the Part stays light.
__all__ = [
    "adapters",
    "harness",
    "table_sweeps",
    "figures",
]


__getattr__, __dir__ = lazy_modules(__name__, __all__, globals())
