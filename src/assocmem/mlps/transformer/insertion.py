"""Fact-storing MLPs built for insertion into the SSFR Transformer.

:func:`build_mlp` builds one of the book's MLP memories for the fact set of an SSFR task
(:func:`~assocmem.mlps.transformer.ssfr.fact_set`: keys and values are the fact-token
embeddings) through the builders the capacity sweeps use
(:func:`assocmem.mlps.capacity_sweeps.build_memory`, and :func:`assocmem.mlps.mlp.train_mlp` with
``loss="mse"`` for the MSE-trained GD MLP), freezes it and checks that it maps ``R^d -> R^d``.

The GD MLP. Inside Transformers the authors' code trains a gated MLP with ReLU and biases, their
text a bilinear one; the book inserts the **bilinear** gated MLP without biases of its standalone
chapters (:func:`~assocmem.mlps.mlp.train_mlp`, App. A.1.1), so that the MLP inside the Transformer
is the one whose margins chapters 10-13 measure. Two losses: cross-entropy of the value logits
(``gd_ce``, the capacity sweeps' criterion) and the mean squared error to the value embedding
(``gd_mse``), the pair compared in App. A.4.5.

References
----------
Seed 001, App. A.1.1 (the MLP variants), A.1.2 (MLPs inserted frozen, sharing the Transformer's
embeddings), A.4.3 (the methods of the Transformer capacity sweep), A.4.5 (CE against MSE).
"""

from __future__ import annotations

import torch

from assocmem._checks import as_int, positive_int
from assocmem.mlps._checks import module_device, module_dtype, probe_map
from assocmem.mlps.capacity_sweeps import build_memory
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp import FactMLP, train_mlp
from assocmem.mlps.transformer.ssfr import check_seed
from assocmem.devices import resolve_device

__all__ = ["METHODS", "build_mlp", "check_mlp_width"]

#: The memories that can be inserted: GD with cross-entropy or MSE, the NTK baseline, and the
#: unwhitened, whitened and data-dependent Hebbian constructions (App. A.4.3).
METHODS = ("gd_ce", "gd_mse", "ntk", "unwhitened", "whitened", "data_dependent")


def check_mlp_width(mlp: torch.nn.Module, d: int) -> None:
    """Raise :class:`ValueError` unless ``mlp`` maps a ``(2, d)`` batch to ``(2, d)``.

    The probe is in the MLP's own dtype (float64 for an MLP without floating-point weights), on
    its device, and changes nothing in the MLP (:func:`assocmem.mlps._checks.probe_map`).

    Raises
    ------
    ValueError
        ``mlp`` is not a ``torch.nn.Module``, ``d`` is not an integer ``>= 1``, or the MLP fails
        on, or returns another shape for, a ``(2, d)`` input.
    """
    if not isinstance(mlp, torch.nn.Module):
        raise ValueError(f"mlp must be a torch.nn.Module; got {type(mlp).__name__}")
    d = as_int(d, "d", minimum=1)
    probe_map(mlp, d, "the MLP", dtype=module_dtype(mlp), device=module_device(mlp, torch.device("cpu")))


def _objective(mlp, facts: FactSet, loss: str) -> float:
    """The GD objective of ``mlp`` on ``facts``, in float64: cross-entropy of the value logits or MSE."""
    with torch.no_grad():
        keys = facts.keys.to(dtype=torch.float64)
        values = facts.values.to(dtype=torch.float64)
        out = mlp.double()(keys.to(next(iter(mlp.parameters()), keys).device)).cpu()  # (F, d)
        if loss == "ce":
            return float(torch.nn.functional.cross_entropy(out @ values.T, facts.mapping))
        return float(((out - values[facts.mapping]) ** 2).sum(dim=1).mean())


def _check_converged(mlp, facts: FactSet, loss: str, lr: float) -> None:
    """Raise if GD left non-finite weights or ended with a larger objective than its first epoch.

    :func:`~assocmem.mlps.mlp.train_mlp` raises on a non-finite loss; a learning rate far too large
    can instead throw the weights to a huge but finite place where the float32 loss reads 0 for the
    keys it gets right and the rest are wrong with enormous margins. The final objective, recomputed
    in float64, is then far above the first epoch's: that is a diverged run, not a trained MLP.
    """
    weights = [p.detach() for p in mlp.parameters()]
    if not all(bool(torch.isfinite(w).all()) for w in weights):
        raise ValueError(f"GD training diverged: non-finite weights (lr = {lr:g}); lower lr")
    info = getattr(mlp, "info", None) or {}
    history = info.get("losses") or []
    dtype = weights[0].dtype if weights else torch.float64
    final = _objective(mlp, facts, loss)
    mlp.to(dtype)  # _objective cast it to float64; back to the dtype it was trained in
    if history and not final <= history[0][1]:
        raise ValueError(f"GD training diverged: the final {loss} objective {final:.3g} exceeds the first epoch's "
                         f"{history[0][1]:.3g} (lr = {lr:g}); lower lr")


def build_mlp(method: str, facts: FactSet, m: int, seed: int = 0, *, epochs: int = 10000, lr: float = 1e-3,
              device: str | torch.device | None = None, dtype: torch.dtype | None = None) -> FactMLP:
    """A frozen fact-storing MLP of hidden width ``m`` for ``facts``, ready to insert.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    facts : FactSet
        Typically :func:`~assocmem.mlps.transformer.ssfr.fact_set` of the task's embeddings and map;
        keys and values must have the same width ``d`` (the MLP maps ``R^d -> R^d``).
    m : int
        Hidden width, ``>= 1``.
    seed : int, default 0
        Seed of the method's random weights (features, NTK gate, GD initialisation).
    epochs, lr : int, float
        GD only (``gd_ce``, ``gd_mse``): full-batch Adam epochs and initial learning rate
        (:func:`~assocmem.mlps.mlp.train_mlp`; the seed's 10,000 epochs by default).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        GD only: where it trains. The constructions run where the fact set lives.
    dtype : torch.dtype, optional
        Cast the built MLP's weights (e.g. float32 for speed inside a float32 Transformer). By
        default the constructions stay in float64 and GD in float32, as built.

    Returns
    -------
    assocmem.mlps.mlp.FactMLP
        ``num_parameters = 3 m d``; ``requires_grad`` off on every weight.

    Raises
    ------
    ValueError
        An unknown method (the message lists them), ``m < 1``, a seed outside ``[0, 2^63)``, a fact
        set whose keys and values differ in width, a dtype other than float32 / float64, what the
        builder rejects, or (GD) a diverged run: non-finite weights, or a final objective
        (recomputed in float64) above the first epoch's.

    References
    ----------
    Seed 001, App. A.1.1 and A.4.3 (methods), A.4.5 (GD with MSE).
    """
    device = resolve_device(device)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet; got {type(facts).__name__}")
    if facts.keys.shape[1] != facts.values.shape[1]:
        raise ValueError("an MLP inserted in the Transformer maps R^d -> R^d: keys and values need one width d")
    m = positive_int("m", m)
    seed = check_seed(seed)
    if dtype is not None and dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64; got {dtype}")
    if method == "gd_mse":
        mlp = train_mlp(facts, m, epochs=epochs, lr=lr, loss="mse", seed=seed, device=device,
                        dtype=torch.float32)
    else:
        mlp = build_memory("gd" if method == "gd_ce" else method, facts, m, seed, epochs=epochs, lr=lr,
                           device=device)
    if method in ("gd_ce", "gd_mse"):
        _check_converged(mlp, facts, "ce" if method == "gd_ce" else "mse", lr)
    if dtype is not None:
        mlp = mlp.to(dtype)
    mlp.requires_grad_(False)
    check_mlp_width(mlp, facts.dim)
    mlp.construction_method = method
    return mlp
