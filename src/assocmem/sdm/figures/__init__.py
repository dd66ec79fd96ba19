"""The figures of Part III's chapters (seed 002), one function per figure.

Each module draws the figures of one topic; each function takes the computed data (tensors,
arrays or a results frame), draws with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`, so that a chapter shows the computation and one call per figure.
Import the topic's module: ``from assocmem.sdm.figures import radii``.

Modules
-------
one_page    chapter 30: shared neurons, kernels, sign distances
counting    chapter 31: the intersection map, simulation, Kanerva's count, the staircase
which_beta  chapter 32: the beta fits, local beta, beta by method
radii       chapter 33: SNR, the criteria, the critical-distance optimum, the learnt band
closeness   chapter 34: weights by distance, total variation against beta, far weight
kernel_memory  chapter 35: ball-kernel spectra, feature counts, Hopfield against SDM
convergence    chapter 36: convergence, target share and projections
learned_beta   chapter 37: learnt betas and recall against m
"""
