"""The convergence experiments of App. B.7 as a resumable sweep with committed results.

One registered sweep, ``convergence``, runs the presets of :mod:`assocmem.sdm.convergence`
(``quick``, ``cpu``, ``paper``) one perturbation level of one setting at a time, and stores
*summaries*, not the 10 million individual convergences of the ``cpu`` preset. A point is
``{"setting", "level"}``; its rows are one per ``(algorithm, d)``:

* the distribution of the final cosine to the target over every convergence at that level
  (``count``, ``mean_cosine``, ``sd_cosine``, ``retrieved``: the fraction above ``threshold``),
  the mean number of reads (``mean_steps``), and the fractions that stopped before the step
  limit (``stopped``) and that hit all-zero weights (``zero_weights``);
* the paired comparison with each rule of ``references`` (same targets and, within a space,
  the same perturbed queries; :func:`assocmem.sdm.convergence.agreement`): the mean and standard
  deviation of ``cos_rule - cos_reference`` (``diff_<ref>``, ``sd_diff_<ref>``) and the outcome
  agreement (``agree_<ref>``: both retrieve or both fail). Empty when the reference is the rule
  itself or is not run in the setting.

Seeds. The experiment's random streams derive from ``config.seed`` alone (not from the
``seed`` column the engine adds to every row, which this sweep does not use), so that
per-level results are exactly those of :func:`assocmem.sdm.convergence.run_preset`: every
random stream of the experiment is keyed by ``(pattern set, level, repeat, rule, radius)``, so
running one level at a time reproduces the rows of a run over all levels.

References
----------
Seed 002 (the book's third source document, a review of Bricken & Pehlevan 2021),
"Convergence experiments (App. B.7)", claim C5; Bricken & Pehlevan (2021), App. B.7,
Figs. 18-31; the protocol as the authors ran it, from their code
(``github.com/TrentBrick/attention-approximates-sdm``: ``SDM_Experiments.ipynb`` and
``Implementations_Associative_Memory.py``), is summarised in :mod:`assocmem.sdm.convergence`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real
from assocmem.sdm import convergence as conv
from assocmem.sweeps.registry import register_sweep

if TYPE_CHECKING:
    from assocmem._typing import PathLike
    from collections.abc import Sequence

__all__ = [
    "ConvergenceSweepConfig",
    "CONVERGENCE_PRESETS",
    "REFERENCES",
    "convergence_points",
    "convergence_point",
    "load_convergence_results",
    "C5_PAIRS",
    "SDM_PAIRS",
    "pair_gaps",
    "worst_gaps",
]

#: Reference rules of the paired comparisons: the SDM rules the softmax rules approximate.
REFERENCES = ("Binary_SDM", "Cont_SDM", "Cont_Binary_SDM")


@dataclass(frozen=True)
class ConvergenceSweepConfig:
    """Settings of the ``convergence`` sweep: a preset of :mod:`assocmem.sdm.convergence`.

    Raises
    ------
    ValueError
        If ``dtype`` is not ``"float32"`` or ``"float64"``, the settings' labels are missing or
        repeated, a rule name is unknown, ``threshold`` is not a finite real number or ``seed``
        not an integer (booleans and strings are refused).
    """

    settings: tuple[conv.ConvergenceSetting, ...]  # the runs (n, m, radii, levels, sizes, data)
    algorithms: tuple[str, ...] = conv.ALGORITHMS  # rules of settings that do not name theirs
    dtype: str = "float32"  # floating type of the reads (the authors': float32)
    threshold: float = 0.99  # a convergence "retrieves" when its final cosine exceeds this
    references: tuple[str, ...] = REFERENCES  # paired comparisons against these rules
    seed: int = 0  # master seed of conv.convergence_experiment
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        for name in ("algorithms", "references"):  # one rule given by name, not its letters
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, (getattr(self, name),))
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64'; got {self.dtype!r}")
        # checked, not converted (the stored config must stay as given): a NaN threshold would
        # count nothing as retrieved, a boolean or a string one is a typo
        as_real(self.threshold, "threshold")
        as_int(self.seed, "seed")
        labels = [s.label for s in self.settings]
        if not labels or len(set(labels)) != len(labels):
            raise ValueError(f"settings need distinct labels; got {labels}")
        for a in (*self.algorithms, *self.references):
            conv.resolve_algorithm(a)

    def setting(self, label: str) -> conv.ConvergenceSetting:
        """The setting called ``label``; ``KeyError`` if none is."""
        for s in self.settings:
            if s.label == label:
                return s
        raise KeyError(f"no setting {label!r}; settings: {[s.label for s in self.settings]}")


def _from_preset(name: str, notes=()) -> ConvergenceSweepConfig:
    p = conv.get_preset(name)
    return ConvergenceSweepConfig(settings=p.settings, algorithms=p.algorithms,
                                  dtype=str(p.dtype).removeprefix("torch."), notes=tuple(notes))


CONVERGENCE_PRESETS = {name: _from_preset(name) for name in conv.PRESETS}


def convergence_points(config: ConvergenceSweepConfig) -> list[dict]:
    """The grid: ``{"setting", "level"}`` for each setting and each of its levels."""
    return [{"setting": s.label, "level": int(k)} for s in config.settings for k in s.levels]


def convergence_point(config: ConvergenceSweepConfig, point: dict,
                      device: torch.device) -> list[dict]:
    """Run one level of one setting and summarise it: one row per ``(algorithm, d)``.

    Returns
    -------
    list of dict
        ``algorithm``, ``space``, ``n``, ``m``, ``d``, ``r``, ``beta``, ``count``,
        ``mean_cosine``, ``sd_cosine``, ``retrieved``, ``mean_steps``, ``stopped``,
        ``zero_weights``, then ``diff_<ref>``, ``sd_diff_<ref>``, ``agree_<ref>`` for every
        reference (NaN where it does not apply). The engine adds ``seed`` and ``wall_time_s``.
    """
    st = config.setting(point["setting"])
    algos = list(st.algorithms or config.algorithms)
    df = conv.convergence_experiment(
        n=st.n, m=st.m, radii=st.radii, algorithms=algos, levels=[point["level"]],
        num_queries=st.num_queries, seed=config.seed, device=device, num_datasets=st.num_datasets,
        num_repeats=st.num_repeats, r=st.r, dtype=getattr(torch, config.dtype), setting=st.label,
        data=conv.setting_data(st), num_threads=1, show_progress=False)
    work = df.assign(retrieved=df["cosine"] > config.threshold)
    keys = ["algorithm", "d"]
    summary = work.groupby(keys, observed=True).agg(
        space=("space", "first"), r=("r", "first"), beta=("beta", "first"), count=("cosine", "size"),
        mean_cosine=("cosine", "mean"), sd_cosine=("cosine", "std"), retrieved=("retrieved", "mean"),
        mean_steps=("steps", "mean"), stopped=("stopped", "mean"),
        zero_weights=("zero_weights", "mean")).reset_index()
    summary["sd_cosine"] = summary["sd_cosine"].fillna(0.0)
    # paired differences: the per-query frame, one column per rule
    wide = df.pivot_table(index=["d", "dataset", "repeat", "query"], columns="algorithm",
                          values="cosine", observed=True)
    rows = []
    for rec in summary.to_dict("records"):
        a, d = str(rec["algorithm"]), int(rec["d"])
        row = {"algorithm": a, "space": str(rec["space"]), "n": st.n, "m": st.m, "d": d,
               "r": float(rec["r"]), "beta": float(rec["beta"]), "count": int(rec["count"]),
               **{k: float(rec[k]) for k in ("mean_cosine", "sd_cosine", "retrieved", "mean_steps",
                                             "stopped", "zero_weights")}}
        for ref in config.references:
            ref = conv.resolve_algorithm(ref)
            diff = sd = agree = np.nan
            if ref != a and ref in wide.columns:
                sub = wide.xs(d, level="d")[[a, ref]].dropna()
                if len(sub):
                    delta = (sub[a] - sub[ref]).to_numpy()
                    diff, sd = float(delta.mean()), float(delta.std(ddof=1)) if len(delta) > 1 else 0.0
                    hit_a, hit_r = sub[a] > config.threshold, sub[ref] > config.threshold
                    agree = float((hit_a == hit_r).mean())
            row[f"diff_{ref}"], row[f"sd_diff_{ref}"], row[f"agree_{ref}"] = diff, sd, agree
        rows.append(row)
    return rows


register_sweep(
    "convergence",
    config_type=ConvergenceSweepConfig,
    presets=CONVERGENCE_PRESETS,
    points=convergence_points,
    run_point=convergence_point,
    description="iterated SDM and attention reads, eight rules, random patterns and digits "
                "(seed 002, App. B.7, claim C5)",
)


def load_convergence_results(presets: Sequence[str] = ("paper", "cpu"),
                             results_dir: PathLike | None = None) -> tuple[str, pd.DataFrame]:
    """The stored results of the largest preset that has been run: ``(preset, frame)``.

    Tries ``presets`` in order and returns the first one stored, complete and made with the
    preset's current config.

    Raises
    ------
    FileNotFoundError
        If none of them is stored.
    """
    from assocmem.sweeps.store import load_largest_results

    return load_largest_results("convergence", presets, results_dir)


# --------------------------------------------------------------------------------------------
# analysis of the stored summaries

#: Claim C5's comparisons: each softmax rule against the SDM weights its ``beta`` was fitted to.
C5_PAIRS = (
    ("Binary_SDM_BFit_Attention", "Binary_SDM"),
    ("Cont_SDM_CFit_Attention", "Cont_SDM"),
    ("Cont_SDM_BFit_Attention", "Cont_Binary_SDM"),
)
#: Comparisons inside SDM: finite neurons against all neurons, continuous against binary.
SDM_PAIRS = (
    ("Binary_SDM_NeuronLimit", "Binary_SDM"),
    ("Cont_SDM_NeuronLimit", "Cont_SDM"),
    ("Cont_SDM", "Binary_SDM"),
    ("Cont_Binary_SDM", "Binary_SDM"),
)


def pair_gaps(frame: pd.DataFrame, pairs: Sequence[tuple[str, str]] = C5_PAIRS,
              confidence: float = 0.95) -> pd.DataFrame:
    """Paired gap in final cosine between two rules, per setting, radius and level.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``convergence`` sweep (stored or live).
    pairs : sequence of (rule, reference), default :data:`C5_PAIRS`
        ``reference`` must be one of the sweep's references (:data:`REFERENCES`).
    confidence : float, default 0.95
        Level of the normal-approximation interval ``gap +- z sd / sqrt(count)``.

    Returns
    -------
    pandas.DataFrame
        ``setting, n, d, level, algorithm, reference, gap`` (mean of ``cos_rule - cos_ref``
        over the paired convergences), ``ci_low``, ``ci_high``, ``agreement`` (fraction of
        convergences where both retrieve or both fail), ``mean_cosine`` and
        ``mean_cosine_reference``; pairs absent from a setting are skipped.

    Raises
    ------
    ValueError
        If ``frame`` is not a frame of the sweep (missing columns), a reference has no stored
        comparison, or ``confidence`` is not a real number in ``(0, 1)``.
    """
    from scipy import stats

    try:
        confidence = as_real(confidence, "confidence")
    except ValueError:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence!r}") from None
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence!r}")
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a DataFrame of the convergence sweep, got {type(frame).__name__}")
    missing = [c for c in ("setting", "n", "d", "level", "algorithm", "count", "mean_cosine")
               if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the columns {missing}; pass rows of the convergence sweep")
    z = stats.norm.ppf(0.5 + confidence / 2)
    out = []
    for rule, ref in pairs:
        if f"diff_{ref}" not in frame.columns:
            raise ValueError(f"no stored comparison against {ref!r}; references: "
                             f"{[c[5:] for c in frame.columns if c.startswith('diff_')]}")
        a = frame[frame["algorithm"] == rule]
        b = frame[frame["algorithm"] == ref][["setting", "d", "level", "mean_cosine"]]
        if a.empty or b.empty:
            continue
        g = a.merge(b, on=["setting", "d", "level"], suffixes=("", "_reference"))
        half = z * g[f"sd_diff_{ref}"] / np.sqrt(g["count"])
        out.append(pd.DataFrame({
            "setting": g["setting"], "n": g["n"], "d": g["d"], "level": g["level"], "algorithm": rule,
            "reference": ref, "gap": g[f"diff_{ref}"], "ci_low": g[f"diff_{ref}"] - half,
            "ci_high": g[f"diff_{ref}"] + half, "agreement": g[f"agree_{ref}"],
            "mean_cosine": g["mean_cosine"], "mean_cosine_reference": g["mean_cosine_reference"]}))
    cols = ["setting", "n", "d", "level", "algorithm", "reference", "gap", "ci_low", "ci_high", "agreement",
            "mean_cosine", "mean_cosine_reference"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)


def worst_gaps(gaps: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Largest gap over perturbation levels, per setting, pair and radius, against a tolerance.

    Parameters
    ----------
    gaps : pandas.DataFrame
        Output of :func:`pair_gaps`.
    tolerance : float
        Largest absolute gap in mean final cosine that counts as agreement, ``> 0``.

    Returns
    -------
    pandas.DataFrame
        ``setting, n, d, algorithm, reference, max_abs_gap, gap_at_max, level_at_max,
        ci_low, ci_high`` (that level's interval), ``levels_outside`` (how many levels have
        ``|gap| > tolerance``) and ``close`` (``levels_outside == 0``).

    Raises
    ------
    ValueError
        If ``tolerance`` is not a finite real number ``> 0`` (booleans and strings are
        refused) or ``gaps`` is not a frame of :func:`pair_gaps`.
    """
    try:
        tol = as_real(tolerance, "tolerance")  # no booleans, strings, NaN or infinities
    except ValueError:
        raise ValueError(f"tolerance must be a finite number > 0; got {tolerance!r}") from None
    if not tol > 0:
        raise ValueError(f"tolerance must be > 0; got {tolerance!r}")
    tolerance = tol
    if not isinstance(gaps, pd.DataFrame) or not {"setting", "n", "d", "algorithm", "reference", "gap",
                                                   "level", "ci_low", "ci_high"} <= set(gaps.columns):
        raise ValueError("gaps must be the DataFrame returned by pair_gaps")
    rows = []
    keys = ["setting", "n", "d", "algorithm", "reference"]
    for key, g in gaps.groupby(keys, sort=False, observed=True):
        i = int(g["gap"].abs().to_numpy().argmax())
        worst = g.iloc[i]
        outside = int((g["gap"].abs() > tolerance).sum())
        rows.append({**dict(zip(keys, key)), "max_abs_gap": float(abs(worst["gap"])),
                     "gap_at_max": float(worst["gap"]), "level_at_max": int(worst["level"]),
                     "ci_low": float(worst["ci_low"]), "ci_high": float(worst["ci_high"]),
                     "levels_outside": outside, "close": outside == 0})
    return pd.DataFrame(rows, columns=keys + ["max_abs_gap", "gap_at_max", "level_at_max", "ci_low", "ci_high",
                                              "levels_outside", "close"])
