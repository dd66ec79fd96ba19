"""How a rerun of the SSFR Transformer sweeps is checked against their stored trainings
(assocmem.mlps.transformer_rerun.agreement_rules): one section per sweep.

Each section checks, on the stored ``quick`` rows (fast), that the rules pass the stored
training 0 against the three stored trainings, that they fail a training-0 row moved far, and
the rules' errors.
"""

import pandas as pd
import pytest

from assocmem.mlps.transformer_rerun import RERUN_SWEEPS, agreement_rules
from assocmem.sweeps import RowsDisagree, check_spread, get_sweep, load_results


def test_the_sweeps_the_rules_know():
    assert RERUN_SWEEPS == ("transformer_usability", "attention_noise", "transformer_capacity",
                            "transformer_facts", "transformer_architecture")


def test_an_unknown_sweep_is_refused():
    stored = load_results("transformer_capacity", "quick")
    with pytest.raises(ValueError, match="sweep must be one of"):
        agreement_rules("capacity", stored)


def test_stored_rows_must_be_a_dataframe():
    stored = load_results("transformer_capacity", "quick")
    with pytest.raises(TypeError, match="DataFrame"):
        agreement_rules("transformer_capacity", stored.to_dict("records"),
                        config=get_sweep("transformer_capacity").config("quick"))


# --------------------------------------------------------------------------------------------
# transformer_capacity


@pytest.fixture(scope="module")
def capacity():
    """The stored quick rows of transformer_capacity and their rules."""
    stored = load_results("transformer_capacity", "quick")
    config = get_sweep("transformer_capacity").config("quick")
    return stored, agreement_rules("transformer_capacity", stored, config=config), config


def test_capacity_rules_pass_the_stored_first_training(capacity):
    stored, rules, config = capacity
    assert rules["training"] == "rep" and rules["keys"] == ["method", "d", "F"]
    assert set(rules["ignore"]) == {"seed", "wall_time_s"}
    live = stored[stored.rep == 0].drop(columns="rep")
    summary = check_spread(live, stored, **rules)
    assert (summary["rows outside"] == 0).all()
    assert (summary["trainings"] == config.seeds).all()
    assert set(summary.column) == set(rules["columns"])


def test_capacity_rules_resolutions(capacity):
    stored, rules, config = capacity
    q = rules["columns"]
    d, share = int(stored.d.max()), 1.0 / (int(stored.F.min()) * config.contexts_per_key)
    assert q["m_adaptive"] == q["m_train"] == config.step
    assert q["W_adaptive"] == q["W_train"] == 3 * d * config.step
    assert q["found_adaptive"] == q["found_train"] == 0.0
    assert q["n_trained"] == q["violations_adaptive"] == 1.0
    assert q["best_adaptive"] == q["train_accuracy_at_adaptive"] == pytest.approx(share)


def test_capacity_rules_fail_a_width_moved_far(capacity):
    stored, rules, config = capacity
    live = stored[stored.rep == 0].drop(columns="rep").reset_index(drop=True)
    found = live.index[live.m_adaptive.notna()][0]
    live.loc[found, "m_adaptive"] += 100 * config.step
    with pytest.raises(RowsDisagree, match="m_adaptive"):
        check_spread(live, stored, **rules)


def test_capacity_rules_fail_a_changed_setting(capacity):
    stored, rules, _ = capacity
    live = stored[stored.rep == 0].drop(columns="rep").reset_index(drop=True)
    live.loc[0, "steps"] += 1
    with pytest.raises(RowsDisagree, match="steps"):
        check_spread(live, stored, **rules)


def test_capacity_needs_its_config(capacity):
    stored, _, config = capacity
    with pytest.raises(TypeError, match="needs its config"):
        agreement_rules("transformer_capacity", stored)
    with pytest.raises(TypeError, match="needs its config"):
        agreement_rules("transformer_capacity", stored, config=config.step)


@pytest.mark.parametrize("column", ["m_adaptive", "best_train", "rep", "steps"])
def test_capacity_stored_rows_need_their_columns(capacity, column):
    stored, _, config = capacity
    with pytest.raises(ValueError, match=column):
        agreement_rules("transformer_capacity", stored.drop(columns=column), config=config)


# transformer_usability and attention_noise


@pytest.mark.parametrize("name", ["transformer_usability", "attention_noise"])
def test_the_rules_accept_a_stored_repetition_and_refuse_a_shifted_one(name):
    stored = load_results(name, "quick")
    rules = agreement_rules(name, stored)
    assert rules["training"] == "rep" and "rep" not in rules["keys"]
    rep0 = stored[stored.rep == 0].drop(columns="rep")
    out = check_spread(rep0, stored, **rules)
    assert (out["rows outside"] == 0).all()
    with pytest.raises(RowsDisagree, match="noise_ceiling"):
        check_spread(rep0.assign(noise_ceiling=rep0.noise_ceiling + 100.0), stored, **rules)
    with pytest.raises(RowsDisagree, match="V_J of"):  # a setting must be equal
        check_spread(rep0.assign(V_J=rep0.V_J + 1), stored, **rules)


def test_the_usability_resolutions_are_one_key_and_one_context():
    stored = load_results("transformer_usability", "quick")
    cols = agreement_rules("transformer_usability", stored)["columns"]
    F, C = int(stored.F.min()), int(stored.contexts.min())
    assert cols["mlp_accuracy"] == pytest.approx(1 / F)
    assert cols["transformer_accuracy"] == pytest.approx(1 / (F * C))
    assert cols["wrong_lost_by_attention"] == 1.0 and cols["drop_max"] == 0.0


@pytest.mark.parametrize("name", ["transformer_usability", "attention_noise"])
def test_the_rules_refuse_rows_without_the_sweeps_columns(name):
    stored = load_results(name, "quick")
    with pytest.raises(ValueError, match="lack the column"):
        agreement_rules(name, stored.drop(columns="noise_ceiling"))


# --------------------------------------------------------------------------------------------
# transformer_facts and transformer_architecture (chapter 15)


def _rules(name):
    stored = load_results(name, "quick")
    config = get_sweep(name).config("quick")
    return stored, agreement_rules(name, stored, config=config), config


@pytest.mark.parametrize("name", ["transformer_facts", "transformer_architecture"])
def test_capacity_protocol_rules_pass_the_stored_first_training(name):
    stored, rules, config = _rules(name)
    assert rules["training"] == "rep" and "rep" not in rules["keys"]
    summary = check_spread(stored[stored.rep == 0].drop(columns="rep"), stored, **rules)
    assert (summary["rows outside"] == 0).all()
    assert (summary["trainings"] == config.seeds).all()
    assert set(summary.column) == set(rules["columns"])


def test_facts_rules_resolutions_and_ignored_columns():
    stored, rules, config = _rules("transformer_facts")
    q = rules["columns"]
    assert q["F_adaptive"] == q["F_train"] == config.f_step
    assert q["censored_adaptive"] == q["censored_train"] == 0.0
    assert q["n_trained"] == q["violations_train"] == 1.0
    assert {"ratio", "evaluated", "seed"} <= set(rules["ignore"])
    assert rules["keys"] == ["method", "d", "m"]


def test_facts_rules_fail_a_largest_count_moved_far():
    stored, rules, config = _rules("transformer_facts")
    live = stored[stored.rep == 0].drop(columns="rep").reset_index(drop=True)
    live.loc[0, "F_train"] += 100 * config.f_step
    with pytest.raises(RowsDisagree, match="F_train"):
        check_spread(live, stored, **rules)


def test_architecture_rules_resolutions():
    stored, rules, config = _rules("transformer_architecture")
    q, F = rules["columns"], int(stored.F.min())
    assert q["train_accuracy"] == pytest.approx(1 / (F * config.contexts_per_key))
    assert q["mlp_accuracy"] == pytest.approx(1 / F) and q["vo_drift"] == 0.0
    assert "variant" in rules["keys"] and "residual" in rules["exact"]


def test_architecture_rules_fail_an_accuracy_moved_and_a_changed_switch():
    stored, rules, _ = _rules("transformer_architecture")
    rep0 = stored[stored.rep == 0].drop(columns="rep").reset_index(drop=True)
    with pytest.raises(RowsDisagree, match="adaptive_accuracy"):
        check_spread(rep0.assign(adaptive_accuracy=rep0.adaptive_accuracy + 10), stored, **rules)
    with pytest.raises(RowsDisagree, match="value_trainable"):
        check_spread(rep0.assign(value_trainable=~rep0.value_trainable.astype(bool)), stored, **rules)


@pytest.mark.parametrize("name", ["transformer_facts", "transformer_architecture"])
def test_capacity_protocol_rules_need_their_config_and_columns(name):
    stored, _, config = _rules(name)
    with pytest.raises(TypeError, match="needs its config"):
        agreement_rules(name, stored)
    with pytest.raises(ValueError, match="lack the column"):
        agreement_rules(name, stored.drop(columns="rep"), config=config)
