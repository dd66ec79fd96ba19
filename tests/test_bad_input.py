"""Bad and edge-case input to the shared floor's public functions (devices, display, repro, datasets,
benchmarking, plotting), in the style of numpy's and scipy's edge-case tests.

Every case is written from the function's documented contract: it either raises a clear error whose
message names the argument (checked with ``match=``), or returns the right value. The sweeps have
their own table in ``tests/sweeps/test_bad_input.py``; the command line's file-system errors are in
``tests/test_main.py``.
"""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem import benchmarking as B
from assocmem import datasets as DS
from assocmem import display as D
from assocmem import plotting as P
from assocmem.devices import resolve_device, torch_threads
from assocmem.repro import Check, ReproductionTable

DF = pd.DataFrame({"a": [1.5, 2.5], "b": [1, 2]})
LABELS = np.repeat(np.arange(3), 4)


def _table_add(**kwargs):
    return ReproductionTable("t").add("claim", **kwargs)


def _table_check(*args, **kwargs):
    return ReproductionTable("t").check(*args, **kwargs)


def _enter(ctx):
    with ctx:
        pass


# (callable, args, kwargs, error, match): every call must raise ``error`` with a message matching ``match``
BAD = [
    # devices.resolve_device: unknown strings, bad indices, non-strings
    (resolve_device, ("tpu",), {}, ValueError, "unknown device 'tpu'"),
    (resolve_device, ("CPU",), {}, ValueError, "unknown device 'CPU'"),
    (resolve_device, ("",), {}, ValueError, "unknown device ''"),
    (resolve_device, (" cpu",), {}, ValueError, "unknown device ' cpu'"),
    (resolve_device, ("cpu:x",), {}, ValueError, "index after ':' must be a non-negative integer"),
    (resolve_device, ("cpu:-1",), {}, ValueError, "index after ':' must be a non-negative integer"),
    (resolve_device, ("cuda:one",), {}, ValueError, "index after ':' must be a non-negative integer"),
    (resolve_device, ("auto:0",), {}, ValueError, "'auto' takes no index"),
    (resolve_device, (0,), {}, ValueError, "device must be a str"),
    (resolve_device, (True,), {}, ValueError, "device must be a str"),
    (resolve_device, (["cpu"],), {}, ValueError, "device must be a str"),
    (lambda: _enter(torch_threads(1, "tpu")), (), {}, ValueError, "unknown device"),
    (lambda: _enter(torch_threads(2.5)), (), {}, ValueError, "num_threads"),
    # display: bad specs, bad bounds, bad tables
    (D.rounded, (1.0, 3), {}, ValueError, "spec must be a float format"),
    (D.rounded, (1.0, None), {}, ValueError, "spec must be a float format"),
    (D.rounded, (1.0, ".3d"), {}, ValueError, "spec must be a float format"),
    (D.rounded, ("1.0", ".2f"), {}, TypeError, "value: expected a real number, got str"),
    (D.rounded, (torch.ones(2), ".2f"), {}, TypeError, r"got Tensor of shape \(2,\)"),
    (D.fmt, (3, "abc"), {}, ValueError, "spec must be a float format"),  # ints too: a bad spec never passes
    (D.fmt, ("text", "abc"), {}, ValueError, "spec must be a float format"),
    (D.fmt, (None, ".3q"), {}, ValueError, "spec must be a float format"),
    (D.fmt, (0.0,), {"below": "1e-3"}, TypeError, "below: expected a real number"),
    (D.fmt, (0.0,), {"below": True}, TypeError, "below: expected a number, got the boolean"),
    (D.fmt, (0.0,), {"below": 0.0}, ValueError, "below .* must be a positive finite number"),
    (D.fmt, (0.0,), {"below": math.inf}, ValueError, "below .* must be a positive finite number"),
    (D.fmt, (math.nan,), {"below": 1e-3}, D.RoundingLevelError, "no longer rounding noise"),
    (D.bound_text, ("1e-3",), {}, TypeError, "bound: expected a real number"),
    (D.formatter, ("abc",), {}, ValueError, "spec must be a float format"),  # at once, not at the first call
    (D.frame, ([[1.0]],), {}, TypeError, "df must be a pandas DataFrame"),
    (D.frame, (DF, None), {}, TypeError, "spec must be a format str"),
    (D.frame, (DF, "abc"), {}, ValueError, "spec must be a float format"),
    (D.frame, (DF, {"a": 3}), {}, ValueError, "spec of column 'a'"),
    (D.frame, (DF,), {"below": [1e-3]}, TypeError, "below must be a mapping"),
    (D.frame, (DF,), {"below": {"missing": 1e-3}}, ValueError, r"below names column\(s\) \['missing'\]"),
    (D.frame, (DF,), {"below": {"a": -1.0}}, ValueError, r"below\['a'\] .* positive finite"),
    (D.frame, (DF,), {"below": {"a": 1e-3}}, D.RoundingLevelError, "no longer rounding noise"),
    (D.output_problems, (None,), {}, TypeError, "text must be a str"),
    (D.glue, ("x", 1.5, "abc"), {}, ValueError, "spec must be a float format"),
    (D.glue, ("n", 3, ".3q"), {}, ValueError, "spec must be a float format"),
    (D.glue, (3, 1.5, ".2f"), {}, TypeError, "glue name must be a non-empty str"),
    # display, issue 31: tables, and numbers at the edges that used to print wrong
    (D.tabulate, ([[1]],), {}, TypeError, "df must be a pandas DataFrame"),
    (D.tabulate, (DF,), {"headers": ["x"]}, TypeError, "headers must be a mapping of column -> str"),
    (D.tabulate, (DF,), {"headers": {"a": 3}}, TypeError, "headers must be a mapping of column -> str"),
    (D.tabulate, (DF,), {"headers": {"a": "b"}}, ValueError, "two columns would share a header"),
    (D.tabulate, (DF, ".7f"), {}, ValueError, "shows 7 decimals"),
    (D.Table, ("x",), {}, TypeError, "frame must be a pandas DataFrame"),
    (D.fmt, (1 + 2j,), {}, TypeError, "expected a real number, got complex"),
    (D.fmt, (math.nan,), {"missing": 0}, TypeError, "missing must be a str"),
    (D.frame, (DF,), {"index": "no"}, TypeError, "index must be True or False"),
    # repro: tolerances that are not numbers, flags that are not bools, bad table settings
    (Check, ("c", 1.0, 1.5), {"tol": True}, ValueError, "tol must be a real number, got True"),
    (Check, ("c", 1.0, 1.5), {"tol": "0.1"}, ValueError, "tol must be a real number, got '0.1'"),
    (Check, ("c", 1.0, 1.5), {"tol": math.nan}, ValueError, "tol must be finite"),
    (Check, ("c", 1.0, 1e300), {"tol": math.inf}, ValueError, "tol must be finite"),
    (Check, ("c", 1.0, 1.0), {"tol": -0.1}, ValueError, "tol must be >= 0"),
    (_table_add, (), {"seed": 1.0, "ours": 1.5, "tol": True}, ValueError, "tol must be a real number"),
    (_table_add, (), {"seed": 1.0, "ours": 1.5, "tol": "0.1"}, ValueError, "tol must be a real number"),
    (_table_add, (), {"seed": 1.0, "ours": torch.ones(2), "tol": 0.1}, ValueError, r"ours must be a number.*\(2,\)"),
    (_table_add, (), {"seed": 1.0, "ours": [1.0], "tol": 0.1}, ValueError, "ours must be a number, str or None"),
    (Check, ("c", "x", "y"), {"passed": "no"}, ValueError, "passed must be True or False"),
    (Check, ("c", "x", "y"), {"passed": 0}, ValueError, "passed must be True or False"),
    (Check, ("c", 1.0, 1.0), {"tol": 0.1, "relative": "no"}, ValueError, "relative must be True or False"),
    (Check, ("c", True, 1), {"tol": 0.5}, ValueError, r"numeric comparison needs numeric seed/ours \(booleans"),
    (Check, ("c", 0.0, 1e-20), {"tol": 1e-9, "below": -1.0}, ValueError, "below must be > 0"),
    (Check, (None, 1.0, 1.0), {"tol": 0.1}, TypeError, "claim must be a str"),
    (ReproductionTable, ("t",), {"digits": 0}, ValueError, "digits must be >= 1"),
    (ReproductionTable, ("t",), {"digits": True}, ValueError, "digits must be an integer"),
    (ReproductionTable, ("t",), {"digits": 2.5}, ValueError, "digits must be an integer"),
    (ReproductionTable, (None,), {}, TypeError, "title must be a str"),
    (Check, ("c", 1.0, 1.0), {"tol": 0.1, "kind": "verdict"}, ValueError, "kind must be one of"),
    (Check, ("c", 1.0, 2.0), {"tol": 0.1, "kind": "sanity", "expect": "differs"}, ValueError, "cannot expect"),
    (Check, ("c", 1.0, 1.0), {"tol": 0.1, "origin": "outside"}, ValueError, "must say where it comes from"),
    (Check, ("c", 1.0, 1.0), {"tol": 0.1, "source": 3}, TypeError, "source must be a str"),
    (_table_add, (), {"seed": 1.0, "ours": 5.0, "tol": 0.1, "passed": True}, ValueError, "not both"),
    (Check, ("c", 1.0, 2.0), {"tol": 0.1, "expect": "not comparable", "note": "n"}, ValueError, "nothing to set a tol"),
    (Check, ("c", 1.0, 2.0), {"tol": 0.1, "expect": "differs"}, ValueError, "needs a note= saying why"),
    (Check, ("c", "x", "y"), {"kind": "not comparable", "note": " "}, ValueError, "needs a note= saying why"),
    (Check, (" ", 1.0, 1.0), {"tol": 0.1}, ValueError, "claim must say what is compared"),
    (ReproductionTable, ("--",), {}, ValueError, "title must contain a letter or digit"),
    # repro: rows by registry id (ReproductionTable.check)
    (_table_check, ("000.sec2.score-plus-on",), {"ours": 2.7, "tol": 0.1}, KeyError, "close ids: 000.sec2.score-plus-one"),
    (_table_check, (3,), {"ours": 2.7, "tol": 0.1}, TypeError, "claim_id must be a str"),
    (_table_check, ("000.sec2.score-plus-one",), {"tol": 0.1}, TypeError, "ours= is required"),
    (_table_check, ("000.sec2.score-plus-one",), {"ours": 2.7, "seed": 3.0, "tol": 0.1}, ValueError,
     "registry gives the number"),
    (_table_check, ("000.sec2.score-plus-one",), {"ours": 2.7, "tol": 0.1, "different_test": 3}, TypeError,
     "different_test must be a str or None"),
    (_table_check, ("000.sec2.score-plus-one",), {"ours": 2.7, "tol": 0.1, "case": 4}, ValueError,
     "case must name the case"),
    (ReproductionTable, ("t",), {"summary": "yes"}, ValueError, "summary must be True or False"),
    # datasets: seeds, NaN labels, flags, paths, IDX limits
    (DS.stratified_split, (LABELS, 0.5, "x"), {}, ValueError, "seed must be an integer"),
    (DS.stratified_split, (LABELS, 0.5, 1.5), {}, ValueError, "seed must be an integer"),
    (DS.stratified_split, (LABELS, 0.5, True), {}, ValueError, "seed must be an integer, got the boolean"),
    (DS.stratified_split, (LABELS, 0.5, -1), {}, ValueError, "seed must be >= 0"),
    (DS.stratified_split, ([np.nan, np.nan, 1.0, 1.0], 0.5), {}, ValueError, "labels must not contain NaN"),
    (DS.stratified_split, (LABELS, True), {}, ValueError, "test_fraction"),
    (DS.read_idx, (None,), {}, TypeError, "path must be a str or os.PathLike"),
    (DS.write_idx, ("x.idx", np.zeros(2, np.uint8)), {"compress": "no"}, ValueError, "compress must be True or False"),
    (DS.write_idx, (3, np.zeros(2, np.uint8)), {}, TypeError, "path must be a str or os.PathLike"),
    (DS.write_idx, ("x.idx", np.zeros((2**32, 0), np.uint8)), {}, ValueError, "uint32"),
    (DS.find_mnist, (None,), {}, TypeError, "root must be a str or os.PathLike"),
    (DS.find_mnist, (".", ["train"]), {}, ValueError, "split must be one of"),
    (DS.load_mnist, (".",), {"flatten": "no"}, ValueError, "flatten must be True or False"),
    (DS.load_mnist, (".",), {"scale": 1}, ValueError, "scale must be True or False"),
    (DS.load_mnist, (".",), {"limit": -1}, ValueError, "limit must be >= 0"),
    (DS.load_digits_patterns, (), {"seed": "x"}, ValueError, "seed must be an integer"),
    # benchmarking: run times, thread counts and sizes
    (B.time_call, (lambda: None,), {"min_run_time": True}, ValueError, "min_run_time must be a positive"),
    (B.time_call, (lambda: None,), {"min_run_time": "1"}, ValueError, "min_run_time must be a positive"),
    (B.time_call, (lambda: None,), {"min_run_time": math.inf}, ValueError, "min_run_time must be a positive"),
    (B.time_call, (lambda: None,), {"min_run_time": 0.01, "num_threads": 0}, ValueError, "num_threads must be >= 1"),
    (B.time_call, (lambda: None,), {"min_run_time": 0.01, "num_threads": 1.5}, ValueError, "num_threads must be an integer"),
    (B.time_call, (3,), {}, TypeError, "fn must be a callable"),
    (B.machine_info, ("cpu", 0), {}, ValueError, "num_threads must be >= 1"),
    (B.machine_info, ("cpu", "x"), {}, ValueError, "num_threads must be an integer"),
    (B.machine_info, ("tpu",), {}, ValueError, "unknown device"),
    (B.gemm_rate, (2.5, 2, 2), {}, ValueError, "matrix size n must be an integer"),
    (B.gemm_rate, (2, True, 2), {}, ValueError, "matrix size k must be an integer"),
    (B.gemm_rate, (2, 2, 0), {}, ValueError, "matrix sizes must be >= 1"),
    (B.gemm_rate, (2, 2, 2), {"num_threads": 0, "min_run_time": 0.01}, ValueError, "num_threads must be >= 1"),
    (B.fastest_thread_count, ((2, 2),), {}, ValueError, r"shape must be three matrix sizes"),
    (B.fastest_thread_count, ((2, 2, 2), -1.0), {}, ValueError, "min_run_time must be a positive"),
    # plotting
    (P.color, (1.5,), {}, ValueError, "unknown colour 1.5"),
    (P.color, (True,), {}, ValueError, "unknown colour True"),
    (P.color, (None,), {}, ValueError, "unknown colour None"),
    (P.key_value_planes, (), {"lim": 0}, ValueError, "lim must be > 0"),
    (P.key_value_planes, (), {"lim": math.nan}, ValueError, "lim must be finite"),
    # display.range_text (issue 31's closing audit): a value per training, never characters or keys
    (D.range_text, (0.95,), {}, TypeError, "values must be a sequence of numbers .* got float"),
    (D.range_text, ("0.95",), {}, TypeError, "values must be a sequence of numbers .* got str"),
    (D.range_text, ({"a": 0.95},), {}, TypeError, "values must be a sequence of numbers .* got dict"),
    (D.range_text, ([True, 0.5],), {}, TypeError, "got the boolean True"),
    (D.range_text, ([0.5, 0.6], ".3d"), {}, ValueError, "spec must be a float format"),
]


@pytest.mark.parametrize("fn, args, kwargs, error, match", BAD,
                         ids=[f"{getattr(c[0], '__name__', 'call')}-{i}" for i, c in enumerate(BAD)])
def test_bad_input_raises_a_clear_error(fn, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn(*args, **kwargs)


def test_draw_vector_refuses_what_it_cannot_draw():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        for v, match in (([1.0, 2.0, 3.0], "two finite numbers"), ([math.nan, 1.0], "two finite numbers"),
                         ("ab", "2-D vector")):
            with pytest.raises(ValueError, match=match):
                P.draw_vector(ax, v)
        with pytest.raises(ValueError, match="offset must be two numbers"):
            P.draw_vector(ax, [1.0, 1.0], label="v", offset=(1.0,))
        with pytest.raises(ValueError, match="unknown colour True"):
            P.draw_vector(ax, [1.0, 1.0], c=True)
        assert not ax.patches and not ax.texts  # nothing was half drawn
    finally:
        plt.close(fig)


# Edge cases with a right answer (no error)
def test_edge_cases_with_a_right_value():
    assert resolve_device("cpu:0") == torch.device("cpu", 0)
    assert D.fmt(10**400) == "1.000e+400"  # beyond float's range: exact, not an OverflowError
    assert D.fmt(pd.NaT) == "-" and D.frame(pd.DataFrame({"t": [pd.NaT]})).iloc[0, 0] == "-"
    assert D.frame(pd.DataFrame({"x": [torch.tensor(1.23456, dtype=torch.float64)]}), ".3f").iloc[0, 0] == "1.235"
    row = ReproductionTable("t").add("np tol", seed=1.0, ours=1.05, tol=np.float32(0.1))
    assert type(row.tol) is float and row.verdict == "reproduced"
    assert Check("a", 1.0, 1.0, tol=0.1, relative=np.bool_(False)).relative is False
    # numpy and torch booleans are booleans: a failed "not comparable" check now reaches "differs"
    assert Check("n", "x", "y", expect="not comparable", passed=np.bool_(False), note="why").verdict == "differs"
    assert Check("q", "x", "y", passed=torch.tensor(True)).passed is True
    train, test = DS.stratified_split(LABELS, 0.5, np.int64(3))
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(12))
    assert DS.stratified_split([], 0.5)[0].size == 0  # no labels: an empty split, not an error
    assert P.color(np.int64(2)) == P.color(2) and P.color(-1) == P.color(7)  # the cycle wraps


def test_display_at_the_edges_of_float64_and_of_the_percent_spec():
    """Issue 31: an integer under a % spec is a fraction; the largest floats print their digits."""
    assert D.fmt(1, ".1%") == "100.0%" and D.fmt(np.int64(0), ".0%") == "0%"
    assert D.fmt(-1.79e308, ".1e") == "-1.8e+308" and D.fmt(1.7976931348623157e308, ".4g") == "1.798e+308"
    assert D.fmt(-1e-320, ".1e") == "-1.0e-320" and D.fmt(-0.0, ".1e") == "0.0e+00"
    assert D.frame(DF, ".1%")["b"].tolist() == ["1", "2"]  # integer cells of a table stay counts
    assert D.bound_text(5e-324) == "< 5e-324"
