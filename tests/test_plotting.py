"""Tests for assocmem.plotting: the palette and the house style."""

import matplotlib

matplotlib.use("Agg")

import pytest

from assocmem.plotting import PALETTE, color, key_value_planes, use_style


def test_palette_and_style():
    use_style()
    assert color(0) == PALETTE["blue"] and color("green") == PALETTE["green"]
    with pytest.raises(ValueError, match="unknown colour"):
        color("magenta")
    fig, (a, b) = key_value_planes()
    assert a.get_aspect() == b.get_aspect() == 1.0
