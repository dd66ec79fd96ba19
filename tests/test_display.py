"""The display policy (assocmem.display): rounding, bounds, tables and the output scan."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem import display as D


@pytest.mark.parametrize("value,spec,want", [
    (2.7320508075688776, ".3f", 2.732),
    (2.732050807568877, ".3f", 2.732),  # the other machine's last digit: same display, same value
    (0.043147364889304214, ".1%", 0.043),
    (15787.19, ",.0f", 15787.0),
    (1234567.89, ".4g", 1235000.0),
    (1.0072888525602346, ".2e", 1.01),
    (-1e-20, ".3f", 0.0),
])
def test_rounded_keeps_exactly_the_shown_digits(value, spec, want):
    got = D.rounded(value, spec)
    assert got == want
    assert format(got, spec) == format(value, spec).replace("-0.000", "0.000")  # the same digits
    assert math.copysign(1.0, got) == 1.0 or got != 0  # no negative zero


def test_rounded_accepts_scalars_of_every_kind_and_keeps_ints():
    assert D.rounded(np.float64(0.12345), ".2f") == 0.12
    assert D.rounded(torch.tensor(0.12345, dtype=torch.float64), ".2f") == 0.12
    assert D.rounded(np.array(0.5), ".1f") == 0.5
    assert D.rounded(7, ".2f") == 7 and isinstance(D.rounded(7, ".2f"), int)
    assert math.isnan(D.rounded(float("nan"), ".2f")) and D.rounded(math.inf, ".2f") == math.inf


@pytest.mark.parametrize("bad", [True, np.bool_(False), "1.0", None, [1.0], torch.ones(2)])
def test_rounded_refuses_non_numbers(bad):
    with pytest.raises(TypeError):
        D.rounded(bad, ".2f")


@pytest.mark.parametrize("spec", ["", "3f", ".3", ".3d", "x", ".3s"])
def test_rounded_refuses_non_float_specs(spec):
    with pytest.raises(ValueError, match="spec"):
        D.rounded(1.5, spec)


def test_bound_text_never_rounds_the_bound_down():
    assert D.bound_text(1e-12) == "< 1e-12"
    assert D.bound_text(1.4e-12) == "< 1.4e-12"
    assert D.bound_text(2.9e-11) == "< 2.9e-11"  # as written, like the tolerance column
    assert D.bound_text(2.93e-11) == "< 2.93e-11" and D.bound_text(2.9312e-11) == "< 3e-11"
    assert D.bound_text(5e-3) == "< 5e-3"
    for b in (1.23456e-9, 9.99e-7, 3.3e-15):
        shown = float(D.bound_text(b)[2:])
        assert shown >= b
    for bad in (0.0, -1e-12, math.nan, math.inf):
        with pytest.raises(ValueError, match="bound"):
            D.bound_text(bad)


def test_fmt_shows_bounds_and_refuses_values_above_them():
    assert D.fmt(4.441e-16, below=1e-12) == "< 1e-12"
    assert D.fmt(-3e-13, below=1e-12) == "< 1e-12"
    with pytest.raises(D.RoundingLevelError, match="no longer rounding noise"):
        D.fmt(2e-12, below=1e-12)
    with pytest.raises(D.RoundingLevelError):
        D.fmt(float("nan"), below=1e-12)


def test_fmt_numbers_strings_and_missing():
    assert D.fmt(0.96029375) == "0.9603"
    assert D.fmt(-1e-30, ".3f") == "0.000" and D.fmt(-1e-30, ".2f") == "0.00"  # never "-0.000"
    assert D.fmt(12345678) == "12,345,678"
    assert D.fmt(float("nan")) == "-" and D.fmt(None) == "-" and D.fmt(pd.NA) == "-"
    assert D.fmt("n/a") == "n/a"


def test_frame_formats_every_cell_and_drops_an_unnamed_index():
    df = pd.DataFrame({"a": [1.46e-17, -0.0, np.nan], "b": ["x", "y", "z"], "c": [1, 2, 3],
                       "ok": [True, False, True]}, index=[5, 6, 7])
    out = D.frame(df, {"a": ".3f"})
    assert list(out.index) == [0, 1, 2]
    assert out["a"].tolist() == ["0.000", "0.000", "-"]
    assert out["c"].tolist() == ["1", "2", "3"] and out["ok"].tolist() == ["yes", "no", "yes"]
    named = D.frame(df.rename_axis("n"))
    assert list(named.columns)[0] == "n"
    bounded = D.frame(pd.DataFrame({"resid": [1e-16, 3e-15]}), below={"resid": 1e-12})
    assert bounded["resid"].tolist() == ["< 1e-12", "< 1e-12"]
    with pytest.raises(D.RoundingLevelError):
        D.frame(pd.DataFrame({"resid": [1e-16, 1e-3]}), below={"resid": 1e-12})


def test_table_hides_the_index_and_shows_readable_headers():
    df = pd.DataFrame({"gamma_min": [0.12345, np.nan], "n_keys": [4, 8]}, index=[3, 9])
    shown = D.tabulate(df, {"gamma_min": ".3f"}, headers={"gamma_min": "smallest margin γ",
                                                         "n_keys": "keys N"}, missing="n/a")
    assert list(shown.frame.columns) == ["smallest margin γ", "keys N"]
    assert shown.frame["smallest margin γ"].tolist() == ["0.123", "n/a"]
    html = shown._repr_html_()
    assert "<th>smallest margin γ</th>" in html and "<th></th>" not in html
    assert ">3<" not in html and ">9<" not in html  # no row index
    text = repr(shown)
    assert text.splitlines()[0].split() == ["smallest", "margin", "γ", "keys", "N"]
    assert D.output_problems(text) == [] and D.output_problems(html) == []
    # one mapping may serve several tables: names of absent columns are ignored
    assert list(D.tabulate(df, headers={"gamma": "γ"}).frame.columns) == ["gamma_min", "n_keys"]
    with pytest.raises(ValueError, match="share a header"):
        D.tabulate(df, headers={"gamma_min": "n_keys"})
    with pytest.raises(TypeError, match="headers"):
        D.tabulate(df, headers=["γ"])


def test_output_scan_flags_machine_digits_and_passes_policy_output():
    bad = "x = 2.7320508075688776, resid 4.441e-16, zero -0.000, big 1,234.5678"
    problems = D.output_problems(bad)
    assert len(problems) == 4
    good = ("ratio 2.732, tol 1.0e-12, bound < 1e-12, p 4.839e-195 is fine? no: "
            "version 2.13.0, address 0x7f5e, count 12,345, small 5e-15, pct 4.3%")
    assert [p for p in D.output_problems(good) if "4.839e-195" not in p] == []
    assert D.output_problems(D.fmt(0.1 + 0.2)) == []
    assert D.output_problems(repr(D.rounded(0.1 + 0.2, ".3g"))) == []
    assert D.output_problems(repr(0.1 + 0.2))  # the raw repr is what the scan exists to catch


def test_glue_requires_a_spec_for_floats_and_stores_the_rounded_value(monkeypatch):
    stored = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: stored.__setitem__(name, value))
    D.glue("x", 2.7320508075688776, ".3f")
    D.glue("n", np.int64(12))
    D.glue("s", "text")
    D.glue("r", 3e-16, below=1e-12)
    assert stored == {"x": 2.732, "n": 12, "s": "text", "r": "< 1e-12"}
    assert type(stored["n"]) is int
    with pytest.raises(TypeError, match="spec"):
        D.glue("y", 0.5)


# bad input: (call, error type, message fragment). Every entry point refuses the same inputs.
_DF = pd.DataFrame({"a": [0.5, np.nan]})
_BAD_INPUT = [
    ("missing None (tabulate)", lambda: D.tabulate(_DF, missing=None), TypeError, "missing must be a str"),
    ("missing None (frame)", lambda: D.frame(_DF, missing=None), TypeError, "missing must be a str"),
    ("missing 0 (fmt)", lambda: D.fmt(0.5, missing=0), TypeError, "missing must be a str"),
    ("index 'yes'", lambda: D.tabulate(_DF, index="yes"), TypeError, "index must be True or False"),
    ("index 1 (frame)", lambda: D.frame(_DF, index=1), TypeError, "index must be True or False"),
    (".17g (tabulate)", lambda: D.tabulate(_DF, ".17g"), ValueError, "17 significant digits"),
    (".7g per column", lambda: D.frame(_DF, {"a": ".7g"}), ValueError, "7 significant digits"),
    (".6e (fmt)", lambda: D.fmt(0.5, ".6e"), ValueError, "7 significant digits"),
    ("bare e (rounded)", lambda: D.rounded(0.5, "e"), ValueError, "7 significant digits"),
    (".10f (formatter)", lambda: D.formatter(".10f"), ValueError, "10 decimals"),
    (".8% (glue)", lambda: D.glue("x", 0.5, ".8%"), ValueError, "8 decimals"),
    ("duplicate columns", lambda: D.tabulate(pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])),
     ValueError, "appear more than once"),
    ("index level named like a column",
     lambda: D.tabulate(pd.DataFrame({"a": [1.0]}, index=pd.Index([0], name="a"))),
     ValueError, "index levels count as columns"),
]


@pytest.mark.parametrize("call,error,match", [row[1:] for row in _BAD_INPUT],
                         ids=[row[0] for row in _BAD_INPUT])
def test_bad_input_is_refused_with_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_six_significant_digits_is_the_most_a_spec_may_show():
    assert D.fmt(1 / 3, ".6g") == "0.333333" and D.fmt(1 / 3, ".5e") == "3.33333e-01"
    assert D.fmt(1 / 3, ".6f") == "0.333333" and D.fmt(1 / 3, "g") == "0.333333"
    assert D.output_problems(D.fmt(2 / 3, ".6g")) == []


def test_infinities_show_as_the_infinity_sign_everywhere():
    assert D.fmt(np.inf, ".3f") == "∞" and D.fmt(-np.inf) == "-∞"
    assert D.fmt(torch.tensor(float("inf")), ".2e") == "∞"
    out = D.tabulate(pd.DataFrame({"F": [np.inf, -np.inf, 2.0]}), ".1f")
    assert out.frame["F"].tolist() == ["∞", "-∞", "2.0"]
    assert "inf" not in repr(out) and "inf" not in out._repr_html_()
    assert D.frame(pd.DataFrame({"F": [np.inf]}))["F"].tolist() == ["∞"]


def test_range_text_shows_mean_and_ends_over_trainings():
    from assocmem.display import range_text

    assert range_text([0.94, 0.95, 0.962], ".3f") == "0.951 (0.940 to 0.962)"
    assert range_text([1.0, 1.0, 0.99999], ".3f") == "1.000 (all)"
    assert range_text([float("nan"), 0.5], ".2f") == "0.50"
    assert range_text([], ".2f") == "-"
    with pytest.raises(TypeError):
        range_text([True, 1.0])


@pytest.mark.parametrize("value, spec, text", [
    (1, ".1%", "100.0%"), (0, ".0%", "0%"), (-2, ".0%", "-200%"), (np.int64(3), ".1%", "300.0%"),
    (1.0, ".1%", "100.0%"), (12345, ".2e", "12,345"),  # e/f/g keep an integer a count
    (-1.79e308, ".1e", "-1.8e+308"), (1.7976931348623157e308, ".4g", "1.798e+308"),
    (-1.7976931348623157e308, ".4g", "-1.798e+308"), (1.7976931348623157e308, ".1e", "1.8e+308"),
    (5e-324, ".2e", "4.94e-324"), (-5e-324, ".1f", "0.0"), (-0.0001, ".2f", "0.00"),
])
def test_fmt_at_the_edges_shows_the_rounded_digits_never_0_or_inf(value, spec, text):
    assert D.fmt(value, spec) == text
    assert D.fmt(D.rounded(value, spec), spec) == text  # what glue stores prints the same digits


def test_a_percent_of_a_value_near_the_largest_float_is_exact_not_inf():
    import decimal
    out = D.fmt(1e307, ".1%")
    assert out.endswith(".0%") and "inf" not in out
    with decimal.localcontext() as ctx:
        ctx.prec = 400
        assert decimal.Decimal(out[:-1]) == decimal.Decimal(1e307) * 100


def test_frame_keeps_integer_cells_as_counts_under_a_percent_spec():
    from assocmem.display import frame
    out = frame(pd.DataFrame({"n": [100, 2], "p": [0.5, 1.0]}), ".1%")
    assert out["n"].tolist() == ["100", "2"] and out["p"].tolist() == ["50.0%", "100.0%"]
