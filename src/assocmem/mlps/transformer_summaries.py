"""What the stored rows of the Transformer sweeps say: predictors of accuracy, the lag, the noise.

The sweeps of :mod:`assocmem.mlps.transformer_sweeps` store one row per trained point; the
functions here read those rows and compute what chapter 14 checks against seed 001 (Garcia et
al. 2026, "MLPs are Hebbians"), Sec. 3.2 and 5.1:

- :func:`usability_summary`: how well the usable-key fraction, and the two baselines that use no
  margin, forecast the Transformer's accuracy (Fig. 7, App. A.4.4);
- :func:`transformer_lag` and :func:`lag_test`: whether the Transformer's accuracy lags the
  standalone MLP's once the MLP stores every fact (Fig. 2a), judged against the spread between
  trainings;
- :func:`noise_summary`: the attention noise against the junk length (Def. 5.1, Fig. 3a).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from assocmem._checks import as_real

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = ["PREDICTORS", "usability_summary", "transformer_lag", "lag_test", "noise_summary"]


#: The predictors of Transformer accuracy :func:`usability_summary` scores: the usable-key fraction
#: and the two baselines that use no margin (module docstring).
PREDICTORS = ("usable_fraction", "mlp_accuracy", "mlp_x_identity")


def usability_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """How well each predictor forecasts Transformer accuracy, per method: the margin test and baselines.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``transformer_usability`` (columns ``method``, ``transformer_accuracy``,
        ``usable_fraction``, ``mlp_accuracy``, ``identity_accuracy_heldout``, ``key_agreement``,
        ``baseline_key_agreement``).

    Returns
    -------
    pandas.DataFrame
        One row per ``(method, predictor)``, predictors in :data:`PREDICTORS` order:
        ``usable_fraction`` (the margin-and-noise test), ``mlp_accuracy`` (the standalone MLP's
        accuracy) and ``mlp_x_identity`` (that times ``identity_accuracy_heldout``). Columns
        ``n`` rows, ``mad`` (mean absolute difference from ``transformer_accuracy`` over every
        width and seed, a fraction), ``max_abs`` (the largest), ``r2`` (``1 - SS_res / SS_tot``
        of ``transformer_accuracy`` predicted with no fitted constant; NaN when accuracy does not
        vary), ``key_agreement`` (mean over rows of the per-key agreement: ``key_agreement`` for
        the usable-key test, ``baseline_key_agreement`` for both baselines, which call a key right
        when the MLP stores it).

    Raises
    ------
    ValueError
        A missing column.

    References
    ----------
    Seed 001, Sec. 5.1 and Fig. 7 (the usable-key fraction), App. A.4.4 (margins compared with
    Transformer and standalone MLP accuracy).
    """
    need = {"method", "transformer_accuracy", "usable_fraction", "mlp_accuracy", "identity_accuracy_heldout",
            "key_agreement", "baseline_key_agreement"}
    missing = sorted(need - set(frame.columns))
    if missing:
        raise ValueError(f"usability rows lack the column(s) {missing} (rerun the sweep with this version)")
    out = []
    for method, g in frame.groupby("method", sort=False):
        y = g["transformer_accuracy"].to_numpy(float)
        ss_tot = float(((y - y.mean()) ** 2).sum())
        preds = {"usable_fraction": g["usable_fraction"].to_numpy(float),
                 "mlp_accuracy": g["mlp_accuracy"].to_numpy(float),
                 "mlp_x_identity": (g["mlp_accuracy"] * g["identity_accuracy_heldout"]).to_numpy(float)}
        for name in PREDICTORS:
            x = preds[name]
            r2 = 1 - float(((y - x) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")
            agree = g["key_agreement" if name == "usable_fraction" else "baseline_key_agreement"]
            out.append({"method": method, "predictor": name, "n": len(g), "mad": float(np.abs(y - x).mean()),
                        "max_abs": float(np.abs(y - x).max()), "r2": r2, "key_agreement": float(agree.mean())})
    return pd.DataFrame(out)


def transformer_lag(frame: pd.DataFrame, column: str = "transformer_accuracy") -> pd.DataFrame:
    """Per method and training: how much the Transformer still gains after its MLP stores every fact.

    Fig. 2a's lag: the Transformer reaches its top at a larger width than the MLP alone. Per
    ``(method, rep)``, ``m_mlp`` is the first width at which the standalone MLP stores every fact
    (``mlp_accuracy == 1``) and ``lag = column(widest m) - column(m_mlp)``: zero when the
    Transformer is already at its widest value where the MLP first stores everything, positive
    when it lags.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``transformer_usability`` (``method, rep, m, mlp_accuracy`` and ``column``).
    column : str, default "transformer_accuracy"
        The Transformer accuracy to use (e.g. an ``acc_inj_<eps>`` column,
        :func:`assocmem.mlps.transformer_sweeps.injection_columns`).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, rep, m_mlp, lag``; ``m_mlp`` and ``lag`` are NaN for a training whose MLP
        never stores every fact.

    Raises
    ------
    ValueError
        A missing column.

    References
    ----------
    Seed 001, Sec. 3.2 and Fig. 2a.
    """
    missing = sorted({"method", "rep", "m", "mlp_accuracy", column} - set(frame.columns))
    if missing:
        raise ValueError(f"usability rows lack the column(s) {missing}")
    out = []
    for (method, rep), g in frame.sort_values("m").groupby(["method", "rep"], sort=True):
        full = g[g["mlp_accuracy"] >= 1]
        if len(full):
            m, lag = int(full["m"].iloc[0]), float(g[column].iloc[-1] - full[column].iloc[0])
        else:
            m, lag = float("nan"), float("nan")
        out.append({"method": method, "rep": rep, "m_mlp": m, "lag": lag})
    return pd.DataFrame(out)


def lag_test(lags: ArrayLike, resolution: float, level: float = 0.95) -> dict:
    """Does the Transformer lag? The mean lag against the spread between trainings.

    The Transformer *lags* when the mean lag over trainings exceeds ``max(t s / sqrt(n),
    resolution)``: ``t`` the one-sided ``level`` quantile of Student's t with ``n - 1`` degrees
    of freedom, ``s`` the standard deviation of the lags over the ``n`` trainings (so the lower
    confidence bound of the mean lag is above zero), and ``resolution`` the smallest change an
    accuracy can show (one sequence's share ``1 / (F C)``).

    Parameters
    ----------
    lags : array-like of float
        One lag per training (:func:`transformer_lag`), at least two, finite.
    resolution : float
        ``>= 0``.
    level : float, default 0.95
        In ``(0.5, 1)``.

    Returns
    -------
    dict
        ``n``, ``mean``, ``sd``, ``threshold`` and ``lags`` (bool).

    Raises
    ------
    ValueError
        Fewer than two lags, a non-finite lag, a bad ``resolution`` or ``level``.
    """
    from scipy import stats

    x = np.asarray(lags, dtype=float).ravel()
    if x.size < 2 or not np.isfinite(x).all():
        raise ValueError(f"need at least two finite lags (one per training); got {x.tolist()}")
    resolution = as_real(resolution, "resolution", minimum=0.0)
    level = as_real(level, "level", minimum=0.5, maximum=1.0, strict_min=True)
    if level >= 1.0:
        raise ValueError(f"level must be in (0.5, 1); got {level}")
    sd = float(x.std(ddof=1))
    threshold = max(float(stats.t.ppf(level, x.size - 1)) * sd / float(np.sqrt(x.size)), resolution)
    return {"n": int(x.size), "mean": float(x.mean()), "sd": sd, "threshold": threshold,
            "lags": bool(x.mean() > threshold)}


# --------------------------------------------------------------------------------------------
# attention_noise


def noise_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """The attention noise against ``J`` per size: means over seeds, and the attention's failure rate.

    No formula is fitted: the source states a trend only (Fig. 3a), and the data have two regimes
    (a small ceiling while the attention fetches the key in every context, a ceiling near
    ``sqrt(2)`` once it loses the key in some), which no single power law describes.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``attention_noise`` (columns ``d, F, J, noise_ceiling, noise_mean, noise_q50,
        noise_q90, noise_q99, identity_accuracy``).

    Returns
    -------
    pandas.DataFrame
        Per ``(d, F, J)``, sorted: ``seeds`` (rows averaged), the means over seeds of
        ``noise_ceiling``, ``noise_mean``, ``noise_q50``, ``noise_q90``, ``noise_q99``, and
        ``failure_rate`` (mean of ``1 - identity_accuracy``: the fraction of contexts in which
        the attention, with the identity MLP, returns another key), ``failure_rate_max`` (the
        worst seed's).

    Raises
    ------
    ValueError
        A missing column.

    References
    ----------
    Seed 001, Definition 5.1 and Fig. 3a; App. A.4.1.
    """
    cols = ["noise_ceiling", "noise_mean", "noise_q50", "noise_q90", "noise_q99"]
    missing = sorted({"d", "F", "J", "identity_accuracy", *cols} - set(frame.columns))
    if missing:
        raise ValueError(f"noise rows lack the column(s) {missing}")
    g = frame.assign(failure_rate=1.0 - frame["identity_accuracy"]).groupby(["d", "F", "J"], sort=True)
    out = g[cols + ["failure_rate"]].mean()
    out["failure_rate_max"] = g["failure_rate"].max()
    out.insert(0, "seeds", g.size())
    return out.reset_index()
