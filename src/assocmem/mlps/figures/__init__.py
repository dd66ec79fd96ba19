"""The figures of Part II's chapters (seed 001), one function per figure.

Each module draws the figures of one topic; each function takes the computed data (tensors,
arrays or a results frame), draws with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`, so that a chapter shows the computation and one call per figure.
Import the topic's module: ``from assocmem.mlps.figures import capacity``.
"""
