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


def test_require_frame_names_what_is_missing():
    import pandas as pd

    from assocmem.plotting import require_frame

    require_frame(pd.DataFrame({"a": [1], "b": [2]}), ["a"], "rows")
    with pytest.raises(TypeError, match="rows must be a pandas DataFrame, got list"):
        require_frame([1, 2], ["a"], "rows")
    with pytest.raises(ValueError, match=r"rows lacks the column\(s\) \['c'\]; it has \['a', 'b'\]"):
        require_frame(pd.DataFrame({"a": [1], "b": [2]}), ["a", "c"], "rows")
