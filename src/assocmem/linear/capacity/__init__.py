"""Monte Carlo capacity of matrix memories under the seed's random-key model (chapter 03).

The chapter "How much can a matrix remember?" (seed §6-§7) measures how the read error of a
matrix memory grows with the number of stored pairs, and what the delta rule does when the pairs
outnumber the key dimension. Chapter 03 imports this package as ``cap``
(``from assocmem.linear import capacity as cap``); every public name of the submodules is
re-exported here.

Modules
-------
read_error          the random-key model (:func:`sample_pairs`) and the Monte Carlo read error of
                    the additive, least-squares, delta-rule and delta-limit memories
                    (:func:`batched_read_errors`, :func:`read_error_mc`, :func:`read_error_curve`,
                    :func:`n_grid`)
delta_rule          the least-squares memory ``S* = V K^+`` and the delta rule's sweep as an affine
                    map and its limit, batched (:func:`least_squares_state`,
                    :func:`delta_pass_map`, :func:`delta_limit`)
pairs_at_error      the ``eps d_k`` rule measured with a decisive statistical test
                    (:func:`max_pairs_at_error_mc`)
delta_convergence   repeated delta-rule passes against ``S*``, and the limit's distance from ``S*``
                    as a function of ``beta`` (:func:`delta_convergence`, :func:`delta_limit_curve`)
presets             the chapter's experiment sizes (:data:`PRESETS`, :func:`get_preset`)

The closed forms the measurements are compared with are in :mod:`assocmem.linear.theory`; the
single-memory classes the batched kernels mirror are in :mod:`assocmem.linear.memory`. The
``demo`` sweep (:mod:`assocmem.linear.demo_sweeps`) also uses :func:`read_error_mc`.
"""

from assocmem.linear.capacity.delta_convergence import DeltaConvergence, delta_convergence, delta_limit_curve
from assocmem.linear.capacity.delta_rule import delta_limit, delta_pass_map, least_squares_state
from assocmem.linear.capacity.pairs_at_error import PairsAtError, max_pairs_at_error_mc
from assocmem.linear.capacity.presets import PRESETS, CapacityPreset, get_preset
from assocmem.linear.capacity.read_error import (
    MEMORY_KINDS,
    VALUE_DISTS,
    ReadError,
    batched_read_errors,
    n_grid,
    read_error_curve,
    read_error_mc,
    sample_pairs,
)

__all__ = [
    "MEMORY_KINDS",
    "VALUE_DISTS",
    "ReadError",
    "sample_pairs",
    "batched_read_errors",
    "read_error_mc",
    "read_error_curve",
    "n_grid",
    "least_squares_state",
    "delta_pass_map",
    "delta_limit",
    "PairsAtError",
    "max_pairs_at_error_mc",
    "DeltaConvergence",
    "delta_convergence",
    "delta_limit_curve",
    "CapacityPreset",
    "PRESETS",
    "get_preset",
]
