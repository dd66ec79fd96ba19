"""Sparse distributed memory (Kanerva 1988) and its relation to attention (Bricken & Pehlevan 2021).

Submodules
----------
geometry
    Hamming balls, the exact circle intersection ``I(dv, d, n)`` (Eq. 2), Kanerva's lune form and
    normal approximation, expected neuron counts, spherical cap intersections (continuous SDM),
    and the log-linear ``beta`` fit (Eq. 10) with the analytic ``beta`` of Eq. 21.

Everything public in the submodules is re-exported here, so ``from assocmem.sdm import
circle_intersection`` works.
"""

from .geometry import *  # noqa: F401,F403
from .geometry import __all__ as _geometry_all

__all__ = list(_geometry_all)
