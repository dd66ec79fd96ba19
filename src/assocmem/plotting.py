"""The house figure style every chapter shares, and the few figure helpers they reuse.

Colours are the Okabe & Ito (2008) colour-blind-safe palette. Every chapter calls
:func:`use_style` once; figures then share fonts, sizes and colours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

from assocmem._checks import as_int, as_real

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Iterable
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from typing import Any

__all__ = ["PALETTE", "use_style", "color", "key_value_planes", "draw_vector", "label_machine_dependent",
           "require_frame"]

#: Okabe-Ito palette, colour-blind safe, in the order the chapters use them.
PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
_CYCLE = ["blue", "orange", "green", "vermillion", "purple", "sky", "yellow", "black"]


def color(i: int | str) -> str:
    """The i-th colour of the house cycle (cyclic: any integer), or a colour by name (``"blue"``).

    Raises
    ------
    ValueError
        If ``i`` is an unknown name, or neither a str nor an integer (booleans are refused).
    """
    if isinstance(i, str):
        try:
            return PALETTE[i]
        except KeyError:
            raise ValueError(f"unknown colour {i!r}; choose from {sorted(PALETTE)}") from None
    try:
        index = as_int(i, "colour index")
    except ValueError:
        raise ValueError(f"unknown colour {i!r}: give an integer index or a name from {sorted(PALETTE)}") from None
    return PALETTE[_CYCLE[index % len(_CYCLE)]]


def use_style() -> None:
    """Apply the house style to matplotlib (idempotent)."""
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.25,
            "legend.frameon": False,
            "lines.linewidth": 1.8,
            "lines.markersize": 4.5,
            "axes.prop_cycle": mpl.cycler(color=[color(i) for i in range(len(_CYCLE))]),
            "image.cmap": "viridis",
        }
    )


def key_value_planes(title_left: str = "keys and queries", title_right: str = "values",
                     lim: float = 1.6, figsize: Sequence[float] = (8.0, 3.8)) -> tuple[Figure,
                     np.ndarray]:
    """Two square panels in the style of seed 000's figures: the key/query plane on the left,
    the value plane on the right, and an arrow between them for the map ``S``.

    Returns
    -------
    fig, (ax_keys, ax_values)

    Raises
    ------
    ValueError
        If ``lim`` is not a positive finite number.
    """
    lim = as_real(lim, "lim", minimum=0, strict_min=True)
    fig, axes = plt.subplots(1, 2, figsize=figsize)
    for ax, title in zip(axes, (title_left, title_right)):
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.axhline(0, color="0.7", lw=0.8, zorder=0)
        ax.axvline(0, color="0.7", lw=0.8, zorder=0)
        ax.set_title(title)
        ax.grid(False)
        ax.set_xticks([])
        ax.set_yticks([])
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    fig.subplots_adjust(wspace=0.35)
    fig.text(0.5, 0.5, r"$\longrightarrow$" + "\n" + r"$S$", ha="center", va="center", fontsize=16)
    return fig, axes


def draw_vector(ax: Axes, v: ArrayLike, label: str | None = None, c: int | str = 0, ls: str = "-",
                offset: tuple[float, float] = (0.06, 0.06), **kw: Any) -> None:
    """Draw the 2-D vector ``v`` as an arrow from the origin, with an optional maths label.

    Raises
    ------
    ValueError
        If ``v`` is not two finite numbers, ``offset`` not two numbers, or ``c`` an unknown colour.
    """
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"v must be a 2-D vector (two numbers), got {v!r}") from None
    if v.size != 2 or not np.isfinite(v).all():
        raise ValueError(f"v must be a 2-D vector of two finite numbers, got {v.tolist()!r}")
    v = v.reshape(2)
    if not hasattr(offset, "__len__") or len(offset) != 2:
        raise ValueError(f"offset must be two numbers (dx, dy), got {offset!r}")
    col = color(c) if isinstance(c, (int, str)) and not str(c).startswith("#") else c
    ax.annotate("", xy=v, xytext=(0, 0),
                arrowprops=dict(arrowstyle="-|>", color=col, lw=kw.pop("lw", 1.8), linestyle=ls, shrinkA=0, shrinkB=0))
    if label:
        ax.text(v[0] + offset[0], v[1] + offset[1], label, color=col, fontsize=12)


def label_machine_dependent(ax: Axes, text: str = "wall-clock time: machine-dependent") -> None:
    """Mark an axis whose data are timings on this machine."""
    ax.text(0.99, 0.02, text, transform=ax.transAxes, ha="right", va="bottom", fontsize=8, color="0.4")


def require_frame(frame: object, columns: Iterable[str], name: str) -> None:
    """Check the data a figure helper draws: a :class:`pandas.DataFrame` with every named column.

    Parameters
    ----------
    frame : object
        What the caller passed.
    columns : iterable of str
        The columns the figure reads.
    name : str
        The argument's name, for the message.

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        If a column is missing (the message lists the missing and the present ones).
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks the column(s) {missing}; it has {list(frame.columns)}")
