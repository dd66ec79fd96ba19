"""Type aliases shared by the library's signatures (imported under ``TYPE_CHECKING`` only).

Nothing here runs in the library: the modules use ``from __future__ import annotations`` and
import these names inside ``if TYPE_CHECKING:``, so an annotation costs nothing at runtime.

- :data:`ArrayLike`: what a function turns into an array or tensor itself (``numpy.asarray`` /
  ``torch.as_tensor``): a torch tensor, a numpy array, a Python number or a nested sequence.
- :data:`PathLike`: a file or folder path, ``str`` or :class:`os.PathLike`.
- :data:`Seed`: an ``int`` seed or a :class:`numpy.random.Generator` to draw from.
- :class:`FeatureModel`, :class:`PairKernelModel`, :data:`KernelModel`: a model the margin code
  reads through ``features(x)`` or ``kernel(x, z)``; :data:`MarginSource`: such a model or a
  precomputed Gram matrix.
"""

from __future__ import annotations

import os
from typing import Protocol, Union

import numpy as np
import numpy.typing as npt
import torch

ArrayLike = Union[torch.Tensor, npt.ArrayLike]
PathLike = Union[str, "os.PathLike[str]"]
Seed = Union[int, np.random.Generator]


class FeatureModel(Protocol):
    """A model with an explicit feature map ``features(x) -> phi(x)``, ``(N, d) -> (N, m)``."""

    def features(self, x: torch.Tensor, /) -> torch.Tensor: ...


class PairKernelModel(Protocol):
    """A model with a kernel ``kernel(x, z) -> K``, ``(N, d), (M, d) -> (N, M)``."""

    def kernel(self, x: torch.Tensor, z: torch.Tensor, /) -> torch.Tensor: ...


KernelModel = Union[FeatureModel, PairKernelModel]
MarginSource = Union[ArrayLike, FeatureModel, PairKernelModel]
