"""Tests for assocmem.sdm.weights.presets: the run sizes of chapter 34."""

from __future__ import annotations

import pytest

from assocmem.sdm.weights.presets import PRESETS, get_preset


def test_presets():
    assert set(PRESETS) == {"quick", "full"}
    assert get_preset("quick") is PRESETS["quick"]
    assert get_preset("full").trials > get_preset("quick").trials
    with pytest.raises(ValueError, match="full.*quick"):
        get_preset("huge")
