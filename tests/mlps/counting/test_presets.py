"""Tests for assocmem.mlps.counting.presets: the geometric grid and the chapter's presets."""

from __future__ import annotations

import pytest

from assocmem.mlps.counting import presets as C


def test_geometric_grid_and_presets():
    assert C.geometric_grid(4, 16, 1) == [4, 8, 16]
    assert C.geometric_grid(4, 20, 1) == [4, 8, 16, 20]
    with pytest.raises(ValueError):
        C.geometric_grid(8, 4)
    assert C.get_preset("quick").sweep_d == 32
    with pytest.raises(ValueError, match="quick"):
        C.get_preset("paper-ish")
