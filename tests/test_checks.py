"""Tests for assocmem._checks: the argument checks shared by the library."""

import pytest
import torch


def test_as_int_accepts_integers_and_enforces_a_minimum():
    import numpy as np

    from assocmem._checks import as_int
    assert as_int(3, "k") == 3 and as_int(3.0, "k") == 3 and as_int(np.int64(3), "k") == 3
    assert as_int(torch.tensor(3), "k") == 3 and as_int(np.array(3), "k") == 3
    for bad in (True, np.bool_(False), torch.tensor(True), 2.5, float("nan"), "3", None):
        with pytest.raises(ValueError, match="k must be an integer"):
            as_int(bad, "k")
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        as_int(0, "k", minimum=1)


def test_lookup_lists_the_valid_names():
    from assocmem._checks import lookup
    table = {"quick": 1, "cpu": 2}
    assert lookup(table, "cpu") == 2
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; valid presets: \['cpu', 'quick'\]"):
        lookup(table, "huge")
    with pytest.raises(ValueError, match="unknown preset"):
        lookup(table, ["unhashable"])


def test_positive_int_and_seed_int():
    import numpy as np

    from assocmem._checks import positive_int, seed_int
    assert positive_int("m", 3) == 3 and positive_int("m", np.int64(2)) == 2 and seed_int(-1) == -1
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="m must be a positive integer"):
            positive_int("m", bad)
    for bad in (1.0, False, None):
        with pytest.raises(ValueError, match="seed must be an integer"):
            seed_int(bad)
