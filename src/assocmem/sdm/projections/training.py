"""Training a key/query projection through one softmax read, as the authors do (App. B.7).

Bricken & Pehlevan (2021), App. B.7, learn a linear map ``W`` of images into the ``n = 64``
space of their attention setting: keys and queries are read as ``W x / |W x|``, the values stay
in pixel space, and ``W`` is trained by Adam to make one softmax read of a perturbed image
return the clean one (``train_projection`` in the authors' ``utils_LearnProjections.py``,
[BP21-code] in :mod:`assocmem.sdm.projections`). :func:`train_projection` does the same and
returns a :class:`LearntProjection`: the matrix, its standard-normal initialisation (the
``"random"`` baseline), the loss and cosine per epoch, and the :class:`ProjectionConfig` it was
trained with. Used by chapter 36 through :func:`assocmem.sdm.projections.run_projection_preset`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem.devices import resolve_device
from assocmem.sdm._common import _torch_seed
from assocmem.sdm.projections._common import _as_float, _check_dtype, _images, _unit_rows
from assocmem.sdm.projections.protocol import (
    AUTHORS_BASE_DIM,
    AUTHORS_TRAIN_LEVELS,
    _perturb,
    level_to_cosine,
)
from assocmem.dtypes import resolve_dtype

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "ProjectionConfig",
    "LearntProjection",
    "train_projection",
]


@dataclass(frozen=True)
class ProjectionConfig:
    """How a :class:`LearntProjection` was trained (the arguments of :func:`train_projection`)."""

    n_out: int
    n_base: int
    d: int
    beta: float
    epochs: int
    batch_size: int
    lr: float
    train_levels: tuple[float, float]
    base_dim: int
    seed: int
    dtype: str
    num_train: int


@dataclass(frozen=True, eq=False)
class LearntProjection:
    """A key/query projection trained as in App. B.7, with its history.

    Attributes
    ----------
    weight : torch.Tensor, shape ``(n_out, n_base)``
        The learnt matrix ``W`` (CPU, the training dtype). Keys and queries are read as
        ``W x / |W x|``; stored values stay in pixel space.
    initial_weight : torch.Tensor, shape ``(n_out, n_base)``
        The standard-normal matrix training started from (the ``"random"`` baseline).
    losses : tuple of float
        Mean training loss of each epoch, ``sum((out - target)^2)`` per query, averaged over the
        epoch's batches (the authors' per-batch loss, averaged).
    cosines : tuple of float
        Mean cosine of the one-step training read to its clean target, per epoch.
    initial_loss, initial_cosine : float
        The same two numbers for ``initial_weight``, over one pass of the training set with
        perturbations drawn from the training seed (no update).
    config : ProjectionConfig
    seconds : float
        Wall-clock training time.
    """

    weight: torch.Tensor
    initial_weight: torch.Tensor
    losses: tuple[float, ...]
    cosines: tuple[float, ...]
    initial_loss: float
    initial_cosine: float
    config: ProjectionConfig
    seconds: float = 0.0

    @property
    def n_out(self) -> int:
        """Dimension of the projected space."""
        return int(self.weight.shape[0])

    @property
    def n_base(self) -> int:
        """Pixels of an input image."""
        return int(self.weight.shape[1])

    def project(self, images: ArrayLike) -> torch.Tensor:
        """``W x / |W x|`` for each row of ``images`` ``(N, n_base)``; returns ``(N, n_out)``.

        Raises
        ------
        ValueError
            On a shape mismatch, non-finite values, zero rows, or an image that ``W`` maps to 0.
        """
        x = _images(images, "images", self.n_base).to(self.weight.dtype)
        p = x @ self.weight.T
        if bool((torch.linalg.vector_norm(p, dim=-1) == 0).any()):
            raise ValueError("an image projects to the zero vector and has no direction")
        return _unit_rows(p)

    def curve(self) -> pd.DataFrame:
        """The training curve: ``epoch`` (0 = before training), ``loss``, ``cosine``."""
        return pd.DataFrame({
            "epoch": np.arange(len(self.losses) + 1),
            "loss": (self.initial_loss,) + tuple(self.losses),
            "cosine": (self.initial_cosine,) + tuple(self.cosines),
        })


def _softmax_read(w: torch.Tensor, values: torch.Tensor, queries: torch.Tensor, beta: float):
    """One training read: ``softmax(beta <W q, W x_mu>) @ values`` with unit projections."""
    pk = _unit_rows(values @ w.T)
    pq = _unit_rows(queries @ w.T)
    a = torch.softmax(beta * (pq @ pk.T), dim=-1)
    return a @ values


def train_projection(train_images: ArrayLike, n_out: int = 64, *, d: int = 11, beta: float | None = None,
                     epochs: int = 10, batch_size: int = 128, lr: float = 0.005,
                     train_levels: tuple[float, float] = AUTHORS_TRAIN_LEVELS,
                     base_dim: int = AUTHORS_BASE_DIM, seed: int = 0,
                     device: str | torch.device | None = None,
                     dtype: torch.dtype | None = None) -> LearntProjection:
    """Learn the key/query projection ``W`` of App. B.7 by gradient descent through a read.

    Every step takes a shuffled batch of training images, perturbs each to a cosine drawn
    uniformly between the cosines of ``train_levels`` (keeping its norm), reads once from a
    memory holding *all* training images with keys and queries projected by ``W`` and
    L2-normalised and the values left in pixel space,
    ``out = sum_mu softmax_mu(beta <W q, W x_mu>) x_mu``, and takes an Adam step on
    ``sum((out - target)^2) / batch``. ``W`` starts standard normal.

    Parameters
    ----------
    train_images : array_like or torch.Tensor, shape ``(N, n_base)``
        One image per row, real and finite, no all-zero row.
    n_out : int, default 64
        Dimension of the projected space, ``>= 1`` (the authors: 64).
    d : int, default 11
        Radius whose fitted ``beta`` the read uses (Eq. 10, binary intersection at ``n_out``,
        the authors' convention: 35.5, 20.0, 15.9, 10.1 for ``d = 5, 9, 11, 15``).
    beta : float, optional
        Inverse temperature; overrides the fit (needed when ``n_out < 2`` or ``d < 2``).
    epochs : int, default 10
        Passes over the training set, ``>= 1`` (the authors: 10 epochs of 60,000 images).
    batch_size : int, default 128
        ``>= 1``; the last batch of an epoch may be smaller.
    lr : float, default 0.005
        Adam learning rate, ``> 0``.
    train_levels : (float, float), default (10, 100)
        Range of the training perturbation in the authors' units (:func:`level_to_cosine`).
    base_dim : int, default 784
        Pixels the levels are counted in.
    seed : int, default 0
        Seeds the initial ``W``, the shuffling and the perturbations (CPU generators, so the same
        on every device up to floating-point order).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where training runs (:func:`assocmem.devices.resolve_device`).
    dtype : torch.float32 or torch.float64, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).

    Returns
    -------
    LearntProjection
        ``weight`` and ``initial_weight`` on the CPU.

    Raises
    ------
    ValueError
        On images that are not a nonempty ``(N, n_base)`` real finite array or contain an
        all-zero row, ``n_out < 1``, a bad ``d``, ``beta``, ``epochs``, ``batch_size``, ``lr``,
        ``train_levels`` or ``dtype`` (booleans and strings are refused for the numbers;
        float16/bfloat16 for the dtype and the images), a ``beta`` that overflows ``dtype``, or
        a training that diverges (a non-finite loss or weight: ``lr`` too large) instead of
        returning NaN weights.
    RuntimeError
        If the device is not available.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (Figs. 30-31); the authors' ``train_projection``
    (``utils_LearnProjections.py``) and ``LearnProjections.ipynb`` cells 2-3; seed 002,
    "Convergence experiments (App. B.7)".

    Examples
    --------
    >>> from assocmem.datasets import load_digits_patterns
    >>> x = load_digits_patterns().train / 16
    >>> proj = train_projection(x[:256], n_out=64, epochs=2, device="cpu")
    >>> proj.weight.shape
    torch.Size([64, 64])
    """
    dtype = resolve_dtype(dtype)
    x = _images(train_images, "train_images")
    n_out = _as_int(n_out, "n_out", minimum=1)
    d = _as_int(d, "d")
    if beta is None:
        if not 2 <= d <= n_out:
            raise ValueError(f"fitting beta needs 2 <= d <= n_out = {n_out}, got d = {d}; pass beta")
        from assocmem.sdm.geometry.beta_fit import fit_beta

        beta = fit_beta(n_out, d, convention="authors", intersection="binary").beta
    beta = _as_float(beta, "beta")
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    epochs = _as_int(epochs, "epochs", minimum=1)
    batch_size = _as_int(batch_size, "batch_size", minimum=1)
    lr = _as_float(lr, "lr")
    if lr <= 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if isinstance(train_levels, (str, bytes)) or not hasattr(train_levels, "__len__") \
            or len(train_levels) != 2:
        raise ValueError(f"train_levels must be two numbers (lo, hi), got {train_levels!r}")
    lo, hi = (_as_float(v, "train_levels") for v in train_levels)  # no booleans or strings
    if not lo <= hi:
        raise ValueError(f"train_levels must satisfy lo <= hi, got {train_levels!r}")
    c_hi, c_lo = level_to_cosine(lo, base_dim), level_to_cosine(hi, base_dim)
    seed = _torch_seed(seed)
    dtype = _check_dtype(dtype)
    if beta > float(torch.finfo(dtype).max):  # beta * cosine would be inf and the softmax NaN
        raise ValueError(f"beta = {beta!r} overflows {dtype}; use dtype=torch.float64")
    dev = resolve_device(device, dtype=dtype)

    t0 = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    m, n_base = x.shape
    w0 = torch.randn(n_out, n_base, generator=gen, dtype=torch.float64)
    values = x.to(dev, dtype)
    w = w0.to(dev, dtype).clone().requires_grad_(True)
    opt = torch.optim.Adam([w], lr=lr)

    def batches():
        perm = torch.randperm(m, generator=gen)
        for lo_i in range(0, m, batch_size):
            idx = perm[lo_i:lo_i + batch_size]
            cos = c_hi - (c_hi - c_lo) * torch.rand(idx.numel(), generator=gen, dtype=torch.float64)
            yield idx.to(dev), _perturb(values[idx.to(dev)], cos, gen)

    def score(out, target):
        loss = ((out - target) ** 2).sum() / target.shape[0]
        cos = (_unit_rows(out) * _unit_rows(target)).sum(-1)
        return loss, cos

    # the starting point, on its own stream so that training is the same with or without it
    gen_state = gen.get_state()
    with torch.no_grad():
        tot, cs = 0.0, []
        nb = 0
        for idx, q in batches():
            loss, cos = score(_softmax_read(w, values, q, beta), values[idx])
            tot += float(loss)
            nb += 1
            cs.append(cos)
        initial_loss, initial_cosine = tot / nb, float(torch.cat(cs).mean())
    gen.set_state(gen_state)

    losses, cosines = [], []
    for _ in range(epochs):
        tot, nb, cs = 0.0, 0, []
        for idx, q in batches():
            opt.zero_grad()
            out = _softmax_read(w, values, q, beta)
            loss, cos = score(out, values[idx])
            loss.backward()
            try:
                opt.step()
            except RuntimeError as err:  # Adam's step lr / (1 - beta1^t) beyond the dtype's range
                if "overflow" not in str(err):
                    raise
                raise ValueError(f"training diverged: the Adam step overflows {dtype} (lr = {lr!r} "
                                 "is too large); try a smaller lr") from None
            tot += float(loss.detach())
            nb += 1
            cs.append(cos.detach())
        losses.append(tot / nb)
        cosines.append(float(torch.cat(cs).mean()))
        if not (math.isfinite(losses[-1]) and bool(torch.isfinite(w).all())):
            raise ValueError(f"training diverged: the loss is {losses[-1]!r} after epoch "
                             f"{len(losses)} (non-finite weights); lr = {lr!r} is too large for "
                             f"beta = {beta:.4g}, try a smaller lr")
    config = ProjectionConfig(n_out=n_out, n_base=int(n_base), d=d, beta=beta, epochs=epochs,
                              batch_size=batch_size, lr=lr, train_levels=(lo, hi),
                              base_dim=int(base_dim), seed=seed, dtype=str(dtype).replace("torch.", ""),
                              num_train=int(m))
    return LearntProjection(weight=w.detach().to("cpu").clone(), initial_weight=w0.to(dtype),
                            losses=tuple(losses), cosines=tuple(cosines),
                            initial_loss=float(initial_loss), initial_cosine=float(initial_cosine),
                            config=config, seconds=time.perf_counter() - t0)
