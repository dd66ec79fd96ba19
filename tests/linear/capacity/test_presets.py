"""Tests for assocmem.linear.capacity.presets: chapter 03's named experiment sizes."""

from __future__ import annotations

import pytest

from assocmem.linear.capacity.presets import PRESETS, get_preset


def test_presets():
    assert set(PRESETS) == {"quick", "full"}
    q = get_preset("quick")
    assert q.d_ks == (16, 32, 64) and q.trials == 200
    with pytest.raises(ValueError, match=r"unknown preset 'paper'; valid presets: \['full', 'quick'\]"):
        get_preset("paper")
