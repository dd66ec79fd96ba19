"""The figures of Part II's chapters (seed 001), one function per figure.

Each module draws the figures of one topic; each function takes the computed data (tensors,
arrays or a results frame), draws with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`, so that a chapter shows the computation and one call per figure.
Import the topic's module: ``from assocmem.mlps.figures import margin_scaling``.

Modules
-------
hebbian_capacity    chapter 10: accuracy and margins against F; capacity against width
kernel_hebbians     chapter 11: Theorem 3.1, the sketch error, whitening, the Welch bound
margin_scaling      chapter 12: margins against F, m, spikes and noise; bits per parameter
parameter_cost      chapter 13: parameters needed against the number of facts
usability           chapter 14: usability of inserted MLPs and the attention noise
block_capacity      chapter 15: the MLP swap, block capacity, cross-entropy against MSE
editing             chapter 16: the non-fact perplexity ratio and the data-dependent expert
learned_embeddings  chapter 17: margins and capacity on a language model's activations
"""
