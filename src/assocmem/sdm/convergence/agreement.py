"""How closely the read rules agree: summaries and paired agreement metrics (App. B.7, claim C5).

Bricken & Pehlevan (2021), App. B.7, show the convergence curves of the rules side by side and
call the agreement close; the review (seed 002, claim C5) notes that no quantitative metric is
given. This module supplies them from the per-query frame of
:func:`assocmem.sdm.convergence.experiment.convergence_experiment`: :func:`summarize` gives the
mean final cosine per rule, setting, radius and level with a confidence interval and the
fraction retrieved; :func:`agreement` pairs the rules query by query (the same target and, within
a space, the same perturbed query) and gives the paired mean difference of final cosines and the
outcome agreement (both retrieve or both fail); :func:`agreement_summary` keeps the worst level
of each pair. Used by chapter 36 through :mod:`assocmem.sdm.convergence_sweeps`.
"""

from __future__ import annotations

from numbers import Real
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from assocmem._checks import as_real
from assocmem.sdm.convergence.algorithms import resolve_algorithm

__all__ = [
    "summarize",
    "agreement",
    "agreement_summary",
]


def _ci(mean: np.ndarray, sem: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    return mean - z * sem, mean + z * sem


def _check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, Real) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return float(confidence)


def _check_threshold(threshold) -> float:
    """A finite real cosine threshold (a NaN one would silently count nothing as retrieved)."""
    return as_real(threshold, "threshold")


def _check_frame(df, needed: Sequence[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a DataFrame from convergence_experiment, got {type(df).__name__}")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"the frame lacks the columns {missing}; pass the per-query frame of "
                         "convergence_experiment")


def _group_keys(df: pd.DataFrame) -> list[str]:
    return (["setting"] if "setting" in df.columns else []) + ["n", "d", "level"]


def summarize(df: pd.DataFrame, threshold: float = 0.99, confidence: float = 0.95) -> pd.DataFrame:
    """Mean final cosine per rule, setting, radius and level, with a confidence interval.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`convergence_experiment` (or several, concatenated).
    threshold : float, default 0.99
        A convergence counts as a retrieval when its final cosine exceeds this.
    confidence : float, default 0.95
        Level of the normal-approximation interval ``mean +- z sem``.

    Returns
    -------
    pandas.DataFrame
        One row per ``(setting, algorithm, n, d, level)``: ``count``, ``mean_cosine``, ``sem``,
        ``ci_low``, ``ci_high``, ``retrieved`` (fraction above ``threshold``), ``mean_steps``,
        ``stopped`` (fraction), ``zero_weights`` (fraction).

    Raises
    ------
    ValueError
        If ``df`` lacks the needed columns, ``confidence`` is not in ``(0, 1)``, or
        ``threshold`` is not a finite real number (booleans and strings are refused).
    """
    _check_frame(df, ["algorithm", "n", "d", "level", "cosine", "steps", "stopped", "zero_weights"])
    confidence = _check_confidence(confidence)
    threshold = _check_threshold(threshold)
    keys = _group_keys(df)
    keys = keys[:-3] + ["algorithm"] + keys[-3:]
    work = df.assign(retrieved=df["cosine"] > threshold)
    g = work.groupby(keys, observed=True)
    out = g.agg(count=("cosine", "size"), mean_cosine=("cosine", "mean"), sd=("cosine", "std"),
                retrieved=("retrieved", "mean"), mean_steps=("steps", "mean"),
                stopped=("stopped", "mean"), zero_weights=("zero_weights", "mean")).reset_index()
    out["sem"] = (out["sd"] / np.sqrt(out["count"])).fillna(0.0)
    out["ci_low"], out["ci_high"] = _ci(out["mean_cosine"].to_numpy(), out["sem"].to_numpy(), confidence)
    return out[keys + ["count", "mean_cosine", "sem", "ci_low", "ci_high", "retrieved", "mean_steps",
                       "stopped", "zero_weights"]]


_AGREEMENT_COLUMNS = ["count", "mean_diff", "ci_low", "ci_high", "outcome_agreement", "retrieved",
                      "retrieved_reference"]


def agreement(df: pd.DataFrame, reference: str | None = "Binary_SDM", threshold: float = 0.99,
              confidence: float = 0.95) -> pd.DataFrame:
    """How closely two rules agree, query by query (the metric App. B.7 does not give).

    Rows are paired by ``(setting, n, d, level, dataset, repeat, query)``: the same target and,
    within a space (binary or continuous), the same perturbed query. Two measures per pair of
    rules and level:

    * the paired mean difference of final cosines, ``mean(cos_A - cos_ref)``, with a
      normal-approximation confidence interval;
    * the outcome agreement, the fraction of queries where both rules retrieve the target
      (cosine above ``threshold``) or both fail.

    Parameters
    ----------
    df : pandas.DataFrame
        Per-query output of :func:`convergence_experiment`.
    reference : str or None, default "Binary_SDM"
        Compare every other rule with this one; ``None`` compares every pair ``(A, B)`` with
        ``B`` before ``A`` in the frame's order of rules.
    threshold : float, default 0.99
        Retrieval threshold on the cosine.
    confidence : float, default 0.95

    Returns
    -------
    pandas.DataFrame
        Columns ``setting`` (if the frame has it), ``n``, ``d``, ``level``, ``algorithm``,
        ``reference``, ``count``, ``mean_diff``, ``ci_low``, ``ci_high``, ``outcome_agreement``,
        ``retrieved``, ``retrieved_reference``.

    Raises
    ------
    ValueError
        If ``df`` lacks columns, ``reference`` is unknown or absent from ``df``,
        ``confidence`` is not in ``(0, 1)``, or ``threshold`` is not a finite real number.
    """
    _check_frame(df, ["algorithm", "n", "d", "level", "dataset", "repeat", "query", "cosine"])
    confidence = _check_confidence(confidence)
    threshold = _check_threshold(threshold)
    group = _group_keys(df)
    keys = group + ["dataset", "repeat", "query"]
    wide = df.pivot_table(index=keys, columns="algorithm", values="cosine", observed=True)
    order = (list(df["algorithm"].cat.categories) if isinstance(df["algorithm"].dtype, pd.CategoricalDtype)
             else sorted(df["algorithm"].astype(str).unique()))
    present = [a for a in order if a in wide.columns]
    if reference is not None:
        reference = resolve_algorithm(reference)
        if reference not in present:
            raise ValueError(f"reference {reference!r} is not in the frame (has {present})")
        pairs = [(a, reference) for a in present if a != reference]
    else:
        pairs = [(a, b) for i, b in enumerate(present) for a in present[i + 1:]]
    rows = []
    for a, b in pairs:
        sub = wide[[a, b]].dropna()
        if sub.empty:
            continue
        ra, rb = sub[a] > threshold, sub[b] > threshold
        tmp = pd.DataFrame({"diff": sub[a] - sub[b], "agree": ra == rb, "ra": ra, "rb": rb}).reset_index()
        agg = tmp.groupby(group, observed=True).agg(
            count=("diff", "size"), mean_diff=("diff", "mean"), sd=("diff", "std"),
            outcome_agreement=("agree", "mean"), retrieved=("ra", "mean"),
            retrieved_reference=("rb", "mean")).reset_index()
        agg["algorithm"], agg["reference"] = a, b
        rows.append(agg)
    columns = group + ["algorithm", "reference"] + _AGREEMENT_COLUMNS
    if not rows:
        return pd.DataFrame(columns=columns)
    out = pd.concat(rows, ignore_index=True)
    sem = (out["sd"] / np.sqrt(out["count"])).fillna(0.0).to_numpy()
    out["ci_low"], out["ci_high"] = _ci(out["mean_diff"].to_numpy(), sem, confidence)
    return out[columns]


def agreement_summary(agree: pd.DataFrame) -> pd.DataFrame:
    """Worst case over perturbation levels of :func:`agreement`.

    Parameters
    ----------
    agree : pandas.DataFrame
        Output of :func:`agreement`.

    Returns
    -------
    pandas.DataFrame
        One row per ``(setting, n, d, algorithm, reference)``: ``max_abs_diff`` (the largest
        ``|mean_diff|`` over levels), ``level_at_max`` and that level's ``ci_low`` and
        ``ci_high``; ``min_agreement`` (the smallest outcome agreement) and
        ``level_at_min_agreement``.

    Raises
    ------
    ValueError
        If ``agree`` lacks the columns of :func:`agreement`.
    """
    _check_frame(agree, ["n", "d", "level", "algorithm", "reference", "mean_diff", "ci_low", "ci_high",
                         "outcome_agreement"])
    keys = (["setting"] if "setting" in agree.columns else []) + ["n", "d", "algorithm", "reference"]
    rows = []
    for key, g in agree.groupby(keys, sort=False, observed=True):
        i = int(g["mean_diff"].abs().to_numpy().argmax())
        j = int(g["outcome_agreement"].to_numpy().argmin())
        row = dict(zip(keys, key))
        row.update(max_abs_diff=float(abs(g["mean_diff"].iloc[i])), level_at_max=int(g["level"].iloc[i]),
                   ci_low=float(g["ci_low"].iloc[i]), ci_high=float(g["ci_high"].iloc[i]),
                   min_agreement=float(g["outcome_agreement"].iloc[j]),
                   level_at_min_agreement=int(g["level"].iloc[j]))
        rows.append(row)
    return pd.DataFrame(rows, columns=keys + ["max_abs_diff", "level_at_max", "ci_low", "ci_high",
                                             "min_agreement", "level_at_min_agreement"])
