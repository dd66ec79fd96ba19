"""Tests for assocmem.sdm.projections.experiment: every protocol from one trained projection,
the baselines, and argument checks.
"""

import pytest

from assocmem.sdm.projections.experiment import projection_experiment, summarize_projection
from assocmem.sdm.projections.protocol import PROTOCOLS


def test_projection_experiment_protocols(trained, digits):
    train, test = digits
    ex = projection_experiment(train[:300], test[:60], "all", d=11, levels=(0, 200),
                               projections={(11, 0): trained}, num_train_queries=40, seed=0,
                               device="cpu")
    f = ex.frame
    assert list(f["protocol"].cat.categories) == list(PROTOCOLS)
    assert list(f["projection"].cat.categories) == ["learnt", "random", "identity"]
    assert not f.loc[f["protocol"] == "authors", "target_stored"].any()
    assert f.loc[f["protocol"] != "authors", "target_stored"].all()
    counts = f.groupby(["protocol", "projection"], observed=True).size()
    assert counts[("authors", "learnt")] == 2 * 60 and counts[("stored_train", "identity")] == 2 * 40
    assert set(ex.bounds["protocol"]) == set(PROTOCOLS)
    assert ex.bounds.set_index("protocol").loc["authors", "stored"] == 0.0
    assert ex.bounds.set_index("protocol").loc["stored_all", "memory"] == 360
    s = ex.summary
    assert {"cosine", "nearest_bound", "retrieved", "exceeds_bound", "retrieved_is_nearest"} <= set(s.columns)
    assert len(s) == 4 * 3 * 2
    assert ex.projections[(11, 0)] is trained and ex.seconds["train"] == 0.0
    assert summarize_projection(f).equals(s)


def test_projection_experiment_trains_and_skips_identity_when_compressing(digits):
    train, test = digits
    # d = 9 is past n_out / 2 = 8, where the fitted beta means little: fit_beta says so
    with pytest.warns(UserWarning, match=r"fit_beta\(n=16, d=9\).*n/2 = 8"):
        ex = projection_experiment(train[:150], test[:20], ("authors", "stored"), d=(5, 9), n_out=16,
                                   epochs=2, levels=(0,), device="cpu", seed=1)
    assert list(ex.frame["projection"].cat.categories) == ["learnt", "random"]
    assert sorted(ex.projections) == [(5, 0), (9, 0)]
    assert set(ex.training["d"]) == {5, 9} and len(ex.training) == 2 * 3
    assert ex.config["n_out"] == 16 and ex.config["baselines"] == ["random"]


def test_bad_experiment_arguments(digits):
    train, test = digits
    with pytest.raises(ValueError, match="unknown protocol 'test'"):
        projection_experiment(train[:50], test[:10], "test", epochs=1, device="cpu")
    with pytest.raises(ValueError, match="unknown baseline"):
        projection_experiment(train[:50], test[:10], baselines=("pca",), epochs=1, device="cpu")
    with pytest.raises(ValueError, match="n_base = 32 pixels but 64"):
        projection_experiment(train[:50], test[:10, :32], epochs=1, device="cpu")
    with pytest.raises(ValueError, match="n_out must be >= 1"):
        projection_experiment(train[:50], test[:10], n_out=0, epochs=1, device="cpu")
    with pytest.raises(ValueError, match="num_train_queries must lie in"):
        projection_experiment(train[:50], test[:10], num_train_queries=51, epochs=1, device="cpu")
