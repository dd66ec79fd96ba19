"""Tests for assocmem.sdm.projections.presets: the presets exist and an unknown one is rejected."""

import pytest

from assocmem.sdm.projections.presets import PROJECTION_PRESETS, run_projection_preset
from assocmem.sdm.projections.protocol import TRAIN_RULE


def test_presets_exist_and_unknown_preset_is_rejected():
    assert {"quick", "cpu"} <= set(PROJECTION_PRESETS)
    assert PROJECTION_PRESETS["quick"].rules == (TRAIN_RULE,)
    with pytest.raises(ValueError, match="expected one of .*'cpu'.*'quick'"):
        run_projection_preset("paper")
