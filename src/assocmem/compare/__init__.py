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

import importlib

#: The modules and subpackages named above, each imported on first use
#: (``assocmem.compare.adapters``), so importing the Part stays light.
__all__ = [
    "adapters",
    "harness",
    "table_sweeps",
    "figures",
]


def __getattr__(name: str):
    """Import a module of this Part on first use (PEP 562)."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; its modules are: "
                         f"{', '.join(__all__)}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
