"""The figures of Part I's chapters (seed 000), one function per figure.

Each module draws the figures of one topic; each function takes the computed data (tensors,
arrays or a results frame), draws with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`, so that a chapter shows the computation and one call per figure.
Import the topic's module: ``from assocmem.linear.figures import geometry``.

Modules
-------
attention  chapter 01: score maps, the forms of linear attention, timing and decoding cost
geometry   chapter 02: one and two stored pairs, the least-squares map, readings, stretch and noise
read_error  chapter 03: read error against the load, by key dimension and by values
"""
