"""The authors' learnt-projection protocol: settings, perturbation units and memory arrangements.

The learnt-projection experiment of Bricken & Pehlevan (2021), App. B.7 (Figs. 30-31), as their
``LearnProjections.ipynb`` runs it ([BP21-code] in :mod:`assocmem.sdm.projections`): training
perturbations ``k ~ uniform(10, 100)`` (:data:`AUTHORS_TRAIN_LEVELS`), test levels
:data:`AUTHORS_TEST_LEVELS`, radii :data:`AUTHORS_RADII`, the exact continuous rules
:data:`AUTHORS_RULES` and the rule the projection is trained through (:data:`TRAIN_RULE`).
Levels are counted in MNIST pixels (:data:`AUTHORS_BASE_DIM`): level ``k`` means cosine
``1 - 2 k / 784`` to the clean image (:func:`level_to_cosine`, :func:`cosine_to_level`), and a
query is moved to that cosine along a uniformly random orthogonal direction, keeping its norm.
:data:`PROTOCOLS` names the arrangements of memory and queries (the authors' one stores no test
target) and :data:`BASELINES` the projections compared with the learnt one. Used by chapter 36
through :func:`assocmem.sdm.projections.run_projection_preset`.

Protocols (:data:`PROTOCOLS`)
-----------------------------
===================  ========================  ==========================  ===============
name                 memory                    queries and targets         target stored
===================  ========================  ==========================  ===============
``"authors"``        training images           test images                 no
``"stored"``         test images               test images                 yes
``"stored_all"``     training + test images    test images                 yes
``"stored_train"``   training images           training images             yes
===================  ========================  ==========================  ===============

``"stored"`` and ``"stored_all"`` ask the real generalisation question: the projection never
saw these images, but the memory holds them. ``"stored_all"`` keeps the training images as
distractors, so its memory is larger than the authors'. ``"stored_train"`` is the authors' own
"train" evaluation. Under ``"authors"`` the best any memory that returns one stored item can do
is the cosine of the target to its nearest stored (training) image, the ``nearest_bound`` column.
A softmax or SDM read returns a convex combination of stored images, which can exceed that bound
by blending; the frame counts how often it does (``exceeds_bound``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from assocmem._checks import as_int as _as_int
from assocmem.sdm._common import _real_array
from assocmem.sdm.read.patterns import rotate_to_cosine

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "AUTHORS_BASE_DIM",
    "AUTHORS_TRAIN_LEVELS",
    "AUTHORS_TEST_LEVELS",
    "AUTHORS_RADII",
    "AUTHORS_RULES",
    "TRAIN_RULE",
    "PROTOCOLS",
    "BASELINES",
    "level_to_cosine",
    "cosine_to_level",
]

#: Pixels of an MNIST image: the ``n_base`` in which the authors' perturbation levels are counted
#: (cosine ``1 - 2 k / 784``).
AUTHORS_BASE_DIM: int = 784
#: Training perturbations: ``k ~ uniform(10, 100)`` per query (``min/max_train_perturb``).
AUTHORS_TRAIN_LEVELS: tuple[int, int] = (10, 100)
#: Test perturbations: ``unique(int(linspace(0, 300, 7)))``.
AUTHORS_TEST_LEVELS: tuple[int, ...] = (0, 50, 100, 150, 200, 250, 300)
#: Radii at ``n = 64`` (``hamm_radii``).
AUTHORS_RADII: tuple[int, ...] = (5, 9, 11, 15)
#: The exact continuous rules the authors ran on projected images.
AUTHORS_RULES: tuple[str, ...] = ("Cont_SDM_BFit_Attention", "Cont_SDM_CFit_Attention", "Cont_SDM",
                                  "Cont_Binary_SDM")
#: The read the projection is trained through.
TRAIN_RULE: str = "Cont_SDM_BFit_Attention"
#: Memory / query arrangements (module docstring).
PROTOCOLS: tuple[str, ...] = ("authors", "stored", "stored_all", "stored_train")
#: Projections compared with the learnt one: its random initial matrix, and the identity (only
#: when ``n_out == n_base``).
BASELINES: tuple[str, ...] = ("random", "identity")


def level_to_cosine(level: ArrayLike, base_dim: int = AUTHORS_BASE_DIM) -> float | np.ndarray:
    """The cosine ``1 - 2 k / base_dim`` that the authors' perturbation level ``k`` sets.

    Parameters
    ----------
    level : float or array_like
        Hamming-equivalent perturbation ``k``, ``0 <= k <= base_dim``.
    base_dim : int, default 784
        Pixels the level is counted in (MNIST: 784; CIFAR-10: 1024).

    Returns
    -------
    float or numpy.ndarray
        Cosine between the perturbed query and its clean image.

    Raises
    ------
    ValueError
        If ``base_dim < 1`` or a level is outside ``[0, base_dim]``, not finite, a boolean or
        a string.

    References
    ----------
    The authors' ``hamm_to_cosine`` in ``cosine_perturb_queries``; Bricken & Pehlevan (2021),
    Eq. 5.
    """
    base_dim = _as_int(base_dim, "base_dim", minimum=1)
    try:
        k = _real_array(level, "level")  # no booleans or strings ("3" is not a level)
    except ValueError:
        raise ValueError(f"levels must lie in [0, base_dim] = [0, {base_dim}], got {level!r}") from None
    if np.any(k < 0) or np.any(k > base_dim):
        raise ValueError(f"levels must lie in [0, base_dim] = [0, {base_dim}], got {level!r}")
    c = 1.0 - 2.0 * k / base_dim
    return float(c) if c.ndim == 0 else c


def cosine_to_level(cosine: ArrayLike, base_dim: int = AUTHORS_BASE_DIM) -> float | np.ndarray:
    """Inverse of :func:`level_to_cosine`: ``k = base_dim (1 - c) / 2``.

    Raises
    ------
    ValueError
        If a cosine is outside ``[-1, 1]`` or not a finite real number (booleans and strings
        are refused), or ``base_dim < 1``.
    """
    base_dim = _as_int(base_dim, "base_dim", minimum=1)
    try:
        c = _real_array(cosine, "cosine")
    except ValueError:
        raise ValueError(f"cosines must lie in [-1, 1], got {cosine!r}") from None
    if np.any(np.abs(c) > 1):
        raise ValueError(f"cosines must lie in [-1, 1], got {cosine!r}")
    k = base_dim * (1.0 - c) / 2.0
    return float(k) if k.ndim == 0 else k


def _perturb(clean: torch.Tensor, cos: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Move each row to the given cosine along a random orthogonal direction, keeping its norm."""
    norm = torch.linalg.vector_norm(clean, dim=-1, keepdim=True)
    return rotate_to_cosine(clean, cos, seed=gen) * norm
