"""Fact sets: the key -> value associations that an MLP memory has to store.

A *fact set* is a key table ``keys`` of shape ``(F, d)`` (one key per row), a value table
``values`` of shape ``(V, d)`` and a map ``mapping`` of shape ``(F,)``: fact ``i`` stores the
association ``k_i -> v_{f(i)}`` with ``f(i) = mapping[i]``. Rows (not columns) throughout, as in
the seed "MLPs are Hebbians" (Part II of the book), where ``K`` is ``F x d`` and the target matrix
``C_f`` stacks ``c_{f(i)} = v_{f(i)}`` as rows; here ``C_f`` is :attr:`FactSet.targets`.

Two kinds of table follow the authors' experiments (seed 001, App. A.1 and A.3):

* **tied** (capacity sweeps): the value table *is* the key table with its rows permuted,
  ``values = keys[perm]`` for a seeded random permutation ``perm``, and the map is the identity,
  so fact ``i`` maps ``k_i`` to ``k_{perm(i)}``;
* **untied** (margin sweeps): keys and values are independent points on the sphere and the map is
  the identity.

Embeddings are uniform on the unit sphere ``S^{d-1}`` (normalised Gaussians). The anisotropic
variant applies a rank-1 *spike* ``e' = normalise(e + beta <e, u> u)`` with one fixed unit
direction ``u`` per sweep (seed, Sec. 4 and App. B.2; the same ``u`` for keys and values).

References
----------
Seed 001, "MLPs are Hebbians": Sec. 2 (fact sets and the task), Sec. 4 (anisotropic embeddings),
App. B.2 (experimental setup).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from assocmem._checks import as_real, positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem._checks import as_bool
from assocmem.mlps._checks import check_finite_result

__all__ = [
    "FactSet",
    "make_fact_set",
    "random_direction",
    "spike",
    "with_spike",
    "UNIT_NORM_TOL",
]

#: Tolerance on ``| ||e|| - 1 |`` for rows that must lie on the unit sphere.
UNIT_NORM_TOL = 1e-6


def _generator(seed: int) -> torch.Generator:
    # Draws happen on the CPU so a seed gives the same fact set on every device.
    return torch.Generator(device="cpu").manual_seed(_seed(seed))


def _check_unit_rows(name: str, x: torch.Tensor, tol: float = UNIT_NORM_TOL) -> None:
    if x.shape[0] == 0:
        return
    err = (torch.linalg.vector_norm(x.double(), dim=-1) - 1.0).abs().max().item()
    if err > tol:
        raise ValueError(
            f"{name} must have unit-norm rows (within {tol:g}); the worst row is off by {err:.3g}"
        )


def _check_distinct_rows(values: torch.Tensor) -> None:
    """Refuse a value table with two equal rows (strict-argmax decoding could never pick one)."""
    if values.shape[0] < 2 or values.device.type == "meta":
        return
    # a sort over rows: O(V d log V), the price of one decode
    distinct = torch.unique(values, dim=0).shape[0]
    if distinct < values.shape[0]:
        raise ValueError(
            f"values holds {values.shape[0] - distinct} repeated row(s) ({distinct} distinct of "
            f"{values.shape[0]}): decoding compares an output with every value row and counts a tie "
            "as a failure, so a fact mapped to a repeated row can never be recalled; pass each "
            "distinct value row once and say which one each fact stores with mapping "
            "(e.g. FactSet(keys, authors, author_of_fact) rather than "
            "FactSet(keys, authors[author_of_fact], arange(F)))"
        )


@dataclass(frozen=True, eq=False, repr=False)
class FactSet:
    """A set of ``F`` facts ``k_i -> v_{f(i)}`` over a value table of ``V`` rows in ``R^d``.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``, floating dtype
        One key per row. Unit rows when ``unit_norm`` is true.
    values : torch.Tensor, shape ``(V, d)``, same dtype and device as ``keys``
        The value table; decoding compares an output with *every* row, so rows must be
        distinct (equal rows are refused: pass each value once and a ``mapping``).
    mapping : torch.Tensor, shape ``(F,)``, int64
        ``mapping[i]`` is the value row of fact ``i``; entries in ``[0, V)``. Any integer dtype
        is accepted and stored as int64.
    unit_norm : bool, default True
        Require unit-norm rows in ``keys`` and ``values`` (within :data:`UNIT_NORM_TOL`).

    Raises
    ------
    ValueError
        Wrong ranks or widths, ``F = 0`` or ``V = 0`` or ``d = 0``, non-floating or
        non-finite embeddings, float16 / bfloat16 embeddings (the dtype policy of
        :mod:`assocmem.dtypes`: float32 or float64), a non-integer map, map entries outside
        ``[0, V)``, rows off the sphere when ``unit_norm`` is set, a ``unit_norm`` that is not a
        bool, tensors on different devices, or two equal rows in ``values`` (decoding counts a
        tie as a failure, so a repeated row could never be recalled: pass distinct value rows
        and a ``mapping``).
    """

    keys: torch.Tensor  # (F, d)
    values: torch.Tensor  # (V, d)
    mapping: torch.Tensor  # (F,) int64
    unit_norm: bool = field(default=True)

    def __post_init__(self) -> None:
        k, v, f = self.keys, self.values, self.mapping
        for name, x in (("keys", k), ("values", v), ("mapping", f)):
            if not isinstance(x, torch.Tensor):
                raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        if k.dim() != 2 or v.dim() != 2:
            raise ValueError(
                f"keys and values must be 2-D (rows); got shapes {tuple(k.shape)}, {tuple(v.shape)}"
            )
        if k.shape[0] == 0:
            raise ValueError("a fact set needs at least one fact (F = 0)")
        if v.shape[0] == 0:
            raise ValueError("a fact set needs at least one value row (V = 0)")
        if k.shape[1] == 0 or k.shape[1] != v.shape[1]:
            raise ValueError(
                f"keys and values must share a positive width d; got {k.shape[1]} and {v.shape[1]}"
            )
        if not (k.is_floating_point() and v.is_floating_point()):
            raise ValueError(f"embeddings must be floating point; got {k.dtype}, {v.dtype}")
        if k.dtype != v.dtype:
            raise ValueError(f"keys and values must share a dtype; got {k.dtype} and {v.dtype}")
        check_float_dtype(k.dtype, "keys dtype")
        as_bool(self.unit_norm, "unit_norm")
        if k.device != v.device or k.device != f.device:
            raise ValueError("keys, values and mapping must live on the same device")
        if not (torch.isfinite(k).all() and torch.isfinite(v).all()):
            raise ValueError("keys and values must be finite")
        if f.dim() != 1 or f.shape[0] != k.shape[0]:
            raise ValueError(
                f"mapping must have shape (F,) = ({k.shape[0]},); got {tuple(f.shape)}"
            )
        if f.is_floating_point() or f.is_complex() or f.dtype == torch.bool:
            raise ValueError(f"mapping must be an integer tensor; got {f.dtype}")
        f = f.to(torch.int64)
        lo, hi = int(f.min()), int(f.max())
        if lo < 0 or hi >= v.shape[0]:
            raise ValueError(
                f"mapping entries must lie in [0, V) = [0, {v.shape[0]}); got range [{lo}, {hi}]"
            )
        if self.unit_norm:
            _check_unit_rows("keys", k)
            _check_unit_rows("values", v)
        _check_distinct_rows(v)
        if f is not self.mapping:  # every check passed: store the int64 map
            object.__setattr__(self, "mapping", f)

    def __repr__(self) -> str:
        return (f"FactSet(F={self.num_facts}, V={self.num_values}, d={self.dim}, "
                f"dtype={self.keys.dtype}, device={self.keys.device}, unit_norm={self.unit_norm})")

    @property
    def num_facts(self) -> int:
        """``F``, the number of stored facts."""
        return self.keys.shape[0]

    @property
    def num_values(self) -> int:
        """``V``, the number of rows in the value table."""
        return self.values.shape[0]

    @property
    def dim(self) -> int:
        """``d``, the embedding width."""
        return self.keys.shape[1]

    @property
    def targets(self) -> torch.Tensor:
        """``C_f = values[mapping]``, shape ``(F, d)``: row ``i`` is the value fact ``i`` must return."""
        return self.values[self.mapping]  # (F, d)

    def to(self, device: str | torch.device | None = None, dtype: torch.dtype | None = None) -> "FactSet":
        """A copy on another device and/or floating dtype (the map stays int64).

        Raises
        ------
        ValueError
            A ``dtype`` other than torch.float32 or torch.float64 (the dtype policy of
            :mod:`assocmem.dtypes`), or a cast that overflows it (rows beyond float32's range).
        """
        dt = self.keys.dtype if dtype is None else check_float_dtype(dtype)
        dev = None if device is None else resolve_device(device, dtype=dt)
        return FactSet(
            cast_checked(self.keys, dt, "keys").to(device=dev),
            cast_checked(self.values, dt, "values").to(device=dev),
            self.mapping.to(device=dev),
            unit_norm=self.unit_norm,
        )


def _sphere(n: int, d: int, gen: torch.Generator) -> torch.Tensor:
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)  # (n, d)
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def make_fact_set(
    num_facts: int,
    d: int,
    tied: bool = True,
    seed: int = 0,
    num_values: int | None = None,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> FactSet:
    """Draw a random fact set with keys and values uniform on the unit sphere.

    Draw order (on the CPU, float64, one ``torch.Generator`` seeded with ``seed``): the ``F``
    keys first, so that a seed gives the same keys for tied and untied tables; then

    * ``tied=True``: a permutation ``perm`` of ``range(F)``; ``values = keys[perm]`` and
      ``mapping = arange(F)``, so fact ``i`` maps ``k_i -> k_{perm(i)}``. The *value table* is
      the permuted key table; the map is the identity (the permutation lives in the table).
    * ``tied=False``: ``V`` independent values. If ``V = F`` (the default) the map is the
      identity; otherwise ``mapping`` is drawn uniformly from ``[0, V)`` (several facts may share
      a value when ``V < F``).

    Parameters
    ----------
    num_facts : int
        ``F >= 1``.
    d : int
        Embedding width, ``d >= 1``.
    tied : bool, default True
        Tied (capacity sweeps) or untied (margin sweeps) tables.
    seed : int, default 0
        Seed of every random draw.
    num_values : int, optional
        ``V``; defaults to ``F``. Tied tables need ``V = F``.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        torch.float64 or torch.float32 (the dtype policy of :mod:`assocmem.dtypes`): the
        embeddings are drawn in float64, then cast and, for float32, renormalised in it.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where the tensors live (``"auto"`` allowed).

    Returns
    -------
    FactSet
        ``keys`` ``(F, d)``, ``values`` ``(V, d)``, ``mapping`` ``(F,)`` int64.

    Raises
    ------
    ValueError
        ``F < 1``, ``d < 1``, ``V < 1``, a tied table with ``V != F``, a ``tied`` that is not a
        bool, a non-integer seed, or a dtype other than float32 / float64 (float16 and bfloat16
        are refused with the reason).

    References
    ----------
    Seed 001, Sec. 2 and App. B.2 (random spherical embeddings; tied tables in the capacity
    sweeps, untied in the margin sweeps).
    """
    dtype = resolve_dtype(dtype)
    F = _positive_int("num_facts", num_facts)
    d = _positive_int("d", d)
    V = F if num_values is None else _positive_int("num_values", num_values)
    tied = as_bool(tied, "tied")
    if tied and V != F:
        raise ValueError(f"a tied table has V = F = {F} value rows; got num_values={V}")
    check_float_dtype(dtype)
    gen = _generator(seed)
    keys = _sphere(F, d, gen)  # (F, d)
    if tied:
        perm = torch.randperm(F, generator=gen)  # (F,)
        values = keys[perm]  # (F, d)
        mapping = torch.arange(F, dtype=torch.int64)  # (F,)
    else:
        values = _sphere(V, d, gen)  # (V, d)
        if V == F:
            mapping = torch.arange(F, dtype=torch.int64)
        else:
            mapping = torch.randint(V, (F,), generator=gen, dtype=torch.int64)
    dev = resolve_device(device, dtype=dtype)
    keys, values = _cast_unit(keys, dtype, dev), _cast_unit(values, dtype, dev)
    return FactSet(keys, values, mapping.to(dev), unit_norm=True)


def _cast_unit(x: torch.Tensor, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    y = x.to(device=device, dtype=dtype)
    if dtype != torch.float64:
        y = y / torch.linalg.vector_norm(y, dim=-1, keepdim=True)
    return y


def random_direction(d: int, seed: int = 0, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A seeded unit vector ``u``, uniform on ``S^{d-1}`` (a normalised Gaussian).

    Parameters
    ----------
    d : int
        Width, ``d >= 1``.
    seed : int, default 0
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        torch.float64 or torch.float32.

    Returns
    -------
    torch.Tensor, shape ``(d,)``, on the CPU

    Raises
    ------
    ValueError
        ``d < 1``, a non-integer seed, or a dtype other than float32 / float64.
    """
    dtype = resolve_dtype(dtype)
    d = _positive_int("d", d)
    check_float_dtype(dtype)
    return _sphere(1, d, _generator(seed))[0].to(dtype)


def spike(embeddings: torch.Tensor, beta: float, direction: torch.Tensor) -> torch.Tensor:
    """Rank-1 spike transform ``e' = normalise(e + beta <e, u> u)`` of every row.

    Stretches the component along ``u`` by ``1 + beta`` and projects back to the sphere, which
    makes the embeddings anisotropic: their second-moment matrix gets one large eigenvalue along
    ``u``. ``beta = 0`` leaves unit rows unchanged.

    Parameters
    ----------
    embeddings : torch.Tensor, shape ``(..., d)``, float32 or float64
        Rows to transform (need not be unit; the output is).
    beta : float
        Spike strength, a real number ``beta > -1`` (so ``I + beta u u^T`` stays positive
        definite); booleans and strings are refused.
    direction : torch.Tensor or array-like, shape ``(d,)``
        The fixed direction ``u``; normalised here, so any non-zero vector works (a list is read
        in float64).

    Returns
    -------
    torch.Tensor, shape ``(..., d)``, unit rows, dtype and device of ``embeddings``

    Raises
    ------
    ValueError
        ``beta <= -1``, non-finite or not a real number (a bool or a string), a direction of the
        wrong shape, non-finite or of zero norm, non-floating, float16 / bfloat16 or non-finite
        embeddings, a zero row, or rows so large that the spike overflows their dtype.

    References
    ----------
    Seed 001, Sec. 4 (anisotropic embeddings) and App. B.2 and A.3.2 (one fixed ``u``
    per sweep, the same for keys and values, as in the authors' spike sweeps).
    """
    if not isinstance(embeddings, torch.Tensor) or not embeddings.is_floating_point():
        raise ValueError("embeddings must be a floating torch.Tensor")
    check_float_dtype(embeddings.dtype, "embeddings dtype")
    beta = as_real(beta, "beta", minimum=-1.0, strict_min=True)
    d = embeddings.shape[-1]
    u = direction if isinstance(direction, torch.Tensor) else torch.as_tensor(direction, dtype=torch.float64)
    if u.shape != (d,):
        raise ValueError(f"direction must have shape ({d},); got {tuple(u.shape)}")
    if u.is_complex() or not bool(torch.isfinite(u).all()):
        raise ValueError("direction must be a finite non-zero vector")
    if u.is_floating_point() and u.dtype != embeddings.dtype:
        # normalised in its own dtype first when the cast would overflow (a float64 direction
        # beyond float32's range is still a direction)
        big = u.abs().max() > torch.finfo(embeddings.dtype).max / 2
        u = u / u.abs().max() if big else u
    u = u.to(device=embeddings.device, dtype=embeddings.dtype)
    nu = torch.linalg.vector_norm(u)
    if not torch.isfinite(nu) or nu == 0:
        raise ValueError("direction must be a finite non-zero vector")
    if not torch.isfinite(embeddings).all():
        raise ValueError("embeddings must be finite")
    u = u / nu
    e = embeddings + beta * (embeddings @ u).unsqueeze(-1) * u  # (..., d)
    n = torch.linalg.vector_norm(e, dim=-1, keepdim=True)  # (..., 1)
    check_finite_result(n, "the norm of a spiked row")
    if (n == 0).any():
        raise ValueError("cannot spike a zero row onto the sphere")
    return check_finite_result(e / n, "the spiked embeddings")


def with_spike(
    facts: FactSet,
    beta: float,
    on: str = "both",
    direction: torch.Tensor | None = None,
    seed: int = 0,
) -> FactSet:
    """The fact set with the rank-1 spike applied to its keys, its values or both.

    The map is unchanged. Spiking ``"both"`` with one ``u`` keeps a tied table tied (the same
    row transform hits a key and its permuted copy).

    Parameters
    ----------
    facts : FactSet
    beta : float
        Spike strength (``beta > -1``; the paper's anisotropic sweeps use 1.5).
    on : {"keys", "values", "both"}, default "both"
    direction : torch.Tensor, shape ``(d,)``, optional
        The direction ``u``; ``None`` draws :func:`random_direction` ``(d, seed)``.
    seed : int, default 0
        Seed of the direction when ``direction`` is None.

    Returns
    -------
    FactSet

    Raises
    ------
    ValueError
        Not a FactSet, an unknown ``on``, or anything :func:`spike` rejects (a ``beta`` that is
        not a real number ``> -1``, a bool or a string among them).

    References
    ----------
    Seed 001, Sec. 4 and App. B.2.
    """
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet; got {type(facts).__name__}")
    if on not in ("keys", "values", "both"):
        raise ValueError(f"on must be 'keys', 'values' or 'both'; got {on!r}")
    u = random_direction(facts.dim, seed) if direction is None else direction
    keys = spike(facts.keys, beta, u) if on in ("keys", "both") else facts.keys
    values = spike(facts.values, beta, u) if on in ("values", "both") else facts.values
    return FactSet(keys, values, facts.mapping, unit_norm=facts.unit_norm)
