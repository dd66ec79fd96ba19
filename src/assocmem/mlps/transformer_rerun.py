"""How a rerun of the SSFR Transformer sweeps is checked against their stored trainings (chapters 14-15).

Every result of ``transformer_usability``, ``attention_noise`` and ``transformer_capacity``
(:mod:`assocmem.mlps.transformer_sweeps`), ``transformer_facts`` and ``transformer_architecture``
(:mod:`assocmem.mlps.transformer_capacity_sweeps`) comes out of training: the attention is trained by
AdamW, the GD MLPs by Adam. A training is a sample. On another CPU (another SIMD width, another
BLAS code path) or another thread count it sums in another order and ends elsewhere, so a rerun
is checked against the spread between the stored trainings of its point (the repetitions
``rep``, each with its own embeddings, fact sets, MLPs and attention), never against one
training's digits: :func:`assocmem.sweeps.check_spread`, a 99 % prediction interval of one
further training, floored by the column's pooled spread and widened by the column's resolution.

:func:`agreement_rules` gives the rules; the chapters call
``check_spread(live, stored, **agreement_rules(name, stored))``.

References
----------
Seed 001 (Garcia et al. 2026), Sec. 3.2 and 5.1, App. A.4; README, "What is the same on every
machine".
"""

from __future__ import annotations

import pandas as pd

from assocmem.mlps.transformer_capacity_sweeps import ArchitectureConfig, FactsConfig
from assocmem.mlps.transformer_sweeps import TransformerCapacityConfig

__all__ = ["RERUN_SWEEPS", "agreement_rules"]

#: The sweeps :func:`agreement_rules` knows.
RERUN_SWEEPS = ("transformer_usability", "attention_noise", "transformer_capacity", "transformer_facts",
                "transformer_architecture")

_USABILITY_KEY_SHARES = ("mlp_accuracy", "key_accuracy", "usable_fraction", "key_agreement",
                         "baseline_key_agreement")
_USABILITY_CONTEXT_SHARES = ("transformer_accuracy", "identity_accuracy", "identity_accuracy_heldout")
_USABILITY_COUNTS = ("usable_differs_from_stored", "wrong_lost_by_attention", "wrong_with_positive_margin")
_USABILITY_CONTINUOUS = ("mlp_min_margin", "mlp_min_margin_unit", "margin_q10", "margin_q50", "margin_q90",
                         "drop_median", "drop_max", "margin_median_right", "margin_median_wrong",
                         "noise_ceiling", "noise_mean", "noise_q50")
#: Theorem B.62's columns (continuous; ``thm_lost`` is a count)
_USABILITY_THEOREM = ("lipschitz_max", "value_coherence", "value_spread", "thm_eps")
_NOISE_CONTINUOUS = ("noise_ceiling", "noise_mean", "noise_q50", "noise_q90", "noise_q99", "key_weight_mean")
_CAPACITY_SEARCH = ("m_adaptive", "W_adaptive", "found_adaptive", "n_adaptive", "violations_adaptive",
                    "m_train", "W_train", "found_train", "n_train", "violations_train", "n_trained")
_CAPACITY_SHARES = ("train_accuracy_at_adaptive", "adaptive_accuracy_at_train", "best_adaptive", "best_train")
_FACTS_COUNTS = ("n_adaptive", "violations_adaptive", "n_train", "violations_train", "n_trained")
_ARCH_CONTEXT_SHARES = ("train_accuracy", "adaptive_accuracy", "unswapped_accuracy")
_ARCH_SETTINGS = ("residual", "value_trainable", "output_trainable", "W", "J", "V_J", "steps", "epochs")


def _need(stored: pd.DataFrame, columns) -> None:
    missing = sorted(set(columns) - set(stored.columns))
    if missing:
        raise ValueError(f"stored rows lack the column(s) {missing}")


def agreement_rules(sweep: str, stored: pd.DataFrame,
                    config: TransformerCapacityConfig | FactsConfig | ArchitectureConfig | None = None) -> dict:
    """The rules by which a live run of an SSFR Transformer sweep must agree with its stored rows.

    Resolutions (added to each interval's half-width; a count decided by an argmax can flip at a
    near-tie): one key's share ``1 / F`` for a per-key fraction, one context's share
    ``1 / (F C)`` (``C`` the contexts per key) for an accuracy over contexts (also the
    injected-noise ``acc_inj_*`` columns; ``usable_inj_*`` are per-key fractions), one for a count,
    and for a capacity search one search step in ``m`` (the config's ``step``), ``3 d step`` in
    ``W`` and one evaluation. ``transformer_facts``'s largest-``F`` searches: one step
    ``f_step`` in ``F_adaptive`` and ``F_train``, one for a count, none for ``censored_*``; its
    ``ratio`` (``F_train / F_adaptive``, whose parts are checked) and ``evaluated`` (text) are
    not compared. ``transformer_architecture``: one context's share for its three accuracies
    over contexts (``1 / (F C)``), one key's share for ``mlp_accuracy``, ``vo_drift`` continuous. Margins and
    noises are continuous (resolution 0). Settings (``W``, ``V_J``, ``contexts``, ``J``,
    ``steps``, ``epochs``, and the architecture variant's three switches) must be equal;
    ``seed`` (each repetition's own) and ``wall_time_s`` are not compared.

    Parameters
    ----------
    sweep : {"transformer_usability", "attention_noise", "transformer_capacity", \
"transformer_facts", "transformer_architecture"}
    stored : pandas.DataFrame
        The stored rows of that sweep, with the repetition column ``rep``.
    config : TransformerCapacityConfig, FactsConfig or ArchitectureConfig, optional
        The stored preset's config; needed for ``transformer_capacity``, ``transformer_facts``
        and ``transformer_architecture`` (the search step and the contexts per key are not
        columns).

    Returns
    -------
    dict
        Keyword arguments ``keys`` (a point without ``rep``), ``columns``, ``exact``, ``ignore``
        and ``training="rep"`` for :func:`assocmem.sweeps.check_spread` (and
        :func:`assocmem.sweeps.leave_one_training_out`).

    Raises
    ------
    ValueError
        An unknown sweep, or stored rows without the sweep's columns.
    TypeError
        ``stored`` not a DataFrame; ``transformer_capacity``, ``transformer_facts`` or
        ``transformer_architecture`` without its config.

    References
    ----------
    Seed 001, Sec. 3.2, 5.1, App. A.4.1, A.4.3, A.4.4, A.5.1.
    """
    if not isinstance(stored, pd.DataFrame):
        raise TypeError(f"stored must be a pandas DataFrame, got {type(stored).__name__}")
    ignore = ["seed", "wall_time_s"]
    if sweep == "transformer_usability":
        keys, exact = ["d", "F", "J", "method", "m"], ["W", "V_J", "contexts"]
        _need(stored, [*keys, *exact, "rep", *_USABILITY_KEY_SHARES, *_USABILITY_CONTEXT_SHARES,
                       *_USABILITY_COUNTS, *_USABILITY_CONTINUOUS])
        key = 1.0 / float(stored["F"].min())
        context = 1.0 / float((stored["F"] * stored["contexts"]).min())
        columns = ({c: key for c in _USABILITY_KEY_SHARES} | {c: context for c in _USABILITY_CONTEXT_SHARES}
                   | {c: 1.0 for c in _USABILITY_COUNTS} | {c: 0.0 for c in _USABILITY_CONTINUOUS})
        # injected-noise columns (the presets that inject): an accuracy over contexts, a key fraction
        columns |= ({c: context for c in stored.columns if c.startswith("acc_inj_")}
                    | {c: key for c in stored.columns if c.startswith("usable_inj_")}
                    | {c: 0.0 for c in stored.columns if c.startswith("survive_inj_")}
                    | {c: 0.0 for c in _USABILITY_THEOREM if c in stored.columns}
                    | ({"thm_lost": 1.0} if "thm_lost" in stored.columns else {}))
    elif sweep == "attention_noise":
        keys, exact = ["d", "F", "J"], ["V_J", "contexts"]
        _need(stored, [*keys, *exact, "rep", *_NOISE_CONTINUOUS, "identity_accuracy"])
        context = 1.0 / float((stored["F"] * stored["contexts"]).min())
        columns = {c: 0.0 for c in _NOISE_CONTINUOUS} | {"identity_accuracy": context}
    elif sweep == "transformer_capacity":
        keys, exact = ["method", "d", "F"], ["J", "V_J", "steps", "epochs"]
        _need(stored, [*keys, *exact, "rep", *_CAPACITY_SEARCH, *_CAPACITY_SHARES])
        if not isinstance(config, TransformerCapacityConfig):
            raise TypeError("transformer_capacity needs its config (the search step and the contexts "
                            f"per key are not columns); got {type(config).__name__}")
        step, d = float(config.step), float(stored["d"].max())
        share = 1.0 / float((stored["F"] * config.contexts_per_key).min())
        columns = ({c: 1.0 for c in _CAPACITY_SEARCH} | {"m_adaptive": step, "m_train": step,
                                                        "W_adaptive": 3 * d * step, "W_train": 3 * d * step,
                                                        "found_adaptive": 0.0, "found_train": 0.0}
                   | {c: share for c in _CAPACITY_SHARES})
    elif sweep == "transformer_facts":
        keys, exact = ["method", "d", "m"], ["W", "J", "V_J", "steps", "epochs"]
        searched = ("F_adaptive", "F_train", "censored_adaptive", "censored_train")
        _need(stored, [*keys, *exact, "rep", *searched, *_FACTS_COUNTS, "ratio", "evaluated"])
        if not isinstance(config, FactsConfig):
            raise TypeError("transformer_facts needs its config (the search step is not a column); "
                            f"got {type(config).__name__}")
        step = float(config.f_step)
        columns = ({c: 1.0 for c in _FACTS_COUNTS} | {"F_adaptive": step, "F_train": step,
                                                     "censored_adaptive": 0.0, "censored_train": 0.0})
        ignore += ["ratio", "evaluated"]
    elif sweep == "transformer_architecture":
        keys, exact = ["method", "d", "F", "m", "variant"], list(_ARCH_SETTINGS)
        _need(stored, [*keys, *exact, "rep", *_ARCH_CONTEXT_SHARES, "mlp_accuracy", "vo_drift"])
        if not isinstance(config, ArchitectureConfig):
            raise TypeError("transformer_architecture needs its config (the contexts per key are not a "
                            f"column); got {type(config).__name__}")
        key = 1.0 / float(stored["F"].min())
        context = key / float(config.contexts_per_key)
        columns = {c: context for c in _ARCH_CONTEXT_SHARES} | {"mlp_accuracy": key, "vo_drift": 0.0}
    else:
        raise ValueError(f"sweep must be one of {RERUN_SWEEPS}; got {sweep!r}")
    return {"keys": keys, "columns": columns, "exact": exact, "ignore": ignore, "training": "rep"}

