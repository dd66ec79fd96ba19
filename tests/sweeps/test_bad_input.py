"""Bad and edge-case input to the sweeps' public functions (config, registry, store, engine,
executors, search, agreement), in the style of numpy's and scipy's edge-case tests.

Each case is written from the documented contract: a clear error whose message names the argument
(``match=``), or the right value. Every case runs with the ``toy`` sweep registered and a fresh
``tmp_path``; a case is a function of that folder. The store's failure injection is in
``test_store.py``, the registry's in ``test_registry.py``, the command line's in ``tests/test_main.py``.
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.sweeps import (
    ProcessExecutor,
    RayExecutor,
    ResultsError,
    ResultsPaths,
    RowsDisagree,
    SerialExecutor,
    Sweep,
    canonical_key,
    check_rows,
    check_spread,
    config_to_json,
    leave_one_training_out,
    load_largest_results,
    load_results,
    make_executor,
    median_training,
    point_seed,
    prediction_half_width,
    read_provenance,
    register_sweep,
    run_sweep,
    smallest_width,
    training_spread,
    training_views,
    unregister_sweep,
)
from assocmem.sweeps.engine import environment_info, execute_point
from assocmem.sweeps.registry import get_sweep
from assocmem.sweeps.search import smallest_width_reference
from assocmem.sweeps.store import ResultsStore, format_line, format_value, grid_hash
from tests.sweeps._toy import ToyConfig, toy_point, toy_points

LIVE = pd.DataFrame({"k": [1, 2], "x": [0.1, 0.2], "s": ["a", "b"]})
TRAININGS = pd.concat([LIVE.assign(training=t, x=LIVE.x + 0.01 * t) for t in range(3)], ignore_index=True)
STEP = lambda m: float(m >= 5)  # noqa: E731 - a threshold at 5


@dataclass(frozen=True)
class Seeded:
    seed: object = 0


def _register(**kwargs):
    args = dict(config_type=ToyConfig, presets={"quick": ToyConfig(1)}, points=toy_points, run_point=toy_point)
    args.update(kwargs)
    return register_sweep("badreg", **args)


def _rows(**kwargs):
    return check_rows(LIVE, LIVE, kwargs.pop("keys", ["k"]), **kwargs)


def _file(tmp):
    (tmp / "afile").write_text("not a folder")
    return tmp / "afile"


# (case, error, match): case(tmp_path) must raise ``error`` with a message matching ``match``
BAD = [
    # config
    (lambda t: canonical_key({"a": math.nan}), ValueError, "point value 'a' is nan"),
    (lambda t: canonical_key([("a", 1)]), TypeError, "a point must be a mapping"),
    (lambda t: canonical_key({"a": object()}), TypeError, "point value 'a' must be a bool, int, float, str or None"),
    (lambda t: canonical_key({1: 2}), TypeError, "point keys must be non-empty strings"),
    (lambda t: point_seed(Seeded("x"), {"a": 1}), ValueError, "config.seed must be an integer"),
    (lambda t: point_seed(Seeded(1.5), {"a": 1}), ValueError, "config.seed must be an integer"),
    (lambda t: point_seed(Seeded(True), {"a": 1}), ValueError, "config.seed must be an integer, got the boolean"),
    (lambda t: point_seed(Seeded(None), {"a": 1}), ValueError, "config.seed must be an integer"),
    (lambda t: config_to_json(ToyConfig(math.nan)), ValueError, "NaN or an infinity"),
    (lambda t: config_to_json(ToyConfig(object())), TypeError, "JSON cannot store"),
    # registry
    (lambda t: _register(replace="no"), ValueError, "replace must be True or False"),
    (lambda t: _register(description=3), ValueError, "description must be one line"),
    (lambda t: _register(description="two\nlines"), ValueError, "description must be one line"),
    (lambda t: _register(presets=[("quick", ToyConfig(1))]), TypeError, "presets must be a mapping"),
    (lambda t: unregister_sweep(["toy"]), ValueError, "name must be a str"),
    # executors
    (lambda t: make_executor(["serial"]), ValueError, "unknown executor"),
    (lambda t: make_executor("process", workers=0), ValueError, "workers must be a positive integer"),
    (lambda t: make_executor("process", workers=True), ValueError, "workers must be a positive integer"),
    (lambda t: make_executor("process", workers=1.5), ValueError, "workers must be a positive integer"),
    (lambda t: RayExecutor(address=5), ValueError, "address must be a Ray cluster address"),
    (lambda t: RayExecutor(address=""), ValueError, "address must be a Ray cluster address"),
    # engine: flags that are not bools would be truthy ("no" would force a discard)
    (lambda t: run_sweep("toy", "quick", force="no", results_dir=t), ValueError, "force must be True or False"),
    (lambda t: run_sweep("toy", "quick", persist="no", results_dir=t), ValueError, "persist must be True or False"),
    (lambda t: run_sweep("toy", "quick", progress=0, persist=False), ValueError, "progress must be True or False"),
    (lambda t: run_sweep("toy", None, persist=False), ValueError, "preset must be a str"),
    (lambda t: run_sweep("toy", ["quick"], persist=False), ValueError, "preset must be a str"),
    (lambda t: run_sweep("toy", "../x", config=ToyConfig(2), results_dir=t), ValueError, "preset must be a name"),
    (lambda t: run_sweep("toy", "a/b", config=ToyConfig(2), results_dir=t), ValueError, "preset must be a name"),
    (lambda t: run_sweep("toy", "", config=ToyConfig(2), results_dir=t), ValueError, "preset must be a name"),
    (lambda t: run_sweep("toy", "quick", results_dir=5), TypeError, "results_dir must be a path"),
    (lambda t: run_sweep("toy", "quick", results_dir=""), ValueError, "results_dir must not be empty"),
    (lambda t: run_sweep("toy", "quick", device="cuda:x", results_dir=t), ValueError, "index after ':'"),
    (lambda t: run_sweep("toy", "quick", device="tpu", results_dir=t), ValueError, "unknown device 'tpu'"),
    (lambda t: run_sweep("toy", "quick", device="cuda:99", results_dir=t), RuntimeError, "cuda:99"),
    # store: paths through a file, names that leave the folder, flags
    (lambda t: run_sweep("toy", "quick", results_dir=_file(t)), ResultsError,
     "cannot create the results folder .*a part of the path is a file, not a folder"),
    (lambda t: run_sweep("toy", "quick", results_dir=_file(t) / "sub"), ResultsError, "is a file, not a folder"),
    (lambda t: load_results("toy", "../quick", t), ValueError, "preset must be a name"),
    (lambda t: load_results(None, "quick", t), ValueError, "sweep must be a name"),
    (lambda t: load_results("toy", "quick", t, allow_partial="no"), ValueError, "allow_partial must be True or False"),
    (lambda t: load_results("toy", "quick", t, config=ToyConfig(6)), TypeError, "config must be a dict"),
    (lambda t: read_provenance("toy", "quick", 5), TypeError, "results_dir must be a path"),
    (lambda t: load_largest_results("toy", (), t), ValueError, "presets must name at least one preset"),
    (lambda t: ResultsPaths.of(t, "toy", "a\\b"), ValueError, "preset must be a name"),
    # search: bad bounds, targets and accuracies
    (lambda t: smallest_width(STEP, lo=0), ValueError, "lo must be an integer >= 1"),
    (lambda t: smallest_width(STEP, hi=True), ValueError, "hi must be an integer >= 1"),
    (lambda t: smallest_width(STEP, lo="1"), ValueError, "lo must be an integer >= 1"),
    (lambda t: smallest_width(STEP, lo=2.5), ValueError, "lo must be an integer >= 1"),
    (lambda t: smallest_width(STEP, lo=10, hi=5), ValueError, "lo must not exceed hi"),
    (lambda t: smallest_width(STEP, verify=-1), ValueError, "verify must be an integer >= 0"),
    (lambda t: smallest_width(STEP, verify=True), ValueError, "verify must be an integer >= 0"),
    (lambda t: smallest_width(STEP, target="1"), ValueError, "target must be a real number"),
    (lambda t: smallest_width(STEP, target=True), ValueError, "target must be a real number"),
    (lambda t: smallest_width(STEP, target=math.inf), ValueError, "target must be finite"),
    (lambda t: smallest_width(STEP, target=math.nan), ValueError, "target must not be NaN"),
    (lambda t: smallest_width(3), TypeError, "accuracy_at must be a callable"),
    (lambda t: smallest_width(lambda m: "1.0"), ValueError, r"accuracy_at\(1\) must be a real number"),
    (lambda t: smallest_width(lambda m: None), ValueError, r"accuracy_at\(1\) must be a real number"),
    (lambda t: smallest_width(lambda m: math.inf), ValueError, r"accuracy_at\(1\) must be finite"),
    (lambda t: smallest_width(lambda m: np.ones(2)), ValueError, r"accuracy_at\(1\) must be a real number"),
    # agreement
    (lambda t: _rows(tolerances={"x": True}, exact=["s"]), ValueError, "tolerance of 'x' must be a non-negative finite"),
    (lambda t: _rows(tolerances={"x": math.inf}, exact=["s"]), ValueError, "tolerance of 'x' must be a non-negative finite"),
    (lambda t: _rows(tolerances={"x": "0.1"}, exact=["s"]), ValueError, "tolerance of 'x' must be a non-negative finite"),
    (lambda t: _rows(tolerances={"x": 0.1, "s": 1.0}), ValueError, "tolerance of 's': the live column is not numeric"),
    (lambda t: _rows(tolerances=[("x", 0.1)], exact=["s"]), TypeError, "tolerances must be a mapping"),
    (lambda t: _rows(max_changed={"x": 1.5}, exact=["s"]), ValueError, "max_changed of 'x' must be a non-negative integer"),
    (lambda t: _rows(keys=[], tolerances={"x": 0.1}, exact=["s", "k"]), ValueError, "keys must name at least one"),
    (lambda t: _rows(tolerances={"x": 0.1}, exact=["s", "k"]), ValueError, r"\['k'\] are keys"),
    (lambda t: check_rows(pd.concat([LIVE, LIVE]), LIVE, ["k"], tolerances={"x": 0.1}, exact=["s"]), ValueError,
     "do not identify the live rows"),
    (lambda t: check_rows(LIVE, pd.concat([LIVE, LIVE.assign(x=9.0)]), ["k"], tolerances={"x": 0.1}, exact=["s"]),
     ValueError, "do not identify the stored rows"),
    (lambda t: check_rows(LIVE.to_dict(), LIVE, ["k"]), TypeError, "live must be a pandas DataFrame"),
    (lambda t: _rows(tolerances={"x": 0.1}, max_changed={"s": 0}, exact="label"), ValueError,
     r"column 'label' is missing"),
    (lambda t: _rows(tolerances={"x": math.nan}, exact=["s"]), ValueError, "tolerance of 'x' must be a non-negative finite"),
    # issue 31: the remaining public functions of registry, store, engine, search
    (lambda t: get_sweep("nope"), ValueError, "unknown sweep 'nope'"),
    (lambda t: get_sweep(3), ValueError, "unknown sweep 3"),
    (lambda t: format_value(object()), TypeError, "cannot store object"),
    (lambda t: format_value(np.float32(0.1)), TypeError, "cannot store float32"),
    (lambda t: format_value([1, 2]), TypeError, "cannot store list"),
    (lambda t: format_value("two\nlines"), ValueError, "may not contain a line break"),
    (lambda t: format_line("abc"), TypeError, "fields must be a sequence of str"),
    (lambda t: format_line({"a": "1"}), TypeError, "fields must be a sequence of str"),
    (lambda t: format_line([1, 2]), TypeError, "every field must be a str"),
    (lambda t: grid_hash("abc"), TypeError, "keys must be a sequence of canonical point keys"),
    (lambda t: grid_hash([1, 2]), TypeError, "keys must be a sequence of canonical point keys"),
    (lambda t: ResultsStore(t, "toy", "../a"), ValueError, "preset must be a name"),
    (lambda t: ResultsStore(5, "toy", "quick"), TypeError, "results_dir must be a path"),
    (lambda t: execute_point("nope", ToyConfig(1), {"i": 0}, "cpu"), TypeError, "run_point must be a callable"),
    (lambda t: execute_point(toy_point, ToyConfig(1), {"i": 0}, "tpu"), ValueError, "unknown device 'tpu'"),
    (lambda t: environment_info("cuda"), TypeError, "devices must be a list of device names"),
    (lambda t: environment_info(3), TypeError, "devices must be a list of device names"),
    (lambda t: smallest_width_reference(STEP, lo=0), ValueError, "lo must be an integer >= 1"),
    (lambda t: smallest_width_reference(STEP, target=math.nan), ValueError, "target must not be NaN"),
    (lambda t: smallest_width_reference(3), TypeError, "accuracy_at must be a callable"),
    (lambda t: smallest_width_reference(lambda m: "1"), ValueError, "must be a real number"),
    (lambda t: smallest_width_reference(STEP, lo=5, hi=2), ValueError, "lo must not exceed hi"),
    (lambda t: SerialExecutor(0), ValueError, "workers must be a positive integer"),
    # agreement: a live infinity or an overflowing difference is a break, never max |diff| = 0
    (lambda t: check_rows(LIVE.assign(x=[0.1, math.inf]), LIVE.assign(x=[0.1, 5.0]), ["k"], tolerances={"x": 1e-9},
                          exact=["s"]), RowsDisagree, r"max \|diff\| inf: 1 row\(s\) with an infinity"),
    (lambda t: check_rows(LIVE.assign(x=[0.1, 1e308]), LIVE.assign(x=[0.1, -1e308]), ["k"], tolerances={"x": 1e-9},
                          exact=["s"]), RowsDisagree, "overflows float64"),
    (lambda t: check_rows(LIVE.assign(x=[0.1, -math.inf]), LIVE.assign(x=[0.1, math.inf]), ["k"], exact=["x", "s"]),
     RowsDisagree, "x: equal broken"),
    # spread (issue 31's closing audit: the trainings' rules of issue 26)
    (lambda t: prediction_half_width(1, 0.1), ValueError, "n must be an integer >= 2"),
    (lambda t: prediction_half_width(3, math.nan), ValueError, "sd must be finite"),
    (lambda t: prediction_half_width(3, 0.1, alpha=0), ValueError, "alpha must be > 0"),
    (lambda t: prediction_half_width(3, 0.1, df=2.5), ValueError, "df must be an integer >= 1"),
    (lambda t: training_spread("rows", "k", "x"), TypeError, "frame must be a pandas DataFrame"),
    (lambda t: training_spread(TRAININGS, "k", "s"), ValueError, "column 's' of frame must hold numbers"),
    (lambda t: training_spread(TRAININGS, "k", "x", training="t"), ValueError, r"lacks the columns \['t'\]"),
    (lambda t: training_views(TRAININGS, "q"), ValueError, r"lacks the columns \['q'\]"),
    (lambda t: median_training(TRAININGS, "k", "y"), ValueError, r"lacks the columns \['y'\]"),
    (lambda t: check_spread(LIVE, TRAININGS, "k", columns=["x"], exact="s"), TypeError,
     "columns must be a mapping of column -> resolution"),
    (lambda t: check_spread(LIVE, TRAININGS, "k", columns={"x": -1.0}, exact="s"), ValueError,
     "resolution of 'x' must be >= 0"),
    (lambda t: check_spread(LIVE.assign(x=["a", "b"]), TRAININGS, "k", columns={"x": 0.0}, exact="s"), ValueError,
     "column 'x' of live must hold numbers"),
    (lambda t: leave_one_training_out(TRAININGS[TRAININGS.training < 2], "k", columns={"x": 0.0}, exact="s"),
     ValueError, "every stored point needs at least three trainings"),
    (lambda t: leave_one_training_out(LIVE, "k", columns={"x": 0.0}, exact="s"), ValueError,
     "stored must be a DataFrame with a 'training' column"),
    (lambda t: Sweep("", ToyConfig, {}, toy_points, toy_point), ValueError, "sweep name must match"),
]


@pytest.mark.parametrize("case, error, match", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_raises_a_clear_error(toy, tmp_path, case, error, match):
    try:
        with pytest.raises(error, match=match):
            case(tmp_path)
    finally:
        unregister_sweep("badreg")
    assert not (tmp_path / "toy").exists()  # no bad call left a half-made results folder


def test_edge_cases_with_a_right_value(toy, tmp_path):
    assert canonical_key({"b": np.int64(2), "a": np.float64(0.5)}) == '{"a":0.5,"b":2}'
    assert point_seed(Seeded(np.int64(0)), {"i": 1}) == point_seed(ToyConfig(3), {"i": 1})
    assert point_seed(Seeded(-1), {"a": 1}) == point_seed(Seeded(2**32 - 1), {"a": 1})  # base seed mod 2**32
    assert make_executor("process", workers=np.int64(2)).workers == 2
    assert isinstance(make_executor("process", workers=2.0), ProcessExecutor)
    assert smallest_width(STEP, lo=np.int64(1), verify=np.int64(1)).m == 5
    assert smallest_width(lambda m: torch.tensor(m >= 7)).m == 7  # a 0-d bool tensor is a bool
    assert smallest_width(lambda m: np.float32(m >= 9)).m == 9
    assert smallest_width(STEP, target=2.0).m is None  # never reached: reported, not an error
    out = check_rows(LIVE, LIVE, "k", tolerances={"x": np.float32(1e-3)}, max_changed={"s": np.int64(0)})
    assert list(out["column"]) == ["x", "s"]
    out = check_rows(LIVE.assign(w=1), LIVE, ["k"], tolerances={"x": 0.0}, exact="s", ignore="w")
    assert list(out["column"]) == ["x", "s"]  # a single str is one column, not its characters
    inf = LIVE.assign(x=[math.inf, -math.inf])
    out = check_rows(inf, inf, ["k"], tolerances={"x": 0.0}, exact="s")  # the same infinity is equal
    assert out.loc[0, "max |diff|"] == 0.0 and out.loc[0, "rows changed"] == 0
    run = run_sweep("toy", "mine.v2-a", config=ToyConfig(2), results_dir=tmp_path)
    assert run.path == tmp_path / "toy" / "mine.v2-a.csv"
    run_sweep("toy", "quick", results_dir=tmp_path)
    preset, frame = load_largest_results("toy", "quick", tmp_path)  # a single name is a one-name list
    assert preset == "quick" and len(frame) == 6
