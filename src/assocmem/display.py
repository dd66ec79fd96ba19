"""The book's display policy: every number a chapter shows is a fact about the mathematics.

A float computed in float64 carries its last few digits from the machine that computed it: the
processor's vector width, the BLAS kernel and the number of threads decide how a sum is
associated, and so its rounding. Those digits differ from one reader's machine to the next, so
no output of the book may show them. This module is the one place that says how a number is
shown:

- **Measured quantities** are rounded to the digits the prose uses, with a format
  specification such as ``".3f"``, ``".2e"`` or ``".1%"`` (:func:`rounded`, :func:`fmt`). The
  default for tables is four significant digits (:data:`DEFAULT_SPEC`).
- **Rounding-level quantities** (the residual of an identity, the distance between two code
  paths that agree up to rounding) are shown as a bound, ``"< 1e-12"``, tied to the tolerance
  they are checked against (``below=``). A value that is not below its bound raises
  :class:`RoundingLevelError`: it is then no longer rounding noise, and the chapter must say so.
- **Glued values** are rounded before they are glued (:func:`glue`), so no full-precision float
  repr reaches a stored output, and ``{glue:text}`name:.3f``` in the prose shows exactly the digits
  that were stored.
- **Tables** are formatted cell by cell (:func:`frame`): no negative zero, no ``nan`` (shown as
  ``"-"``), no ``inf`` (shown as ``"∞"``, as :func:`fmt` shows it) and no digits beyond the
  column's specification; no specification may show more than :data:`MAX_SIGNIFICANT_DIGITS`
  digits. :func:`tabulate` does the same and shows
  the result without the row index, under headers made for a reader (``"margin γ"``, not
  ``"gamma_min"``).

The comparisons behind a verdict never use these rounded values: a reproduction check compares
the unrounded numbers (:mod:`assocmem.repro`), and this module only decides what a reader sees.

A contract test (``tests/test_notebooks.py``) scans every committed output for floats with more
than :data:`MAX_SIGNIFICANT_DIGITS` significant digits, for negative zeros and for unrounded
rounding-level values; ``make test`` re-executes every chapter under a second floating-point
configuration to check that what is shown does not depend on the machine.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "DEFAULT_SPEC",
    "MAX_SIGNIFICANT_DIGITS",
    "RoundingLevelError",
    "bound_text",
    "fmt",
    "formatter",
    "frame",
    "glue",
    "output_problems",
    "range_text",
    "rounded",
    "tabulate",
    "Table",
]

#: Four significant digits: what a table shows unless its chapter asks for other digits.
DEFAULT_SPEC = ".4g"

#: No output of the book shows a float with more significant digits than this. Six is pandas'
#: default precision; the policy's own default (:data:`DEFAULT_SPEC`) is four.
MAX_SIGNIFICANT_DIGITS = 6

_SPEC = re.compile(r"^(?P<sign>[+ ]?)(?P<group>,?)(?:\.(?P<precision>\d+))?(?P<type>[eEfFgG%])$")


class RoundingLevelError(AssertionError):
    """A value shown as a rounding-level bound was not below its bound."""


def _number(value, name: str = "value") -> float | int:
    """Python and numpy numbers, 0-d arrays and 0-d tensors as a plain ``int`` or ``float``."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a number, got the boolean {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        return _number(value.item(), name)
    shape = getattr(value, "shape", None)
    what = f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__
    raise TypeError(f"{name}: expected a real number, got {what}")


def _parse(spec: str) -> re.Match:
    m = _SPEC.match(spec) if isinstance(spec, str) else None
    if m is None:
        raise ValueError(
            f"spec must be a float format such as '.3f', '.2e', '.4g', ',.0f' or '.1%', got {spec!r}"
        )
    # Python's default precision is 6 (digits after the point for e, f and %; significant digits
    # for g). An e format shows one digit more than its precision, so ".6e" (and a bare "e") shows
    # seven significant digits; f and % show at most MAX_SIGNIFICANT_DIGITS decimals.
    precision = 6 if m["precision"] is None else int(m["precision"])
    shown = precision + 1 if m["type"] in "eE" else precision
    if shown > MAX_SIGNIFICANT_DIGITS:
        raise ValueError(
            f"spec {spec!r} shows {shown} {'decimals' if m['type'] in 'fF%' else 'significant digits'}; "
            f"the book shows at most {MAX_SIGNIFICANT_DIGITS} (the last digits of a float64 result "
            "depend on the machine)"
        )
    return m


def _missing(missing) -> str:
    """``missing`` checked: the text an absent value shows as must be a str."""
    if not isinstance(missing, str):
        raise TypeError(f"missing must be a str (the text shown for an absent value), got {missing!r}")
    return missing


def _infinite_text(x: float) -> str:
    """``"∞"`` or ``"-∞"``: how an infinite value is shown (never Python's ``"inf"``)."""
    return "∞" if x > 0 else "-∞"


def _text(x: float | int, m: re.Match) -> str:
    """``format(x, spec)`` for the parsed ``spec``, without Python's two failures at the edges.

    A ``%`` format multiplies by 100 in float arithmetic, so a finite value above ``1.8e306``
    prints as ``"inf%"``, and an integer prints as a percentage only after a lossy float
    conversion: both are formatted exactly (``decimal``) instead. Everything else is
    ``format(x, spec)`` unchanged.
    """
    spec = m[0]
    if m["type"] == "%" and (isinstance(x, int) or math.isinf(x * 100.0)):
        precision = 6 if m["precision"] is None else int(m["precision"])
        with decimal.localcontext() as ctx:
            ctx.prec = 800  # enough for every float64 and any integer of up to ~800 digits exactly
            return format(decimal.Decimal(x) * 100, f"{m['sign']}{m['group']}.{precision}f") + "%"
    return format(x, spec)


def rounded(value: ArrayLike, spec: str = DEFAULT_SPEC) -> float | int:
    """``value`` rounded to exactly the digits that ``format(value, spec)`` shows.

    The result is the float nearest the decimal that the format prints, so formatting it again
    with ``spec`` (as ``{glue:text}`name:spec``` does in the prose) prints the same digits, and
    its repr has no digits beyond them. Integers are returned unchanged.

    Parameters
    ----------
    value : int, float, numpy scalar, 0-d numpy array or 0-d torch tensor
    spec : str, default ``".4g"``
        A float format specification of types ``e``, ``f``, ``g`` or ``%``, optionally with a
        ``+`` sign and ``,`` grouping (``".3f"``, ``"+.2f"``, ``".2e"``, ``",.0f"``, ``".1%"``),
        showing at most :data:`MAX_SIGNIFICANT_DIGITS` digits: a precision above 6 (above 5 for
        ``e``, which shows one digit more; a bare ``"e"`` has precision 6) is refused.

    Returns
    -------
    float or int
        ``nan`` and ``±inf`` pass through; ``-0.0`` (a negative number rounded to zero) becomes
        ``0.0``. Where the printed decimal lies beyond float64's range (``1.8e+308``, the
        largest float under ``".1e"``), ``value`` itself is returned: it prints as that decimal,
        where the nearest float, ``inf``, would not.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans are refused).
    ValueError
        If ``spec`` is not a float format of the kinds above, or shows more than
        :data:`MAX_SIGNIFICANT_DIGITS` digits.

    Examples
    --------
    >>> rounded(2.7320508075688776, ".3f")
    2.732
    >>> rounded(0.043147364889304214, ".1%")
    0.043
    """
    x = _number(value)
    m = _parse(spec)
    if isinstance(x, int) or not math.isfinite(x):
        return x
    text = _text(x, m).replace(",", "").lstrip("+ ")
    out = float(text[:-1]) / 100 if m["type"] == "%" else float(text)
    if math.isinf(out):  # the decimal shown is beyond float64's range: x prints as it
        return x + 0.0
    if m["type"] == "%":
        # float(text) / 100 may land one ulp off the decimal; the repr of the nearest float to
        # the decimal string is what we want.
        digits = len(text[:-1].split(".")[1]) if "." in text else 0
        out = round(out, digits + 2)
    return out + 0.0  # -0.0 + 0.0 is +0.0


def bound_text(bound: float) -> str:
    """``"< 1e-12"``: the bound a rounding-level value is shown as.

    The bound is printed as written when up to three significant digits give it exactly (so it
    reads as the row's tolerance does), and otherwise with the fewest digits (up to three) that
    do not round it down, so the displayed claim ``|x| < bound`` is never stronger than the one
    checked.

    Raises
    ------
    TypeError
        If ``bound`` is not a real number (booleans and strings are refused).
    ValueError
        If ``bound`` is not positive and finite.
    """
    b = float(_number(bound, "bound"))
    if not (b > 0 and math.isfinite(b)):
        raise ValueError(f"a rounding-level bound must be a positive finite number, got {bound!r}")
    texts = [f"{b:.{digits - 1}e}" for digits in range(1, 4)]
    exact = [t for t in texts if float(t) == b]
    above = [t for t in texts if float(t) >= b]
    if exact or above:
        text = (exact or above)[0]
    else:  # three digits round it down: round the third digit up instead
        exponent = math.floor(math.log10(b))
        text = f"{math.ceil(b / 10.0**exponent * 100) / 100:.2f}e{exponent}"
    mantissa, exponent = text.split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"< {mantissa}e{int(exponent)}"


def _check_below(x: float, bound: float) -> None:
    if math.isnan(x) or not abs(x) < bound:
        raise RoundingLevelError(
            f"{x!r} is shown as rounding level ({bound_text(bound)}) but is not below the bound; "
            "the value is no longer rounding noise"
        )


def fmt(value: ArrayLike | str | None, spec: str = DEFAULT_SPEC, *, below: float | None = None,
        missing: str = "-") -> str:
    """One number as the book shows it.

    Parameters
    ----------
    value : number, 0-d array or tensor, str or None
        Strings pass through unchanged; ``None`` and NaN (``pd.NA`` and ``pd.NaT`` too) print as
        ``missing``; ``±inf`` prints as ``"∞"`` and ``"-∞"``.
    spec : str, default ``".4g"``
        Format specification for floats (see :func:`rounded`). Integers print with thousands
        separators unless they exceed 15 digits, where they print in ``.3e`` form; under a
        ``%`` spec an integer is a fraction like any number (``fmt(1, ".1%")`` is ``"100.0%"``).
        Values at the ends of float64's range print their rounded digits (``fmt(-1.79e308,
        ".1e")`` is ``"-1.8e+308"``), never ``0`` or ``inf``.
    below : float, optional
        Show the value as the bound ``"< below"``: for rounding-level quantities.
    missing : str, default ``"-"``
        Must be a str.

    Raises
    ------
    RoundingLevelError
        If ``below`` is given and ``|value|`` is not below it.
    TypeError
        If ``value`` is not a number, string, None or NaN (booleans are refused), ``below``
        is not a number, or ``missing`` is not a str.
    ValueError
        If ``spec`` is not a float format or shows more than :data:`MAX_SIGNIFICANT_DIGITS`
        digits (checked for every value, so a bad spec never passes unnoticed), or ``below`` is
        not a positive finite number.
    """
    _parse(spec)
    _missing(missing)
    bound = None if below is None else _bound(below, "below")
    if value is None or value is pd.NA or value is pd.NaT or isinstance(value, str):
        return value if isinstance(value, str) else missing
    x = _number(value)
    if bound is not None:
        _check_below(float(x), bound)
        return bound_text(bound)
    if isinstance(x, int):
        if _parse(spec)["type"] == "%":
            return _text(x, _parse(spec))
        return _count(x)
    if math.isnan(x):
        return missing
    if math.isinf(x):
        return _infinite_text(x)
    r = rounded(x, spec)
    text = _text(r, _parse(spec))
    return "0" if _is_negative_zero_text(text) else text


def range_text(values: ArrayLike, spec: str = DEFAULT_SPEC) -> str:
    """A quantity measured over several trainings (or draws): ``"mean (min to max)"``.

    Parameters
    ----------
    values : sequence of numbers
        One value per training; NaN values are left out.
    spec : str, default ``".4g"``
        As for :func:`fmt`, applied to the mean and both ends.

    Returns
    -------
    str
        ``"0.953 (0.941 to 0.962)"``; one value alone prints as :func:`fmt` does; when the ends
        print alike, only the mean is shown with ``"(all)"``, e.g. ``"1.000 (all)"``; no value
        prints as ``"-"``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fmt` does for a bad value or spec; a :class:`TypeError` if ``values`` is not a
        sequence (a bare number, a 0-d array, a str, whose characters are not values, or a
        mapping, whose keys are not).
    """
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__") \
            or getattr(values, "ndim", 1) == 0:
        raise TypeError(f"values must be a sequence of numbers (one per training); got {type(values).__name__}")
    x = np.asarray([float(_number(v)) for v in values], dtype=float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return fmt(None, spec)
    if len(x) == 1:
        return fmt(float(x[0]), spec)
    lo, hi = fmt(float(x.min()), spec), fmt(float(x.max()), spec)
    if lo == hi:
        return f"{lo} (all)"
    return f"{fmt(float(x.mean()), spec)} ({lo} to {hi})"


def _count(x: int) -> str:
    """An integer as a count: thousands separators, or ``.3e`` form beyond 15 digits."""
    return f"{x:,}" if abs(x) < 10**15 else _big_int(x)


def _big_int(x: int) -> str:
    """An integer of 16 digits or more in ``.3e`` form (exactly, beyond float's range too)."""
    try:
        return format(float(x), ".3e")
    except OverflowError:
        return format(decimal.Decimal(x), ".3e")


def _bound(value, name: str) -> float:
    """A rounding-level bound: a positive finite number, or an error naming the argument."""
    b = float(_number(value, name))
    if not (b > 0 and math.isfinite(b)):
        raise ValueError(f"{name} (a rounding-level bound) must be a positive finite number, got {value!r}")
    return b


def _is_negative_zero_text(text: str) -> bool:
    mantissa = text.split("e")[0]
    return text.startswith("-") and "0" in mantissa and not any(c in "123456789" for c in mantissa)


def glue(name: str, value: ArrayLike | str | bool, spec: str | None = None, *,
         below: float | None = None) -> None:
    """Glue ``value`` into the chapter (MyST-NB), rounded to the digits the prose shows.

    Use the same ``spec`` in the prose reference (``{glue:text}`name:.3f```) or none there.
    ``spec`` is required for floats; integers, strings and booleans are glued as they are.

    Parameters
    ----------
    name : str
        The glue key.
    value : number, 0-d array or tensor, str or bool
    spec : str, optional
        Float format specification (see :func:`rounded`).
    below : float, optional
        For a rounding-level quantity: glue the string ``"< below"`` instead of the value
        (checked: raises :class:`RoundingLevelError` if ``|value|`` is not below it).

    Raises
    ------
    TypeError
        If a float is glued without ``spec`` (its full repr would carry machine digits), or
        ``value`` is not a number, string or boolean.
    ValueError
        If ``spec`` is given and is not a float format, or ``below`` is not a positive finite
        number.
    RoundingLevelError
        If ``below`` is given and ``|value|`` is not below it.
    """
    from myst_nb import glue as _glue  # the book's toolchain; the rest of the module needs only pandas

    if not isinstance(name, str) or not name:
        raise TypeError(f"glue name must be a non-empty str, got {name!r}")
    if spec is not None:
        _parse(spec)
    if below is not None:
        out: object = fmt(value, below=below)
    elif isinstance(value, (str, bool, np.bool_)):
        out = value if isinstance(value, str) else bool(value)
    else:
        x = _number(value)
        if isinstance(x, float) and spec is None:
            raise TypeError(f"glue {name!r}: a float needs spec= (the digits the prose shows)")
        out = x if isinstance(x, int) else rounded(x, spec)
    _glue(name, out, display=False)


def frame(
    df: pd.DataFrame,
    spec: str | Mapping[str, str] = DEFAULT_SPEC,
    *,
    below: Mapping[str, float] | None = None,
    missing: str = "-",
    index: bool = False,
) -> pd.DataFrame:
    """A table for display: every number formatted by :func:`fmt`, as strings.

    Parameters
    ----------
    df : pandas.DataFrame
    spec : str or mapping of column -> str, default ``".4g"``
        One specification for every float column, or one per column (columns not named get
        :data:`DEFAULT_SPEC`). Integer cells print as counts (thousands separators) whatever
        the spec.
    below : mapping of column -> float, optional
        Columns of rounding-level quantities, each shown as its bound (checked per cell).
    missing : str, default ``"-"``
        What NaN, ``None`` and ``pd.NA`` show as (infinities show as ``"∞"`` and ``"-∞"``).
    index : bool, default False
        Keep the index as leading columns (``reset_index``); otherwise it is dropped unless it
        carries names, in which case it is kept as columns too.

    Returns
    -------
    pandas.DataFrame
        Of strings, with a plain ``RangeIndex``.

    Raises
    ------
    TypeError
        If ``df`` is not a DataFrame, ``spec`` is neither a str nor a mapping, ``below`` is
        not a mapping, ``missing`` is not a str or ``index`` is not a bool.
    ValueError
        If a spec is not a float format or shows more than :data:`MAX_SIGNIFICANT_DIGITS` digits
        (every spec is checked, used or not); ``below`` names a column the table does not have or
        gives a bound that is not a positive finite number; or two columns (index levels kept as
        columns included) share a name.
    RoundingLevelError
        If a cell of a ``below`` column is not below its bound.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    _missing(missing)
    if not isinstance(index, (bool, np.bool_)):
        raise TypeError(f"index must be True or False, got {index!r}")
    if isinstance(spec, Mapping):
        for col, col_spec in spec.items():
            try:
                _parse(col_spec)
            except ValueError as exc:
                raise ValueError(f"spec of column {col!r}: {exc}") from None
    elif isinstance(spec, str):
        _parse(spec)
    else:
        raise TypeError(f"spec must be a format str such as '.3f' or a mapping of column -> str, got {spec!r}")
    if below is not None and not isinstance(below, Mapping):
        raise TypeError(f"below must be a mapping of column -> bound, got {below!r}")
    below = {col: _bound(b, f"below[{col!r}]") for col, b in (below or {}).items()}
    keep_index = bool(index) or any(n is not None for n in df.index.names)
    names = [*(n for n in (df.index.names if keep_index else []) if n is not None), *df.columns]
    repeated = sorted({str(n) for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"column name(s) {repeated} appear more than once"
                         f"{' (index levels count as columns here)' if keep_index else ''}; "
                         "each column of a displayed table needs its own name")
    if keep_index:
        df = df.reset_index()
    else:
        df = df.reset_index(drop=True)
    absent = [col for col in below if col not in df.columns]
    if absent:
        raise ValueError(f"below names column(s) {absent} that the table does not have; "
                         f"its columns: {list(df.columns)}")
    out = {}
    for col in df.columns:
        col_spec = spec.get(col, DEFAULT_SPEC) if isinstance(spec, Mapping) else spec
        bound = below.get(col)
        out[col] = [_cell(v, col_spec, bound, missing) for v in df[col].tolist()]
    return pd.DataFrame(out, columns=df.columns)


class Table:
    """A formatted table as a chapter shows it: no row index, reader's headers.

    Made by :func:`tabulate`. ``frame`` holds the cells (strings) under the displayed headers.
    Its HTML and plain-text displays are deterministic (no random ids), so nbval can compare
    them.

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame (it would fail only when displayed).
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame of display strings (from tabulate), "
                            f"got {type(frame).__name__}")
        self.frame = frame

    def _repr_html_(self) -> str:
        return self.frame.to_html(index=False, border=0, classes="dataframe assocmem-table",
                                  escape=True)

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            return self.frame.to_string(index=False)


def tabulate(
    df: pd.DataFrame,
    spec: str | Mapping[str, str] = DEFAULT_SPEC,
    *,
    headers: Mapping[str, str] | None = None,
    below: Mapping[str, float] | None = None,
    missing: str = "-",
    index: bool = False,
) -> Table:
    """:func:`frame` for display: shown without the row index, under readable headers.

    Parameters
    ----------
    df, spec, below, missing, index
        As for :func:`frame` (``spec`` and ``below`` name the columns of ``df``).
    headers : mapping of column -> str, optional
        The header each column is shown under (with its unit, ``"time (s)"``); columns not
        named keep their name. Like a ``spec`` mapping, it may name columns the table does not
        have (one mapping can serve several tables cut from one frame).

    Returns
    -------
    Table
        Its ``frame`` attribute is the formatted DataFrame of strings, with the new headers.

    Raises
    ------
    TypeError
        As for :func:`frame`; also if ``headers`` is not a mapping of str.
    ValueError
        As for :func:`frame` (a spec showing more than :data:`MAX_SIGNIFICANT_DIGITS` digits,
        repeated column names); also if two columns end up under the same header.
    """
    if headers is not None and (not isinstance(headers, Mapping)
                                or not all(isinstance(h, str) for h in headers.values())):
        raise TypeError(f"headers must be a mapping of column -> str, got {headers!r}")
    out = frame(df, spec, below=below, missing=missing, index=index)
    headers = dict(headers or {})
    names = [headers.get(col, str(col)) for col in out.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"two columns would share a header: {names}")
    out.columns = names
    return Table(out)


def _cell(v, spec: str, bound: float | None, missing: str) -> str:
    if getattr(v, "ndim", None) == 0 and not isinstance(v, np.generic) and callable(getattr(v, "item", None)):
        item = v.item()  # a 0-d tensor or array: its number, formatted like any other
        v = item if isinstance(item, (bool, int, float)) else v
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return missing
    if isinstance(v, (numbers.Integral, np.integer)) and bound is None:
        return _count(int(v))  # the spec is for float columns: an integer cell is a count
    if isinstance(v, (numbers.Real, np.generic)) and not isinstance(v, str):
        return fmt(v, spec, below=bound, missing=missing)
    return str(v)


def formatter(spec: str = DEFAULT_SPEC) -> Callable[[object], str]:
    """``fmt`` with a fixed ``spec``, for ``Series.map`` and pandas' ``formatters=``.

    Raises
    ------
    ValueError
        If ``spec`` is not a float format (checked now, not at the first call).
    """
    _parse(spec)
    return lambda v: fmt(v, spec)


_FLOAT_TEXT = re.compile(r"(?<![\w.])-?(?P<int>\d[\d,]*)?\.(?P<frac>\d+)(?:[eE](?P<exp>[-+]?\d+))?(?![\w.])")
_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(?:\.0+)?(?:[eE][-+]?\d+)?(?![\w.])")
#: Exponent at or below which a float printed with more than one significant digit is taken for
#: rounding noise of an O(1) float64 computation (the unit roundoff is 1.1e-16).
ROUNDING_EXPONENT = -13


def output_problems(text: str) -> list[str]:
    """What in an output ``text`` breaks the display policy (empty when nothing does).

    Three things are reported: a float literal with more than :data:`MAX_SIGNIFICANT_DIGITS`
    significant digits; a negative zero (``-0``, ``-0.000``); and a float of magnitude below
    ``10**ROUNDING_EXPONENT`` printed with more than one significant digit (``4.441e-16``: the
    digits of rounding noise, which a bound such as ``< 1e-12`` should replace). Integers,
    version strings (``2.13.0``) and hexadecimal addresses are not floats here.

    Raises
    ------
    TypeError
        If ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    problems = []
    for m in _FLOAT_TEXT.finditer(text):
        mantissa = ((m["int"] or "").replace(",", "") + m["frac"]).lstrip("0").rstrip("0")
        digits = len(mantissa)
        if digits > MAX_SIGNIFICANT_DIGITS:
            problems.append(f"{m[0]!r}: {digits} significant digits (at most {MAX_SIGNIFICANT_DIGITS})")
        elif digits > 1 and m["exp"] is not None:
            value = abs(float(m[0].replace(",", "")))
            if 0 < value < 10.0**ROUNDING_EXPONENT:
                problems.append(f"{m[0]!r}: rounding-level digits (show a bound, e.g. '< 1e-12')")
    problems.extend(f"{m[0]!r}: negative zero" for m in _NEGATIVE_ZERO.finditer(text))
    return problems
