"""Tests for assocmem.sdm.kernels.presets: the sizes of the experiments of chapter 35."""

from __future__ import annotations

import pytest

from assocmem.sdm.kernels.presets import PRESETS, get_preset


def test_presets_and_unknown_name():
    assert set(PRESETS) >= {"quick", "full"}
    assert get_preset("quick") is PRESETS["quick"]
    with pytest.raises(ValueError, match="quick"):
        get_preset("nope")
