"""Reproduction tables reach the right verdicts and raise on regressions."""

import numpy as np
import pytest
import torch

import json
import math

import nbformat

from assocmem.repro import METADATA_KEY, Check, ReproductionError, ReproductionTable, collect, verdict_counts


def test_absolute_and_relative_tolerances():
    assert Check("a", seed=1.0, ours=1.04, tol=0.05).verdict == "reproduced"
    assert Check("a", seed=1.0, ours=1.06, tol=0.05).verdict == "differs"
    assert Check("r", seed=200.0, ours=209.0, tol=0.05, relative=True).verdict == "reproduced"
    assert Check("r", seed=200.0, ours=211.0, tol=0.05, relative=True).verdict == "differs"


def test_nan_never_reproduces():
    assert Check("nan", seed=1.0, ours=float("nan"), tol=1e9).verdict == "invalid"


def test_qualitative_and_not_comparable_rows():
    assert Check("q", seed="linear", ours="linear", passed=True).verdict == "reproduced"
    assert Check("q", seed="linear", ours="quadratic", passed=False, expect="differs", note="why").verdict == "differs"
    assert Check("n", seed=3.0, ours=None, expect="not comparable", note="needs GPT-2").verdict == "not comparable"


def test_check_raises_when_a_verdict_changes():
    t = ReproductionTable("demo")
    t.add("good", seed=1.0, ours=1.0, tol=1e-9)
    t.check()
    t.add("was wrong in the seed", seed=35.5, ours=28.4, tol=0.1, expect="differs", note="covariance bug")
    t.check()
    t.add("regressed", seed=1.0, ours=2.0, tol=0.1)
    with pytest.raises(ReproductionError, match="regressed"):
        t.check()
    with pytest.raises(ReproductionError):
        t.show()


def test_a_differs_row_that_starts_agreeing_also_raises():
    t = ReproductionTable("demo")
    t.add("seed wrong", seed=35.5, ours=35.5, tol=0.1, expect="differs", note="covariance bug")
    with pytest.raises(ReproductionError):
        t.check()


def test_numpy_and_torch_scalars_become_plain_numbers():
    t = ReproductionTable("demo")
    row = t.add("np", seed=np.float64(0.5), ours=torch.tensor(0.5, dtype=torch.float64), tol=1e-12)
    assert isinstance(row.ours, float) and row.verdict == "reproduced"


def test_bad_rows_are_rejected():
    with pytest.raises(ValueError, match="expect"):
        Check("x", seed=1.0, ours=1.0, tol=0.1, expect="maybe")
    with pytest.raises(ValueError, match="tol"):
        Check("x", seed=1.0, ours=1.0, tol=-1.0)
    with pytest.raises(ValueError, match="numeric comparison"):
        Check("x", seed=1.0, ours=1.0)


def test_display_is_deterministic_and_rounded():
    t = ReproductionTable("demo", digits=3)
    t.add("pi", seed=3.14159265, ours=3.14159, tol=1e-3, source="eq. 1")
    html1, html2 = t.show()._repr_html_(), t.show()._repr_html_()
    assert html1 == html2 and "3.14" in html1 and "3.14159" not in html1
    assert "reproduced" in repr(t.show())
    assert t.counts == {"claim": {"reproduced": 1}}


def test_nan_cannot_pass_as_a_difference():
    t = ReproductionTable("nan")
    t.add("broken fit", seed=0.97, ours=float("nan"), tol=0.01, expect="differs", note="why")
    with pytest.raises(ReproductionError, match="invalid"):
        t.check()
    assert t.counts["claim"]["invalid"] == 1


def test_not_comparable_row_fails_when_our_own_check_fails():
    assert Check("n", seed="none", ours="x", expect="not comparable", passed=True,
                 note="another setting").verdict == "not comparable"
    t = ReproductionTable("ours")
    t.add("our derivation", seed="not stated", ours="ratio 0.9", expect="not comparable", passed=False,
          note="the source states no number")
    with pytest.raises(ReproductionError):
        t.check()


def test_table_column_names_the_source():
    t = ReproductionTable("cols")
    t.add("x", seed=1.0, ours=1.0, tol=0.0)
    assert list(t.to_frame().columns) == ["claim", "kind", "source", "source says", "ours", "tolerance", "verdict"]


def test_a_failing_add_leaves_the_table_unchanged():
    t = ReproductionTable("atomic")
    t.add("kept", seed=1.0, ours=1.0, tol=0.1)
    before = list(t.rows)
    for bad in ({"tol": True}, {"tol": "0.1"}, {"tol": float("inf")}, {"relative": "yes", "tol": 0.1},
                {"passed": "no"}, {"below": 0.0, "tol": 0.1}):
        with pytest.raises(ValueError):
            t.add("bad", seed=1.0, ours=1.5, **bad)
        assert t.rows == before and t.counts["claim"]["reproduced"] == 1
    t.check()


def test_bool_and_str_tolerances_are_refused_not_read_as_numbers():
    # before: tol=True was a tolerance of 1 (1.5 "reproduced" 1.0), tol="0.1" a TypeError from a comparison
    with pytest.raises(ValueError, match="tol must be a real number, got True"):
        ReproductionTable("t").add("x", seed=1.0, ours=1.5, tol=True)
    with pytest.raises(ValueError, match="tol must be a real number, got '0.1'"):
        Check("x", seed=1.0, ours=1.05, tol="0.1")
    # and a string flag is not truthy: passed="no" used to give "reproduced"
    with pytest.raises(ValueError, match="passed must be True or False"):
        Check("q", seed="a", ours="b", passed="no")


# --------------------------------------------------------------------------------------------
# Kinds: claim, sanity, not comparable


def test_kind_follows_expect_by_default():
    assert Check("c", seed=1.0, ours=1.0, tol=0.1).kind == "claim"
    assert Check("c", seed=1.0, ours=2.0, tol=0.1, expect="differs", note="why").kind == "claim"
    row = Check("n", seed="x", ours="y", expect="not comparable", note="no number")
    assert row.kind == "not comparable" and row.verdict == "not comparable"
    assert Check("n", seed="x", ours="y", kind="not comparable", note="no number").expect == "not comparable"


def test_sanity_rows_pass_or_fail_the_build_and_expect_nothing_else():
    ok = Check("our identity", seed=0.0, ours=1e-15, tol=1e-12, kind="sanity")
    assert ok.verdict == "sanity: ok" and ok.expect == "sanity: ok"
    bad = ReproductionTable("sanity")
    bad.add("our identity", seed=0.0, ours=1.0, tol=1e-12, kind="sanity")
    assert bad.rows[0].verdict == "sanity: failed"
    with pytest.raises(ReproductionError, match="sanity"):
        bad.check()
    with pytest.raises(ValueError, match="cannot expect 'differs'"):
        Check("x", seed=0.0, ours=1.0, tol=0.1, kind="sanity", expect="differs")
    with pytest.raises(ValueError, match="cannot expect 'not comparable'"):
        Check("x", seed="a", ours="b", kind="claim", expect="not comparable")
    with pytest.raises(ValueError, match="cannot expect 'reproduced'"):
        Check("x", seed="a", ours="b", kind="not comparable", expect="reproduced")
    with pytest.raises(ValueError, match="kind must be one of"):
        Check("x", seed=0.0, ours=0.0, tol=0.0, kind="verdict")


def test_outside_rows_are_attributed_and_shown_apart():
    t = ReproductionTable("outside")
    t.add("QK-norm band, lower end", seed=10.31, ours=10.31, tol=0.005, origin="outside",
          source="authors' repository (KeyQuery_Norm_Learnt_Betas.txt)")
    t.add("seed claim", seed=1.0, ours=1.0, tol=0.0)
    frame = t.to_frame()
    assert frame.loc[0, "kind"] == "claim (outside the seeds)"
    assert frame.loc[0, "source"].startswith("outside the seeds: authors' repository")
    assert frame.loc[1, "kind"] == "claim"
    assert t.counts == {"claim (outside the seeds)": {"reproduced": 1}, "claim": {"reproduced": 1}}
    with pytest.raises(ValueError, match="must say where it comes from"):
        Check("x", seed=1.0, ours=1.0, tol=0.0, origin="outside")
    with pytest.raises(ValueError, match="origin must be one of"):
        Check("x", seed=1.0, ours=1.0, tol=0.0, origin="paper")


def test_show_stores_display_strings_and_row_anchors():
    t = ReproductionTable("Three keys (source §5)", digits=3)
    t.add("pi", seed=3.14159265, ours=3.14159265358979, tol=1e-3, source="eq. 1")
    t.add("ours", seed=0.0, ours=1e-16, tol=1e-12, kind="sanity")
    data, meta = t.show()._repr_mimebundle_()
    stored = meta[METADATA_KEY]
    assert stored["anchor"] == "repro-three-keys-source-5"
    assert [r["anchor"] for r in stored["rows"]] == ["repro-three-keys-source-5-1", "repro-three-keys-source-5-2"]
    assert 'id="repro-three-keys-source-5-2"' in data["text/html"] and "sanity: ok" in data["text/html"]
    text = json.dumps(stored)
    assert "3.14159" not in text and all(isinstance(v, str) for r in stored["rows"] for v in r.values())
    assert data == t.show()._repr_mimebundle_()[0]  # deterministic


def _notebook(tmp_path, name, tables):
    nb = nbformat.v4.new_notebook()
    for t in tables:
        data, meta = t.show()._repr_mimebundle_()
        out = nbformat.v4.new_output("execute_result", data=data, metadata=meta, execution_count=1)
        nb.cells.append(nbformat.v4.new_code_cell("table.show()", outputs=[out]))
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def test_collect_reads_rows_back_and_counts_them(tmp_path):
    a = ReproductionTable("first")
    a.add("c1", seed=1.0, ours=1.0, tol=0.0)
    a.add("c2", seed=1.0, ours=2.0, tol=0.1, expect="differs", note="why")
    a.add("s", seed=0.0, ours=0.0, tol=0.0, kind="sanity")
    b = ReproductionTable("second")
    b.add("n", seed="x", ours="y", expect="not comparable", note="no number")
    b.add("o", seed=2.0, ours=2.0, tol=0.0, origin="outside", source="read off Fig. 16")
    both = ReproductionTable("all", summary=True, rows=a.rows + b.rows)
    p1 = _notebook(tmp_path, "01-one.ipynb", [a, b, both])
    rows = collect([p1])
    assert list(rows.claim) == ["c1", "c2", "s", "n", "o"] and set(rows.chapter) == {"01-one"}
    assert rows.loc[1, "verdict"] == "differs" and rows.loc[1, "note"] == "why"
    assert len(collect([p1], summaries=True)) == 10
    counts = verdict_counts(rows)
    assert counts.loc["total"].to_dict() == {
        "reproduced": 1, "differ": 1, "mixed": 0, "outside reproduced": 1,
        "outside differ": 0, "not comparable": 1, "sanity": 1}
    dup = _notebook(tmp_path, "02-dup.ipynb", [a, a])
    with pytest.raises(ValueError, match="share the anchor"):
        collect([dup])
    with pytest.raises(ValueError, match=".ipynb"):
        collect([tmp_path / "01-one.md"])


# --------------------------------------------------------------------------------------------
# One test decides a row; rows that differ or are not comparable say why


def test_passed_and_a_tolerance_together_are_refused():
    # before: passed=True silently overrode the tolerance and 5.0 "reproduced" 1.0 within 0.1
    t = ReproductionTable("one test")
    with pytest.raises(ValueError, match=r"give tol= .* or passed= .*not both: passed=True would override"):
        t.add("x", seed=1.0, ours=5.0, tol=0.1, passed=True)
    with pytest.raises(ValueError, match="not both"):  # agreeing or not, and for qualitative rows too
        t.add("x", seed=1.0, ours=1.0, tol=0.1, passed=True)
    with pytest.raises(ValueError, match="not both"):
        t.add("x", seed="close", ours="gap 0.01", tol=0.05, passed=False, expect="differs", note="why")
    with pytest.raises(ValueError, match="not both"):
        Check("x", seed=0.0, ours=1e-17, tol=0.0, passed=np.bool_(True), kind="sanity")
    assert t.rows == []
    # each test alone is fine, and reaches the verdict it computes
    assert Check("x", seed=1.0, ours=5.0, tol=0.1, expect="differs", note="why").verdict == "differs"
    assert Check("x", seed=1.0, ours=5.0, passed=False, expect="differs", note="why").verdict == "differs"


def test_a_not_comparable_row_takes_no_tolerance():
    with pytest.raises(ValueError, match="not-comparable row has nothing to set a tolerance against"):
        Check("n", seed=1.0, ours=2.0, tol=0.1, expect="not comparable", note="another setting")
    with pytest.raises(ValueError, match="nothing to set a tolerance against"):
        Check("n", seed=1.0, ours=2.0, tol=0.0, kind="not comparable", note="another setting")


@pytest.mark.parametrize("kwargs", [
    {"seed": 1.0, "ours": 2.0, "tol": 0.1, "expect": "differs"},
    {"seed": "W ~ F log F", "ours": "W ~ F", "passed": False, "expect": "differs", "note": "  "},
    {"seed": "x", "ours": "y", "expect": "not comparable"},
    {"seed": "x", "ours": "y", "kind": "not comparable", "note": "\t"},
    {"seed": "x", "ours": "y", "kind": "not comparable", "passed": True},
])
def test_differs_and_not_comparable_rows_need_a_note(kwargs):
    t = ReproductionTable("notes")
    with pytest.raises(ValueError, match=r"needs a note= saying why"):
        t.add("row", **kwargs)
    assert t.rows == []


def test_rows_expected_to_pass_need_no_note():
    assert Check("c", seed=1.0, ours=1.0, tol=0.1).note == ""
    assert Check("s", seed=0.0, ours=0.0, tol=0.0, kind="sanity").verdict == "sanity: ok"
    assert Check("q", seed="a", ours="a", passed=True).verdict == "reproduced"


@pytest.mark.parametrize("claim", ["", " ", "\n\t"])
def test_a_blank_claim_is_refused(claim):
    t = ReproductionTable("claims")
    with pytest.raises(ValueError, match="claim must say what is compared"):
        t.add(claim, seed=1.0, ours=1.0, tol=0.1)
    assert t.rows == []


def test_a_claim_over_trainings_is_decided_by_every_training():
    t = ReproductionTable("Trainings")
    assert t.add("all", seed=1.0, ours="1.0 (3 trainings)", holds=[True, True, True]).verdict == "reproduced"
    assert t.add("none", seed=1.0, ours="x", holds=(False, False, False), expect="differs",
                 note="why").verdict == "differs"
    some = t.add("some", seed=1.0, ours="x", holds=[True, False, True], expect="mixed", note="2 of 3")
    assert some.verdict == "mixed" and some.holds == (True, False, True)
    assert t.records()[2]["tolerance"] == "holds in 2 of 3 trainings"
    t.check()
    with pytest.raises(ReproductionError):
        ReproductionTable("T", rows=[Check("c", 1.0, "x", holds=(True, False))]).check()


@pytest.mark.parametrize("kwargs, match", [
    ({"holds": [True]}, "at least two"),
    ({"holds": "yes"}, "sequence of bools"),
    ({"holds": [True, "no"]}, "holds"),
    ({"holds": [True, True], "passed": True}, "alone"),
    ({"holds": [True, True], "kind": "sanity"}, "passed="),
    ({"passed": True, "expect": "mixed", "note": "n"}, "only a row over trainings"),
    ({"holds": [True, False], "expect": "mixed"}, "note"),
])
def test_bad_rows_over_trainings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Check("c", 1.0, "x", **kwargs)


# --------------------------------------------------------------------------------------------
# Rows by registry id: the claim's text, value and location come from assocmem.claims


def test_check_takes_the_claim_value_and_location_from_the_registry():
    from assocmem.claims import get_claim

    claim = get_claim("000.sec2.score-plus-one")  # a number: e
    t = ReproductionTable("By id")
    row = t.check("000.sec2.score-plus-one", ours=np.float64(2.7183), tol=0.01, case="d_k = 4")
    assert row.claim_id == "000.sec2.score-plus-one" and row.seed == claim.value == math.e
    assert row.claim == f"{claim.claim} (d_k = 4)" and row.source == f"seed 000, {claim.location}"
    assert row.verdict == "reproduced" and row.different_test is None
    rec = t.records()[0]
    assert rec["claim_id"] == "000.sec2.score-plus-one" and "different_test" not in rec
    assert 'data-claim="000.sec2.score-plus-one"' in t.show()._repr_html_()
    # a range is shown as "lo to hi"; a claim with no number takes the row's own seed
    ntk = t.check("001.fig2c.ntk-ratio", ours=120.0, passed=True, different_test="another grid")
    assert ntk.seed == "10 to 10000" and ntk.different_test == "another grid"
    assert t.to_frame().verdict.iloc[1] == "reproduced (a different test: another grid)"
    assert t.records()[1]["different_test"] == "another grid"
    free = t.check("000.sec1.separate-maps", seed="asymmetric", ours="asymmetric", passed=True)
    assert get_claim("000.sec1.separate-maps").value is None and free.seed == "asymmetric"
    assert t.verify() is t and t.check() is t  # check() without arguments still verifies


A_ID = "000.sec2.score-plus-one"  # the registry's value: the number 2.718


@pytest.mark.parametrize("args, kwargs, error, match", [
    (("001.fig2c.ntk-rati",), {"ours": 1.0, "passed": True}, KeyError, "close ids: 001.fig2c.ntk-ratio"),
    ((A_ID,), {"seed": 2.0, "ours": 2.0, "tol": 0.1}, ValueError, "the registry gives the number 2.718"),
    ((A_ID,), {"tol": 0.1}, TypeError, "ours= is required"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "source": "seed 000, sec. 2"}, TypeError, "come.*from the registry"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "claim": "e"}, TypeError, "come.*from the registry"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "kind": "sanity"}, ValueError, "sanity row tests our own code"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "value": "mean"}, ValueError, "names one of several values"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "origin": "outside"}, ValueError, "registry records no outside material"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "case": " "}, ValueError, "case must name"),
    ((A_ID,), {"ours": 2.7, "tol": 0.1, "different_test": ""}, ValueError, "different_test must say how"),
    ((), {"ours": 2.7}, TypeError, "takes a claim id"),
])
def test_check_refuses_what_the_registry_decides(args, kwargs, error, match):
    t = ReproductionTable("Refused")
    with pytest.raises(error, match=match):
        t.check(*args, **kwargs)
    assert t.rows == []


def test_only_check_sets_a_claim_id():
    t = ReproductionTable("Refused")
    with pytest.raises(TypeError, match="add\\(\\) takes no claim_id"):
        t.add("x", seed=1.0, ours=1.0, tol=0.1, claim_id=A_ID)
    with pytest.raises(KeyError, match="no claim with the id"):
        Check("x", 1.0, 1.0, tol=0.1, claim_id="000.nowhere.x")
    assert t.rows == []


def test_a_mapping_value_is_chosen_by_name():
    t = ReproductionTable("Named values")
    with pytest.raises(ValueError, match="choose the row's with value="):
        t.check("001.sec52.swap-gap", ours=0.99, tol=0.01)
    with pytest.raises(ValueError, match="has no value 'nothing'"):
        t.check("001.sec52.swap-gap", value="nothing", ours=0.99, tol=0.01)
    row = t.check("001.sec52.swap-gap", value="swapping", ours=0.998, tol=0.01)
    assert row.seed == 0.999 and row.verdict == "reproduced"
    with pytest.raises(ValueError, match="the registry gives the number 0.999"):
        t.check("001.sec52.swap-gap", value="swapping", seed=1.0, ours=0.998, tol=0.01)
    ranged = t.check("001.fig8.rome-damage", value="r_nf", ours=1.9, passed=True)
    assert ranged.seed == "1.238 to 2.405"


def test_outside_rows_by_id_name_the_outside_material():
    from assocmem.claims import get_claim

    row = ReproductionTable("Outside").check("000.ext.delta-orthonormal", ours=0.0, tol=1e-12, origin="outside")
    assert row.source == get_claim("000.ext.delta-orthonormal").outside
    assert row.label == "claim (outside the seeds)" and row.seed == 0


def test_rows_by_add_store_what_they_always_did(tmp_path):
    """The two new record keys appear only on rows that use them, so that every committed output
    (nbval compares them) stays as it was; collect reads them back as strings."""
    t = ReproductionTable("Unchanged")
    t.add("c1", seed=1.0, ours=1.0, tol=0.0, source="seed 000, sec. 7")
    t.add("c2", seed="x", ours="y", expect="not comparable", note="no number", different_test="a 2-d grid")
    t.check("000.sec2.score-plus-one", ours=2.718, tol=0.01)
    recs = t.records()
    assert list(recs[0]) == ["claim", "kind", "origin", "source", "source says", "ours", "tolerance",
                             "verdict", "note", "anchor"]
    assert recs[1]["different_test"] == "a 2-d grid" and "claim_id" not in recs[1]
    assert '<tr id="repro-unchanged-1" class="repro-claim"><td>' in t.show()._repr_html_()
    rows = collect([_notebook(tmp_path, "07-by-id.ipynb", [t])])
    assert list(rows.columns[-2:]) == ["claim_id", "different_test"]
    assert list(rows.claim_id) == ["", "", "000.sec2.score-plus-one"]
    assert list(rows.different_test) == ["", "a 2-d grid", ""]


def test_check_keeps_the_registrys_range():
    """A row on a range claim uses the range, or one of its ends; any other seed= is refused, so
    that a typo cannot put another number in the source's mouth (newcomer review, issue 27)."""
    t = ReproductionTable("ranges")
    row = t.check("001.fig2c.ntk-ratio", ours=120.0, passed=True)
    assert row.seed == "10 to 10000"
    assert t.check("001.fig2c.ntk-ratio", ours=12.0, seed=10, tol=5.0).seed == 10  # one end alone
    with pytest.raises(ValueError, match=r"may only name one of its ends \(10, 10000\), got 5.0"):
        t.check("001.fig2c.ntk-ratio", ours=5.0, seed=5.0, tol=0.1)
    with pytest.raises(ValueError, match="range 6 to 10"):
        t.check("001.sec43.dd-vs-gd", ours=1.0, seed="1", passed=True)
