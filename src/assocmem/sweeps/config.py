"""What a sweep is: a frozen config type, named presets, a grid of points, and one point's work.

A *sweep* is a named experiment whose configuration is a small frozen dataclass. Its named
*presets* (``quick``, ``cpu``, ``paper``; see the project's DESIGN, "Presets and results") are
instances of that dataclass. ``points(config)`` lists the grid: one small dict of JSON scalars per
point, all with the same keys; the dict itself is the point's *key*. ``run_point(config, point,
device)`` computes the point and returns its result row (a dict) or rows (a list of dicts).

The engine adds two columns to every row: ``seed``, the point's seed from :func:`point_seed`, and
``wall_time_s``, the seconds ``run_point`` took. Both names are reserved.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TYPE_CHECKING

import numpy as np

from assocmem._checks import as_int

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "RESERVED_COLUMNS",
    "UnknownNameError",
    "Sweep",
    "canonical_key",
    "point_seed",
    "config_to_json",
    "override",
    "OMIT_DEFAULT",
]

#: Metadata key of a config field that :func:`config_to_json` leaves out while the field holds its
#: default: ``dataclasses.field(default=..., metadata={OMIT_DEFAULT: True})``. An opt-in field added
#: to an existing config this way keeps the stored config of every run made without it (and so
#: the committed results of its presets) equal to what the preset produces.
OMIT_DEFAULT = "omit_default"

#: Columns the engine adds to every row; neither a point nor a result may use these names.
RESERVED_COLUMNS = ("seed", "wall_time_s")

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SCALARS = (bool, int, float, str, type(None))


class UnknownNameError(ValueError):
    """A sweep or preset name that is not registered; the message lists the valid names.

    Attributes
    ----------
    kind : str
        ``"sweep"`` or ``"preset"``.
    name : str
        The name asked for.
    valid : tuple of str
        The names that exist.
    """

    def __init__(self, kind: str, name: object, valid: Iterable[str]) -> None:
        self.kind, self.name, self.valid = kind, name, tuple(sorted(valid))
        super().__init__(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(self.valid) or '(none)'}")


def _scalar(value: Any, what: str) -> bool | int | float | str | None:
    """A plain Python scalar for ``value`` (numpy scalars unwrapped), or a clear error."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, _SCALARS):
        raise TypeError(f"{what} must be a bool, int, float, str or None; got {type(value).__name__} {value!r}")
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        raise ValueError(f"{what} must not contain line breaks; got {value!r}")
    return value


def canonical_key(point: Mapping[str, Any]) -> str:
    """The stable identity of a grid point: its JSON with sorted keys and no spaces.

    Parameters
    ----------
    point : mapping of str to JSON scalar
        One grid point, e.g. ``{"d_k": 16, "n": 8}``.

    Returns
    -------
    str
        E.g. ``'{"d_k":16,"n":8}'``. Equal points give equal keys on every machine; ``1`` and
        ``1.0`` are different keys.

    Raises
    ------
    ValueError
        If a value is NaN or infinite (not valid JSON, and never equal to itself), or a string
        holds a line break.
    TypeError
        If ``point`` is not a mapping, a key is not a non-empty str, or a value is not a JSON
        scalar (numpy scalars are taken as the Python ones they hold).
    """
    if not isinstance(point, Mapping):
        raise TypeError(f"a point must be a mapping of str to JSON scalars; got {type(point).__name__} {point!r}")
    plain = {}
    for k, v in point.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"point keys must be non-empty strings; got {k!r}")
        v = _scalar(v, f"point value {k!r}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"point value {k!r} is {v}; a point's values must be finite")
        plain[k] = v
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_seed(config: Any, point: Mapping[str, Any]) -> int:
    """The seed of one grid point, derived from ``config.seed`` and the point's key.

    ``run_point`` should seed its generators with this value; the engine records the same value
    in the ``seed`` column. Points get independent streams (``numpy.random.SeedSequence`` over
    the base seed and a SHA-256 of :func:`canonical_key`), identical on every machine and
    independent of the order in which points run.

    Parameters
    ----------
    config : dataclass instance
        The sweep's config; its ``seed`` field (an int) is the base seed, 0 when it has none.
    point : mapping
        The grid point.

    Returns
    -------
    int
        A seed in ``[0, 2**32)``.

    Raises
    ------
    ValueError
        If ``config.seed`` is not an integer (a bool, a str or ``1.5`` would be truncated or
        misread silently), or the point is not valid (:func:`canonical_key`).
    """
    base = as_int(getattr(config, "seed", 0), "config.seed")
    digest = hashlib.sha256(canonical_key(point).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return int(np.random.SeedSequence([base % 2**32, *words]).generate_state(1)[0])


def _parse_scalar(text: str, like: Any, key: str):
    """``text`` read as a value of the type of ``like`` (the field's current value)."""
    t = text.strip()
    if isinstance(like, bool):
        low = t.lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{key}: expected true or false, got {text!r}")
    if isinstance(like, int):
        try:
            return int(t)
        except ValueError:
            raise ValueError(f"{key}: expected an integer, got {text!r}") from None
    if isinstance(like, float):
        try:
            return float(t)
        except ValueError:
            raise ValueError(f"{key}: expected a number, got {text!r}") from None
    if isinstance(like, str):
        return t
    if like is None:  # an optional field left unset: a number where it reads as one, else text
        if t.lower() == "none":
            return None
        for kind in (int, float):
            try:
                return kind(t)
            except ValueError:
                pass
        return t
    raise ValueError(f"{key}: a {type(like).__name__} field cannot be set from the command line")


def override(config: Any, assignments: Mapping[str, str]) -> Any:
    """A copy of the sweep config ``config`` with fields set from text (``--set key=value``).

    Each value is read as the type of the field's current value: an integer, a number, a string,
    ``true``/``false``, ``none``, or for a tuple a comma-separated list of such (``"16,32,64"``;
    its elements read like the current first element). The copy is made with
    :func:`dataclasses.replace`, so the config's own checks run on it.

    Parameters
    ----------
    config : dataclass instance
        A sweep's config (a preset).
    assignments : mapping of str to str
        Field name to the value's text.

    Returns
    -------
    dataclass instance
        Of the same type.

    Raises
    ------
    TypeError
        If ``config`` is not a dataclass instance.
    ValueError
        If a name is not a field of the config (the message lists the fields), a value does not
        read as the field's type, or the config's own checks refuse the result.
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"a sweep config must be a dataclass instance; got {type(config).__name__}")
    fields = [f.name for f in dataclasses.fields(config)]
    changes = {}
    for key, text in assignments.items():
        if key not in fields:
            raise ValueError(f"{type(config).__name__} has no field {key!r}; fields: {', '.join(fields)}")
        if not isinstance(text, str):
            raise TypeError(f"{key}: the value must be given as text, got {type(text).__name__}")
        current = getattr(config, key)
        if isinstance(current, tuple):
            like = current[0] if current else None
            parts = [p for p in text.split(",") if p.strip()]
            if not parts:
                raise ValueError(f"{key}: expected a comma-separated list, got {text!r}")
            changes[key] = tuple(_parse_scalar(p, like, key) for p in parts)
        else:
            changes[key] = _parse_scalar(text, current, key)
    try:
        return dataclasses.replace(config, **changes)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{type(config).__name__} refuses {changes}: {exc}") from None


def config_to_json(config: Any) -> dict:
    """``dataclasses.asdict(config)`` as it reads back from JSON (tuples become lists).

    A field marked with :data:`OMIT_DEFAULT` in its metadata is left out while it equals its
    default (so adding such a field changes no stored config).

    Raises
    ------
    TypeError
        If ``config`` is not a dataclass instance or holds values JSON cannot store.
    ValueError
        If it holds NaN or an infinity (JSON has neither).
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"a sweep config must be a dataclass instance; got {type(config).__name__}")
    data = dataclasses.asdict(config)
    for f in dataclasses.fields(config):
        if f.metadata.get(OMIT_DEFAULT) and data.get(f.name) == f.default:
            del data[f.name]
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except TypeError as exc:
        raise TypeError(f"config {type(config).__name__} holds a value JSON cannot store: {exc}") from None
    except ValueError:
        raise ValueError(f"config {type(config).__name__} holds NaN or an infinity, which JSON cannot "
                         f"store: {config!r}") from None


@dataclass(frozen=True, eq=False)
class Sweep:
    """A named sweep: config type, presets, grid and per-point computation.

    Build one with :func:`assocmem.sweeps.register_sweep`, which also checks it.

    Parameters
    ----------
    name : str
        Lower-case identifier (``[a-z][a-z0-9_]*``); the folder under ``results/``.
    config_type : type
        A frozen dataclass; every preset is an instance. Give it an int ``seed`` field.
    presets : mapping of str to config
        Named configs, at least ``"quick"``; by convention also ``"cpu"`` and ``"paper"``.
    points : callable
        ``points(config) -> list[dict]``: the grid. Each dict maps column names to JSON
        scalars (bool, int, float, str, None); all points have the same keys; no two are equal.
    run_point : callable
        ``run_point(config, point, device) -> dict | list[dict]``: the result row(s) of one
        point; ``device`` is a :class:`torch.device`. Rows hold scalars, all rows of a sweep the
        same fields, none named like a point key or a reserved column. Must be a module-level
        function (the process and Ray executors send it to other processes).
    description : str
        One line for ``python -m assocmem sweep --list``.

    Raises
    ------
    ValueError
        A bad sweep or preset name, no ``quick`` preset, or a description that is not one line.
    TypeError
        ``config_type`` is not a frozen dataclass, ``presets`` is not a mapping of its instances,
        or ``points``/``run_point`` is not callable.
    """

    name: str
    config_type: type
    presets: Mapping[str, Any]
    points: Callable[[Any], list]
    run_point: Callable[..., Any]
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"sweep name must match [a-z][a-z0-9_]*; got {self.name!r}")
        if not (dataclasses.is_dataclass(self.config_type) and isinstance(self.config_type, type)):
            raise TypeError(f"sweep {self.name!r}: config_type must be a dataclass type")
        if not self.config_type.__dataclass_params__.frozen:
            raise TypeError(f"sweep {self.name!r}: config_type {self.config_type.__name__} must be frozen")
        if not isinstance(self.presets, Mapping):
            raise TypeError(f"sweep {self.name!r}: presets must be a mapping of name -> config; "
                            f"got {type(self.presets).__name__}")
        if not isinstance(self.description, str) or "\n" in self.description:
            raise ValueError(f"sweep {self.name!r}: description must be one line of text; got {self.description!r}")
        presets = dict(self.presets)
        if "quick" not in presets:
            raise ValueError(f"sweep {self.name!r} needs a 'quick' preset; got {sorted(presets)}")
        for label, cfg in presets.items():
            if not isinstance(label, str) or not _NAME.match(label):
                raise ValueError(f"sweep {self.name!r}: preset name must match [a-z][a-z0-9_]*; got {label!r}")
            if type(cfg) is not self.config_type:
                raise TypeError(
                    f"sweep {self.name!r}: preset {label!r} is a {type(cfg).__name__}, "
                    f"not a {self.config_type.__name__}"
                )
            config_to_json(cfg)
        for what in ("points", "run_point"):
            if not callable(getattr(self, what)):
                raise TypeError(f"sweep {self.name!r}: {what} must be callable")
        object.__setattr__(self, "presets", MappingProxyType(presets))

    def config(self, preset: str) -> Any:
        """The config of the named preset.

        Raises
        ------
        UnknownNameError
            If there is no such preset (the message lists the valid ones).
        """
        try:
            return self.presets[preset]
        except (KeyError, TypeError):
            raise UnknownNameError("preset", preset, self.presets) from None

    def grid(self, config: Any) -> list[dict]:
        """``points(config)``, checked and with numpy scalars turned into Python ones.

        Returns
        -------
        list of dict
            The grid in the order ``points`` gave it (the order of the stored CSV).

        Raises
        ------
        ValueError or TypeError
            Empty grid, a point that is not a dict of scalars, points with different keys, a
            reserved column name, or two equal points.
        """
        raw = self.points(config)
        if not isinstance(raw, (list, tuple)) or not raw:
            raise ValueError(f"sweep {self.name!r}: points(config) must return a non-empty list of dicts")
        grid: list[dict] = []
        seen: set[str] = set()
        columns: tuple[str, ...] | None = None
        for i, p in enumerate(raw):
            if not isinstance(p, Mapping) or not p:
                raise TypeError(f"sweep {self.name!r}: point {i} must be a non-empty dict; got {p!r}")
            point = {}
            for k, v in p.items():
                if not isinstance(k, str) or not k:
                    raise TypeError(f"sweep {self.name!r}: point {i} has a key that is not a string: {k!r}")
                if k in RESERVED_COLUMNS:
                    raise ValueError(f"sweep {self.name!r}: {k!r} is reserved and cannot be a point key")
                v = _scalar(v, f"sweep {self.name!r}: point {i} value {k!r}")
                if isinstance(v, float) and not math.isfinite(v):
                    raise ValueError(f"sweep {self.name!r}: point {i} value {k!r} is not finite")
                point[k] = v
            if columns is None:
                columns = tuple(point)
            elif set(point) != set(columns):
                raise ValueError(
                    f"sweep {self.name!r}: every point needs the keys {list(columns)}; point {i} has {list(point)}"
                )
            point = {k: point[k] for k in columns}
            key = canonical_key(point)
            if key in seen:
                raise ValueError(f"sweep {self.name!r}: the grid lists point {key} twice")
            seen.add(key)
            grid.append(point)
        return grid
