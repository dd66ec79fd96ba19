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
:func:`leave_one_training_out`
    the rule's calibration on the stored rows: each training checked against the others.
:func:`median_training`, :func:`training_views`
    one row per point for a table: the median training's whole row, or the table as each
    training sees it (a claim involving a trained result is checked in every view).
:func:`check_spread`
    every live value must lie in a prediction interval of one further training around the mean
    of its point's ``n`` stored trainings,
    ``mean +- max(t_{1 - alpha/(2K), n - 1} * s, t_{1 - alpha/(2K), df} * s_pool) * sqrt(1 + 1/n)
    + q``. Here ``s`` is the point's standard deviation over its trainings and ``s_pool`` the
    column's pooled standard deviation over every stored point (``df`` degrees of freedom, the sum
    of ``n - 1`` over the points); each is quantiled with its own degrees of freedom, so a point
    that spreads more than the column's others keeps its own (wide, ``n - 1 = 2``) interval. (An
    earlier rule quantiled ``max(s, s_pool)`` with the pooled ``df``: too narrow for such a point,
    and for columns whose points repeat one training's value, as the pairs statistics of one
    model do under every draw; an AVX2 rerun of ``lm_pairs`` failed it on CI.) ``K`` is the number
    of live values of the column that are checked (Bonferroni: if
    outcomes were normal, one fresh training of every point would put *any* value of the column
    outside with probability at most ``alpha``); ``q`` is the column's resolution (one prompt of
    an accuracy, say). Why the pooled floor: three trainings of a point that happen to agree (a
    margin near its bound of 1, say) give an ``s`` far below the spread a fourth training can
    show, and a per-point interval at ``n = 3`` then fails a rerun that is a perfectly ordinary
    training (this happened on a CI machine: ``kappa_tilde`` three trainings within 3e-5 of 1, a
    rerun at 0.9907). The summary shows the interval's half-width, so a reader sees how much
    each check can detect: a training's spread is wide, and so is the check.

Calibration: :func:`leave_one_training_out` checks each stored training, by this rule, against
the other trainings of its point (a fresh training against one training fewer: harder than a
rerun's test). Chapters 14 to 17 show its counts on the stored sweeps: from none to
about one percent of the values fall outside (a few percent of the capacity searches', whose
outcomes are heavy-tailed, and of the toy Transformer's), none by more than a few half-widths
where the interval has a width at all.
Outcomes are not normal, so a fresh training fails now and then; a rerun of the same seed on
another CPU usually lands much closer to its stored training.

The quantile is :func:`scipy.stats.t.ppf`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from assocmem._checks import as_real
from assocmem.sweeps.agreement import RowsDisagree

__all__ = [
    "check_spread",
    "training_spread",
    "prediction_half_width",
    "leave_one_training_out",
    "median_training",
    "training_views",
]


def _names(value, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise ValueError(f"{what} must be column names; got {value!r}")
    return out


def prediction_half_width(n: int, sd: float, alpha: float = 0.01, df: int | None = None) -> float:
    """Half-width of the two-sided ``1 - alpha`` prediction interval of one more sample.

    ``t_{1 - alpha/2, df} * sd * sqrt(1 + 1/n)`` for the mean of ``n`` samples and a standard
    deviation ``sd`` with ``df`` degrees of freedom (default ``n - 1``: the samples' own, ddof 1;
    more where ``sd`` is pooled over several groups): the interval around the mean in which a
    further independent sample from the same normal distribution falls with probability
    ``1 - alpha``.

    Raises
    ------
    ValueError
        ``n < 2`` (``n < 1`` with ``df`` given), ``df < 1``, a negative or non-finite ``sd``, or ``alpha`` outside ``(0, 1)``.
    """
    from scipy.stats import t

    if isinstance(n, bool) or int(n) != n or n < (2 if df is None else 1):
        raise ValueError(f"n must be an integer >= 2 (>= 1 with df given); got {n!r}")
    sd = as_real(sd, "sd", minimum=0.0)
    alpha = as_real(alpha, "alpha", minimum=0.0, strict_min=True, maximum=1.0)
    if alpha >= 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    df = int(n) - 1 if df is None else df
    if isinstance(df, bool) or int(df) != df or df < 1:
        raise ValueError(f"df must be an integer >= 1; got {df!r}")
    return float(t.ppf(1.0 - alpha / 2.0, int(df)) * sd * np.sqrt(1.0 + 1.0 / int(n)))


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
        A missing key or column, ``training`` among the keys, a point with a training twice, or
        a column whose values are not numbers.
    """
    keys, columns = _names(keys, "keys"), _names(columns, "columns")
    _check_frame(frame, "frame", keys, columns, training)
    _check_numeric(frame, "frame", columns)
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


def median_training(frame: pd.DataFrame, keys: Sequence[str] | str, by: str, *,
                    training: str = "training") -> pd.DataFrame:
    """One row per point: the row of the point's median training ranked by ``by``.

    The row is one training's, whole: its columns are never mixed between trainings. With an
    even number of trainings, or ties, it is the lower median's row, of the smallest training
    index among tied values; a NaN in ``by`` (a search that found nothing, say) ranks above every
    number. A point with one row keeps it.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a sweep, ``training`` numbering the trainings of a point.
    keys : sequence of str
        The columns that identify a point (without ``training``; NaN keys are a value).
    by : str
        The numeric column the trainings are ranked by.
    training : str, default "training"

    Returns
    -------
    pandas.DataFrame
        The picked rows in ``frame``'s order, the ``training`` column kept (which training each
        row is), index reset.

    Raises
    ------
    TypeError
        ``frame`` not a DataFrame.
    ValueError
        A missing key, ``by`` or ``training`` column, ``training`` among the keys, or a point
        with a training twice.
    """
    keys = _names(keys, "keys")
    _check_frame(frame, "frame", keys, [by], training)
    keyed = frame.reset_index(drop=True)
    ranked = keyed.sort_values([by, training], kind="stable", na_position="last")
    picked = [g.index[(len(g) - 1) // 2] for _, g in ranked.groupby(keys, dropna=False, sort=False)]
    return keyed.loc[sorted(picked)].reset_index(drop=True)


def training_views(frame: pd.DataFrame, keys: Sequence[str] | str, *,
                   training: str = "training") -> dict[int, pd.DataFrame]:
    """The rows as each training sees them: ``{t: rows}``, one row per point.

    View ``t`` holds, for every point with several trainings, the row of its training ``t``,
    and every point stored once (a construction, not a training) in every view. A claim that
    involves a trained result is checked in every view: it holds in all, some or none of the
    trainings.

    Parameters
    ----------
    frame : pandas.DataFrame
    keys : sequence of str
        The columns that identify a point (without ``training``).
    training : str, default "training"

    Returns
    -------
    dict of int to pandas.DataFrame
        One view per training index stored by the trained points (``{0: frame}`` when every
        point is stored once), in order; the ``training`` column dropped, index reset.

    Raises
    ------
    TypeError
        ``frame`` not a DataFrame.
    ValueError
        A missing column, ``training`` among the keys, a point with a training twice, or a
        trained point that lacks one of the trainings the others store.
    """
    keys = _names(keys, "keys")
    _check_frame(frame, "frame", keys, [], training)
    counts = frame.groupby(keys, dropna=False, sort=False)[training].transform("size")
    trained = counts > 1
    indices = sorted(int(t) for t in frame.loc[trained, training].unique()) or [0]
    held = frame[trained].groupby(keys, dropna=False, sort=False)[training].apply(
        lambda t: sorted(int(v) for v in t) == indices)
    if not held.all():
        raise ValueError(f"a trained point lacks one of the trainings {indices}")
    return {t: frame[~trained | (frame[training] == t)].drop(columns=training).reset_index(drop=True)
            for t in indices}


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


def _check_numeric(frame: pd.DataFrame, name: str, columns) -> None:
    """A :class:`ValueError` naming the first of ``columns`` whose values are not numbers."""
    for c in columns:
        try:
            pd.to_numeric(frame[c], errors="raise")
        except (ValueError, TypeError):
            raise ValueError(f"column {c!r} of {name} must hold numbers (a spread is taken over them); "
                             f"got dtype {frame[c].dtype}") from None


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
        The probability, for normal outcomes, that a fresh training of every live point puts
        any value of a column outside (split over the column's ``K`` checked values).
    min_trainings : int, default 3
        Fewest stored trainings a point needs.
    what : str
        What is compared, for the error message.

    Returns
    -------
    pandas.DataFrame
        One row per column in ``columns``: ``column``, ``rows`` (live rows), ``trainings`` (the
        fewest stored trainings of a compared point), ``pooled sd`` and ``smallest half-width``
        (set by the stored trainings and the live points alone: the same on every machine),
        ``max |live - mean|`` (a fact about this machine's rerun: not for display in a
        committed output), ``rows outside`` (0, or the call raises) and ``unchecked`` (finite
        live values whose stored trainings are all NaN, a search that none of them finished:
        nothing to compare them with; a column such as ``found`` judges that event). Numbers, not display
        strings: show them with :func:`assocmem.display.frame`.

    Raises
    ------
    TypeError
        ``live`` or ``stored`` not a DataFrame, ``columns`` not a mapping.
    ValueError
        Missing or repeated columns; a live column named by no rule (or by two); a resolution
        that is not a finite real ``>= 0``; a bad ``alpha`` or ``min_trainings``; a stored point
        with a training twice; a column under ``columns`` whose values are not numbers.
    RowsDisagree
        A live row whose point has no stored trainings or fewer than ``min_trainings``; a value
        outside its interval (a live NaN passes only where a stored training is NaN too, an
        infinite value only where every stored training has the same infinity; a finite value
        with one finite stored training is checked with the pooled spread alone); an ``exact``
        column that differs.
    """
    keys, quanta, exact = _validated(live, stored, keys, columns, exact, ignore, training, alpha,
                                     min_trainings)
    summary, problems = _evaluate(live, stored, keys, quanta, exact, training, alpha, min_trainings)
    if problems:
        raise RowsDisagree(f"{what} fall outside the stored trainings' spread:\n  " + "\n  ".join(problems))
    return summary.drop(columns="worst ratio")


def leave_one_training_out(
    stored: pd.DataFrame,
    keys: Sequence[str] | str,
    *,
    columns: Mapping[str, float],
    exact: Iterable[str] | str = (),
    ignore: Iterable[str] | str = ("wall_time_s",),
    training: str = "training",
    alpha: float = 0.01,
) -> pd.DataFrame:
    """How :func:`check_spread`'s rule fares on trainings it has not seen: a calibration.

    Each stored training in turn plays the live rerun and is checked, by the rule of
    :func:`check_spread`, against the other trainings of its point. A left-out training is a
    fresh one, which lands further from the others than a rerun of the same seed on another
    machine usually does, and is checked against one training fewer: a harder test than the
    one a rerun meets. Its outcome is a fact about the stored rows (the same on every machine).

    Parameters
    ----------
    stored : pandas.DataFrame
        Rows with at least three trainings of every point.
    keys, columns, exact, ignore, training, alpha
        As for :func:`check_spread`.

    Returns
    -------
    pandas.DataFrame
        One row per column: ``column``, ``values`` (checked over all left-out trainings),
        ``outside`` (values outside their interval), ``worst ratio`` (the largest
        ``|value - mean| / half-width``; above 1 means outside).

    Raises
    ------
    TypeError, ValueError
        As :func:`check_spread`; a point with fewer than three trainings.
    """
    if not isinstance(stored, pd.DataFrame) or training not in stored.columns:
        raise ValueError(f"stored must be a DataFrame with a {training!r} column")
    live_like = stored.drop(columns=training)
    keys, quanta, exact = _validated(live_like, stored, keys, columns, exact, ignore, training, alpha, 3)
    if stored.groupby(keys, dropna=False)[training].nunique().min() < 3:
        raise ValueError("every stored point needs at least three trainings")
    total = {c: {"column": c, "values": 0, "outside": 0, "worst ratio": 0.0} for c in quanta}
    for t in sorted(stored[training].unique()):
        left_out = stored[stored[training] == t].drop(columns=training)
        rest = stored[stored[training] != t]
        summary, _ = _evaluate(left_out, rest, keys, quanta, exact, training, alpha, 2)
        for _, r in summary.iterrows():
            agg = total[r["column"]]
            agg["values"] += int(np.isfinite(left_out[r["column"]].astype(float)).sum())
            agg["outside"] += int(r["rows outside"])
            agg["worst ratio"] = max(agg["worst ratio"], float(r["worst ratio"]))
    return pd.DataFrame.from_records(list(total.values()))


def _validated(live, stored, keys, columns, exact, ignore, training, alpha, min_trainings):
    """Check :func:`check_spread`'s arguments; ``(keys, quanta, exact)`` as lists and a dict."""
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
    _check_numeric(stored, "stored", quanta)
    _check_numeric(live, "live", quanta)
    return keys, quanta, exact


def _evaluate(live, stored, keys, quanta, exact, training, alpha, min_trainings):
    """``(summary, problems)`` of :func:`check_spread` after validation (``worst ratio`` added)."""
    groups = {(k if isinstance(k, tuple) else (k,)): g for k, g in stored.groupby(keys, dropna=False, sort=False)}
    pooled = {c: _pooled_sd(groups.values(), c) for c in quanta}
    problems: list[str] = []
    matched = []
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
        matched.append((row, group, label))
    stats = {}
    for col, q in quanta.items():
        sd_pool, df = pooled[col]
        checked = sum(1 for row, _, _ in matched if np.isfinite(float(row[col])))
        each = alpha / max(checked, 1)  # Bonferroni over the column's checked values
        s = {"column": col, "rows": len(live), "trainings": None, "pooled sd": sd_pool,
             "smallest half-width": np.nan, "max |live - mean|": 0.0, "rows outside": 0,
             "unchecked": 0, "worst ratio": 0.0}
        for row, group, label in matched:
            size = int(group[training].nunique())
            s["trainings"] = size if s["trainings"] is None else min(s["trainings"], size)
            ok, dev, half, n = _inside(float(row[col]), group[col], q, each, sd_pool, df)
            if n == 0 and np.isfinite(float(row[col])):
                s["unchecked"] += 1
            if np.isfinite(half) and half > 0 and not half >= s["smallest half-width"]:
                s["smallest half-width"] = half
            s["max |live - mean|"] = max(s["max |live - mean|"], dev)
            if dev > 0:
                s["worst ratio"] = max(s["worst ratio"], dev / half if half > 0 else np.inf)
            if not ok:
                s["rows outside"] += 1
                problems.append(f"{col} of {label}: live {row[col]:.4g} outside the spread of "
                                f"{n or 0} training(s) (|live - mean| {dev:.3g}, allowed {half:.3g})")
        stats[col] = s
    return pd.DataFrame.from_records(list(stats.values())), problems


def _pooled_sd(groups, col: str) -> tuple[float, int]:
    """``(s_pool, df)``: the column's standard deviation pooled over the stored points' trainings.

    ``s_pool**2 = sum (n_p - 1) s_p**2 / df``, ``df = sum (n_p - 1)`` over the points with at
    least two finite values; ``(0.0, 0)`` where there is none.
    """
    ss, df = 0.0, 0
    for g in groups:
        v = pd.to_numeric(g[col], errors="raise").astype(float).to_numpy()
        v = v[np.isfinite(v)]
        if len(v) > 1:
            ss += float(((v - v.mean()) ** 2).sum())
            df += len(v) - 1
    return (float(np.sqrt(ss / df)), df) if df else (0.0, 0)


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


def _inside(x: float, stored: pd.Series, q: float, alpha: float, sd_pool: float, df: int):
    """``(ok, |x - mean|, half-width, trainings)`` of one live value against its stored trainings."""
    v = pd.to_numeric(stored, errors="raise").astype(float).to_numpy()
    if np.isnan(x):
        return bool(np.isnan(v).any()), 0.0, np.nan, int((~np.isnan(v)).sum())
    v = v[~np.isnan(v)]
    if len(v) == 0:  # every stored training NaN (a search none finished): nothing to compare
        return True, 0.0, np.nan, 0
    if not np.isfinite(x) or not np.isfinite(v).all():
        return bool((v == x).all()), (0.0 if (v == x).all() else np.inf), np.nan, len(v)
    if len(v) == 1 and df == 0:
        return False, np.inf, np.nan, 1
    mean = float(v.mean())
    # the point's own interval (its sd, n - 1 degrees of freedom) and the pooled floor (the
    # column's sd, its df): each sd is quantiled with its own degrees of freedom
    own = prediction_half_width(len(v), float(v.std(ddof=1)), alpha) if len(v) > 1 else 0.0
    floor = prediction_half_width(len(v), sd_pool, alpha, df=df) if df else 0.0
    half = max(own, floor) + q
    dev = abs(x - mean)
    # the subtraction's own rounding: a value one resolution step away is inside
    return dev <= half + 1e-12 * max(1.0, abs(mean)), dev, half, len(v)
