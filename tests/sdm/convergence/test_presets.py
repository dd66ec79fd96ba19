"""Tests for assocmem.sdm.convergence.presets: the ``quick``, ``cpu`` and ``paper`` presets."""

import pytest

from assocmem.sdm.convergence.presets import PRESETS, get_preset


def test_presets():
    from assocmem.sdm.convergence.presets import CONTINUOUS_ALGORITHMS

    quick = get_preset("quick")
    assert [(s.n, s.data) for s in quick.settings] == [(64, None), (64, "digits")]
    assert all(len(s.radii) < 6 for s in quick.settings)
    cpu = get_preset("cpu")
    assert [(s.n, s.data, s.convergences_per_level) for s in cpu.settings] == [
        (64, None, 15360), (1000, None, 15360), (64, "digits", 15360)]
    assert cpu.settings[1].radii == (384, 405, 411, 431, 447, 480)
    assert cpu.settings[2].algorithms == CONTINUOUS_ALGORITHMS and len(CONTINUOUS_ALGORITHMS) == 5
    paper = get_preset("paper")
    assert all(s.convergences_per_level == 15360 for s in paper.settings)
    assert paper.settings[3].r == 10**5 and paper.settings[3].label == "n=64,r=1e5"
    with pytest.raises(ValueError, match="quick"):
        get_preset("huge")
    assert set(PRESETS) == {"quick", "cpu", "paper"}
