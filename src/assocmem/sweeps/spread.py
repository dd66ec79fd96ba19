"""Trained results as samples: their spread over trainings, and a live rerun checked against it.

A result that comes out of training (Adam runs, a trained attention, a language model) depends on
every rounding along thousands of steps. Another CPU (another SIMD width, another BLAS kernel) or
another thread count sums in another order and the trajectory ends elsewhere, sometimes a little,
sometimes as far as a training from another seed. So a stored training is one sample, and a rerun
is never checked against its digits. A sweep that trains stores several independent trainings of
every point (a grid column, ``training`` by convention), and a rerun is checked against what those
trainings measure:

:func:`training_spread`
    per point and result column: the number of trainings, their mean, standard deviation,
    minimum and maximum.
:func:`check_spread`
    every live value must lie in the two-sided prediction interval of one further training,
    ``mean +- t_{1 - alpha/2, n-1} * s * sqrt(1 + 1/n) + q``, with ``n`` the stored trainings of
    its point, ``s`` their standard deviation and ``q`` the column's resolution (one prompt of an
    accuracy, say: trainings that all agree give ``s = 0``, and a new one may still differ by one
    prompt). If the trainings' outcomes are normal, a fresh training falls outside with
    probability ``alpha`` (default 1 %); a rerun of the same seed on another machine usually lands
    much closer. A column that trainings spread widely gets a wide interval: the summary shows
    the interval's half-width beside the deviation, so a reader sees how much each check can
    detect.

The quantile is :func:`scipy.stats.t.ppf`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from assocmem._checks import as_real
from assocmem.sweeps.agreement import RowsDisagree

__all__ = ["check_spread", "training_spread", "prediction_half_width"]


def _names(value, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise ValueError(f"{what} must be column names; got {value!r}")
    return out


def prediction_half_width(n: int, sd: float, alpha: float = 0.01) -> float:
    """Half-width of the two-sided ``1 - alpha`` prediction interval of one more sample.

    ``t_{1 - alpha/2, n-1} * sd * sqrt(1 + 1/n)`` for ``n`` samples of standard deviation ``sd``
    (ddof 1), the interval around their mean in which a further independent sample from the same
    normal distribution falls with probability ``1 - alpha``.

    Raises
    ------
    ValueError
        ``n < 2``, a negative or non-finite ``sd``, or ``alpha`` outside ``(0, 1)``.
    """
    from scipy.stats import t

    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"n must be an integer >= 2; got {n!r}")
    sd = as_real(sd, "sd", minimum=0.0)
    alpha = as_real(alpha, "alpha", minimum=0.0, strict_min=True, maximum=1.0)
    if alpha >= 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    return float(t.ppf(1.0 - alpha / 2.0, int(n) - 1) * sd * np.sqrt(1.0 + 1.0 / int(n)))


def training_spread(frame: pd.DataFrame, keys: Sequence[str] | str, columns: Iterable[str] | str,
                    *, training: str = "training") -> pd.DataFrame:
    """Per point and column, how the trainings of ``frame`` spread.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a sweep with several trainings per point.
    keys : sequence of str
        The columns that identify a point (without ``training``).
    columns : iterable of str
        Numeric result columns.
    training : str, default "training"
        The column that numbers the trainings.

    Returns
    -------
    pandas.DataFrame
        One row per point and column: the keys, ``column``, ``trainings`` (non-NaN values),
        ``mean``, ``sd`` (ddof 1; NaN below two), ``min``, ``max``.

    Raises
    ------
    ValueError
        A missing key or column, ``training`` among the keys, or a point with a training twice.
    """
    keys, columns = _names(keys, "keys"), _names(columns, "columns")
    _check_frame(frame, "frame", keys, columns, training)
    records = []
    for key, group in frame.groupby(keys, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        for col in columns:
            v = pd.to_numeric(group[col], errors="raise").astype(float).dropna().to_numpy()
            records.append({**dict(zip(keys, key)), "column": col, "trainings": len(v),
                            "mean": float(v.mean()) if len(v) else np.nan,
                            "sd": float(v.std(ddof=1)) if len(v) > 1 else np.nan,
                            "min": float(v.min()) if len(v) else np.nan,
                            "max": float(v.max()) if len(v) else np.nan})
    return pd.DataFrame.from_records(records)


def _check_frame(frame, name, keys, columns, training) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame; got {type(frame).__name__}")
    if not keys:
        raise ValueError("keys must name at least one column")
    if training in keys:
        raise ValueError(f"the training column {training!r} must not be a key")
    missing = [c for c in [*keys, training, *columns] if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks the columns {missing}")
    if frame.duplicated([*keys, training]).any():
        raise ValueError(f"{name} has a point with the same {training!r} twice")


def check_spread(
    live: pd.DataFrame,
    stored: pd.DataFrame,
    keys: Sequence[str] | str,
    *,
    columns: Mapping[str, float],
    exact: Iterable[str] | str = (),
    ignore: Iterable[str] | str = ("wall_time_s",),
    training: str = "training",
    alpha: float = 0.01,
    min_trainings: int = 3,
    what: str = "live rows",
) -> pd.DataFrame:
    """Assert that every live row lies within the spread of the stored trainings of its point.

    Parameters
    ----------
    live : pandas.DataFrame
        Rerun rows (any trainings; ``training`` need not be a column of ``live``).
    stored : pandas.DataFrame
        Stored rows with at least ``min_trainings`` trainings of every point ``live`` has.
    keys : sequence of str
        The columns that identify a point (without ``training``).
    columns : mapping of column -> float
        Numeric result columns and their resolution ``q >= 0`` (added to the interval's
        half-width; one prompt's share for an accuracy, 0 for a continuous loss).
    exact : iterable of str
        Columns every stored training and the live row must agree on (settings).
    ignore : iterable of str, default ``("wall_time_s",)``
        Columns not compared (also ``seed``, which differs between trainings, belongs here).
    training : str, default "training"
    alpha : float, default 0.01
        The interval's miss probability for one fresh training of normal outcomes.
    min_trainings : int, default 3
        Fewest stored trainings a point needs.
    what : str
        What is compared, for the error message.

    Returns
    -------
    pandas.DataFrame
        One row per column in ``columns``: ``column``, ``rows`` (live rows), ``trainings`` (the
        fewest stored trainings of a compared point), ``max |live - mean|``, ``half-width``
        (the interval half-width at the row where the ratio of the two is largest) and
        ``rows outside``. Numbers, not display strings: show them with
        :func:`assocmem.display.frame`.

    Raises
    ------
    TypeError
        ``live`` or ``stored`` not a DataFrame, ``columns`` not a mapping.
    ValueError
        Missing or repeated columns; a live column named by no rule (or by two); a resolution
        that is not a finite real ``>= 0``; a bad ``alpha`` or ``min_trainings``; a stored point
        with a training twice.
    RowsDisagree
        A live row whose point has no stored trainings or fewer than ``min_trainings``; a value
        outside its interval (a live NaN passes only where a stored training is NaN too, and an
        infinite value only where every stored training has the same infinity); an ``exact``
        column that differs.
    """
    if not isinstance(columns, Mapping):
        raise TypeError(f"columns must be a mapping of column -> resolution; got {type(columns).__name__}")
    keys, exact, ignore = _names(keys, "keys"), _names(exact, "exact"), _names(ignore, "ignore")
    quanta = {c: as_real(q, f"resolution of {c!r}", minimum=0.0) for c, q in columns.items()}
    if isinstance(min_trainings, bool) or int(min_trainings) != min_trainings or min_trainings < 2:
        raise ValueError(f"min_trainings must be an integer >= 2; got {min_trainings!r}")
    prediction_half_width(2, 0.0, alpha)  # validates alpha
    _check_frame(stored, "stored", keys, [*quanta, *exact], training)
    if not isinstance(live, pd.DataFrame):
        raise TypeError(f"live must be a pandas DataFrame; got {type(live).__name__}")
    named = [*keys, *quanta, *exact, *ignore, training]
    repeated = sorted({c for c in named if named.count(c) > 1})
    if repeated:
        raise ValueError(f"columns named twice: {repeated}")
    missing = [c for c in [*keys, *quanta, *exact] if c not in live.columns]
    if missing:
        raise ValueError(f"live lacks the columns {missing}")
    unnamed = [c for c in live.columns if c not in named]
    if unnamed:
        raise ValueError(f"live columns named by no rule: {unnamed}")

    groups = {(k if isinstance(k, tuple) else (k,)): g for k, g in stored.groupby(keys, dropna=False, sort=False)}
    problems: list[str] = []
    stats = {c: {"dev": 0.0, "half": 0.0, "ratio": -1.0, "outside": 0, "n": None} for c in quanta}
    for _, row in live.iterrows():
        key = tuple(row[k] for k in keys)
        group = next((g for k, g in groups.items() if all(_same(a, b) for a, b in zip(k, key))), None)
        label = ", ".join(f"{k}={v}" for k, v in zip(keys, key))
        if group is None:
            problems.append(f"no stored trainings of the point {label}")
            continue
        if group[training].nunique() < min_trainings:
            problems.append(f"{group[training].nunique()} stored training(s) of {label}; need {min_trainings}")
            continue
        for col in exact:
            if not all(_same(v, row[col]) for v in group[col]):
                problems.append(f"{col} of {label}: live {row[col]!r}, stored {sorted(map(repr, set(group[col])))}")
        for col, q in quanta.items():
            ok, dev, half, n = _inside(float(row[col]), group[col], q, alpha)
            s = stats[col]
            size = int(group[training].nunique())
            s["n"] = size if s["n"] is None else min(s["n"], size)
            ratio = np.inf if (half == 0 and dev > 0) else (dev / half if half > 0 else 0.0)
            if ratio > s["ratio"]:
                s.update(dev=dev, half=half, ratio=ratio)
            if not ok:
                s["outside"] += 1
                problems.append(f"{col} of {label}: live {row[col]:.4g} outside the spread of "
                                f"{n or 0} training(s) (|live - mean| {dev:.3g}, allowed {half:.3g})")
    if problems:
        raise RowsDisagree(f"{what} fall outside the stored trainings' spread:\n  " + "\n  ".join(problems))
    return pd.DataFrame.from_records(
        [{"column": c, "rows": len(live), "trainings": s["n"], "max |live - mean|": s["dev"],
          "half-width": s["half"], "rows outside": s["outside"]} for c, s in stats.items()])


def _same(a, b) -> bool:
    """Equality with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    try:
        if pd.isna(a) and pd.isna(b):
            return True
    except (TypeError, ValueError):
        pass
    return bool(a == b)


def _inside(x: float, stored: pd.Series, q: float, alpha: float):
    """``(ok, |x - mean|, half-width, trainings)`` of one live value against its stored trainings."""
    v = pd.to_numeric(stored, errors="raise").astype(float).to_numpy()
    if np.isnan(x):
        return bool(np.isnan(v).any()), 0.0, 0.0, int((~np.isnan(v)).sum())
    v = v[~np.isnan(v)]
    if len(v) < 2:
        return False, np.inf, 0.0, len(v)
    if not np.isfinite(x) or not np.isfinite(v).all():
        return bool((v == x).all()), (0.0 if (v == x).all() else np.inf), 0.0, len(v)
    mean = float(v.mean())
    half = prediction_half_width(len(v), float(v.std(ddof=1)), alpha) + q
    dev = abs(x - mean)
    # the subtraction's own rounding: a value one resolution step away is inside
    return dev <= half + 1e-12 * max(1.0, abs(mean)), dev, half, len(v)
