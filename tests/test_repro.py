"""Reproduction tables reach the right verdicts and raise on regressions."""

import numpy as np
import pytest
import torch

from assocmem.repro import Check, ReproductionError, ReproductionTable


def test_absolute_and_relative_tolerances():
    assert Check("a", seed=1.0, ours=1.04, tol=0.05).verdict == "reproduced"
    assert Check("a", seed=1.0, ours=1.06, tol=0.05).verdict == "differs"
    assert Check("r", seed=200.0, ours=209.0, tol=0.05, relative=True).verdict == "reproduced"
    assert Check("r", seed=200.0, ours=211.0, tol=0.05, relative=True).verdict == "differs"


def test_nan_never_reproduces():
    assert Check("nan", seed=1.0, ours=float("nan"), tol=1e9).verdict == "invalid"


def test_qualitative_and_not_comparable_rows():
    assert Check("q", seed="linear", ours="linear", passed=True).verdict == "reproduced"
    assert Check("q", seed="linear", ours="quadratic", passed=False, expect="differs").verdict == "differs"
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
    t.add("seed wrong", seed=35.5, ours=35.5, tol=0.1, expect="differs")
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
    assert t.counts == {"reproduced": 1, "differs": 0, "not comparable": 0, "invalid": 0}


def test_nan_cannot_pass_as_a_difference():
    t = ReproductionTable("nan")
    t.add("broken fit", seed=0.97, ours=float("nan"), tol=0.01, expect="differs")
    with pytest.raises(ReproductionError, match="invalid"):
        t.check()
    assert t.counts["invalid"] == 1


def test_not_comparable_row_fails_when_our_own_check_fails():
    assert Check("n", seed="none", ours="x", expect="not comparable", passed=True).verdict == "not comparable"
    t = ReproductionTable("ours")
    t.add("our derivation", seed="not stated", ours="ratio 0.9", expect="not comparable", passed=False)
    with pytest.raises(ReproductionError):
        t.check()


def test_table_column_names_the_source():
    t = ReproductionTable("cols")
    t.add("x", seed=1.0, ours=1.0, tol=0.0)
    assert list(t.to_frame().columns) == ["claim", "source", "source says", "ours", "tolerance", "verdict"]


def test_a_failing_add_leaves_the_table_unchanged():
    t = ReproductionTable("atomic")
    t.add("kept", seed=1.0, ours=1.0, tol=0.1)
    before = list(t.rows)
    for bad in ({"tol": True}, {"tol": "0.1"}, {"tol": float("inf")}, {"relative": "yes", "tol": 0.1},
                {"passed": "no"}, {"below": 0.0, "tol": 0.1}):
        with pytest.raises(ValueError):
            t.add("bad", seed=1.0, ours=1.5, **bad)
        assert t.rows == before and t.counts["reproduced"] == 1
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
