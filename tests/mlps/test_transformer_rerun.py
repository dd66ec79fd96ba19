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
    assert RERUN_SWEEPS == ("transformer_usability", "attention_noise", "transformer_capacity")


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
