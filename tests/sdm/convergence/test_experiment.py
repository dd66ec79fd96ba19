"""Tests for assocmem.sdm.convergence.experiment: the per-query frame of the convergence
experiment, its seeding, its argument checks, and runs on data rows.
"""

import numpy as np
import pandas as pd
import pytest

from assocmem.sdm.convergence.algorithms import Algorithm, PAPER_NEURONS
from assocmem.sdm.convergence.experiment import convergence_experiment


def test_experiment_frame(small_run):
    df = small_run
    assert len(df) == 3 * 2 * 2 * 16
    assert list(df.columns) == ["setting", "algorithm", "space", "n", "m", "d", "r", "beta", "level",
                                "dataset", "repeat", "query", "cosine", "steps", "stopped", "zero_weights"]
    assert (df.setting == "n=64").all()
    assert (df.loc[df.level == 0, "cosine"] > 1 - 1e-6).all()  # float32 reads
    # the d = 5 exception: 12 flips > 2d, no intersection, the query stays put
    sub = df[(df.algorithm == "Binary_SDM") & (df.d == 5) & (df.level == 12)]
    assert (sub.cosine == 1 - 24 / 64).all() and sub.zero_weights.all()
    soft = df[(df.algorithm == "Cont_SDM_BFit_Attention") & (df.d == 5) & (df.level == 12)]
    assert (soft.cosine > 0.99).all()
    assert df.attrs["config"]["r"] == PAPER_NEURONS[64]


def test_experiment_rows_do_not_depend_on_the_other_rules(small_run):
    alone = convergence_experiment(64, 128, radii=[11], algorithms=["Cont_SDM_BFit_Attention"],
                                   levels=[0, 12], num_queries=16, seed=0, show_progress=False)
    both = small_run[(small_run.algorithm == "Cont_SDM_BFit_Attention") & (small_run.d == 11)]
    np.testing.assert_array_equal(alone.cosine.to_numpy(), both.cosine.to_numpy())


def test_experiment_errors():
    with pytest.raises(ValueError, match="valid names"):
        convergence_experiment(64, 16, algorithms=["nope"], show_progress=False)
    with pytest.raises(ValueError, match="radius"):
        convergence_experiment(64, 16, radii=[70], algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="num_queries"):
        convergence_experiment(64, 16, num_queries=17, algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="levels"):
        convergence_experiment(50, 16, radii=[5], algorithms=["Binary_SDM"], show_progress=False)
    with pytest.raises(ValueError, match="rule_options"):
        convergence_experiment(64, 16, algorithms=["Binary_SDM"], rule_options={"seed": 1},
                               show_progress=False)


def test_experiment_on_data_rows():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((40, 16))
    df = convergence_experiment(m=32, radii=[3], algorithms=["Cont_SDM_CFit_Attention"], levels=[0, 2],
                                num_queries=8, data=data, show_progress=False)
    assert (df.n == 16).all() and len(df) == 16
    assert (df.loc[df.level == 0, "cosine"] > 0.999).all()  # softmax keeps weight on neighbours


def test_one_algorithm_may_be_given_by_name():
    kwargs = dict(radii=[11], levels=[0, 6], num_queries=8, seed=0, show_progress=False)
    listed = convergence_experiment(64, 32, algorithms=["Binary_SDM"], **kwargs)
    for one in ("Binary_SDM", "binary_sdm", Algorithm("Binary_SDM")):
        named = convergence_experiment(64, 32, algorithms=one, **kwargs)
        pd.testing.assert_frame_equal(named, listed)
        assert named.attrs["config"]["algorithms"] == ["Binary_SDM"]
    with pytest.raises(ValueError, match=r"unknown algorithm 'Binary_SDMX'"):
        convergence_experiment(64, 32, algorithms="Binary_SDMX", **kwargs)
    with pytest.raises(ValueError, match="rule name or an iterable"):
        convergence_experiment(64, 32, algorithms=7, **kwargs)
