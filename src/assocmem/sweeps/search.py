"""Capacity search: the smallest integer width ``m`` at which a memory reaches a target accuracy.

The capacity protocol of "MLPs are Hebbians" (Part II) asks, for each fact set, for the smallest
hidden width ``m`` in ``[1, 65536]`` whose MLP stores every fact (accuracy 100 %). Accuracy is
not guaranteed to be monotone in ``m`` (the features and the permutation are random), so the
search has to say what it does when it is not: see :func:`smallest_width`.
:func:`smallest_width_reference` is the plain bisection over ``[lo, hi]`` that the galloping
search is tested against and benchmarked beside (the library's convention: a fast path's
reference is ``<fast path>_reference`` in the same module).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from assocmem._checks import as_int, as_real

__all__ = ["SearchResult", "smallest_width", "smallest_width_batched", "smallest_width_reference"]


@dataclass(frozen=True)
class SearchResult:
    """Outcome of :func:`smallest_width`.

    Attributes
    ----------
    m : int or None
        The reported width (see the rule in :func:`smallest_width`); ``None`` if even ``hi``
        misses the target.
    accuracy : float or None
        Accuracy at ``m`` (``None`` when ``m`` is).
    evaluations : tuple of (int, float)
        Every ``(m, accuracy)`` evaluated, in the order evaluated; no width twice.
    monotone_violations : tuple of int
        Evaluated widths that missed the target although a smaller evaluated width reached it,
        in increasing order. Empty when the evaluations were consistent with monotonicity.
    restarts : int
        Times the search resumed above a width whose verification failed.
    lo, hi : int
        The searched range.
    target : float
        The accuracy to reach.
    speculative : tuple of (int, float)
        Widths evaluated ahead of need by :func:`smallest_width_batched` that the search did not
        use, with their accuracies (empty for :func:`smallest_width`). They cost evaluations but
        do not enter ``m``, ``evaluations`` or ``monotone_violations``.
    """

    m: int | None
    accuracy: float | None
    evaluations: tuple[tuple[int, float], ...]
    monotone_violations: tuple[int, ...]
    restarts: int
    lo: int
    hi: int
    target: float
    speculative: tuple[tuple[int, float], ...] = ()

    @property
    def found(self) -> bool:
        """True when some width in ``[lo, hi]`` reached the target."""
        return self.m is not None

    @property
    def n_evaluations(self) -> int:
        """How many widths were evaluated (each costs one construction)."""
        return len(self.evaluations)

    @property
    def monotone(self) -> bool:
        """True when no evaluation contradicted monotonicity."""
        return not self.monotone_violations


def _check_width(name: str, value) -> int:
    try:
        return as_int(value, name, minimum=1)
    except ValueError:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}") from None


def _accuracy(value, m: int) -> float:
    """What ``accuracy_at(m)`` returned, as a float: a finite real number or a bool."""
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        value = value.item()  # numpy scalars, 0-d arrays and tensors (bool ones too)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, float) and math.isnan(value):
        raise ValueError(f"accuracy_at({m}) returned NaN")
    try:
        return as_real(value, f"accuracy_at({m})")
    except ValueError as exc:
        raise ValueError(f"{exc}; accuracy_at must return a finite number (or a bool)") from None


def smallest_width(
    accuracy_at: Callable[[int], float],
    lo: int = 1,
    hi: int = 65536,
    target: float = 1.0,
    verify: int = 2,
) -> SearchResult:
    """Smallest integer ``m`` in ``[lo, hi]`` with ``accuracy_at(m) >= target``.

    The search gallops then bisects, and verifies its answer:

    1. **Gallop** upwards from ``lo``: evaluate ``lo, lo + 1, lo + 3, lo + 7, ...`` (steps
       doubling; ``1, 2, 4, 8, ...`` for ``lo = 1``), and finally ``hi``, until a width reaches
       the target. Small widths are cheap, so this never builds the huge ``hi`` model unless it
       must. If ``hi`` misses the target, the result has ``m = None``.
    2. **Bisect** between the largest width known to fail and the smallest known to succeed,
       until they are adjacent. The smallest success is the candidate.
    3. **Verify** the next ``verify`` widths above the candidate. If all reach the target (or
       lie above ``hi``) the candidate is the answer. If one fails, accuracy is not monotone
       there; the search restarts from step 1 above the failing width (reusing every evaluation
       already made) so that the answer is never a width with a failure just above it.

    **Rule for non-monotone accuracy.** The reported ``m`` reaches the target, the width just
    below it misses (or is below ``lo``), and the ``verify`` widths above it reach it too. When
    accuracy is monotone this is exactly the smallest width reaching the target, found with
    about ``2 log2(m)`` evaluations plus ``verify``. When it is not, ``m`` is an upper bound on
    the smallest such width (a smaller isolated success may lie between evaluated widths and
    cannot be excluded without evaluating every width), and every evaluation that contradicted
    monotonicity is listed in ``monotone_violations`` so that a sweep can record and report how
    often it happened. No width is evaluated twice.

    Parameters
    ----------
    accuracy_at : callable
        ``accuracy_at(m) -> float`` (or bool), e.g. the fraction of facts an MLP of width ``m``
        recalls. Called once per evaluated width; seed it so a width always gives the same
        value.
    lo, hi : int, default 1 and 65536
        Range of widths searched (the seed's capacity protocol uses ``[1, 65536]``).
    target : float, default 1.0
        Accuracy to reach (``accuracy >= target``; 1.0 means every fact recalled).
    verify : int, default 2
        How many widths above the candidate must also reach the target. 0 turns verification
        off (plain galloping binary search).

    Returns
    -------
    SearchResult
        ``m``, its accuracy, every evaluation, the monotonicity violations and the restarts.

    Raises
    ------
    ValueError
        If ``lo`` or ``hi`` is not an integer ``>= 1``, ``lo > hi``, ``verify`` is not an integer
        ``>= 0``, or ``target`` is not a finite real number (booleans and strings are refused: a
        target of ``inf`` can never be reached); or if ``accuracy_at`` returns NaN, an
        infinity or something that is not a number or a bool.
    TypeError
        If ``accuracy_at`` is not callable.

    Examples
    --------
    >>> smallest_width(lambda m: float(m >= 300)).m
    300
    """
    if not callable(accuracy_at):
        raise TypeError(f"accuracy_at must be a callable m -> accuracy, got {type(accuracy_at).__name__}")
    lo, hi = _check_width("lo", lo), _check_width("hi", hi)
    if lo > hi:
        raise ValueError(f"lo must not exceed hi; got lo={lo}, hi={hi}")
    try:
        verify = as_int(verify, "verify", minimum=0)
    except ValueError:
        raise ValueError(f"verify must be an integer >= 0; got {verify!r}") from None
    if isinstance(target, float) and math.isnan(target):
        raise ValueError("target must not be NaN")
    target = as_real(target, "target")

    seen: dict[int, float] = {}
    order: list[tuple[int, float]] = []

    def ok(m: int) -> bool:
        if m not in seen:
            acc = _accuracy(accuracy_at(m), m)
            seen[m] = acc
            order.append((m, acc))
        return seen[m] >= target

    fail = lo - 1  # every width <= fail is excluded (failed, failed to verify, or below lo)
    restarts = 0
    answer = None
    while answer is None:
        # 1. the smallest success already known above `fail`, else gallop to one
        known = [m for m, a in seen.items() if m > fail and a >= target]
        if known:
            good = min(known)
        else:
            good, step, m = None, 1, fail + 1
            while m <= hi:
                if ok(m):
                    good = m
                    break
                fail = m
                if m == hi:
                    break
                m, step = min(m + step, hi), step * 2
            if good is None:
                break
        # 2. bisect (fail, good]
        while good - fail > 1:
            mid = (fail + good) // 2
            if ok(mid):
                good = mid
            else:
                fail = mid
        # 3. verify good + 1 .. good + verify
        for m in range(good + 1, min(good + verify, hi) + 1):
            if not ok(m):
                fail, restarts = m, restarts + 1
                break
        else:
            answer = good

    violations = []
    for m, a in sorted(seen.items()):
        if a < target and any(s < m and b >= target for s, b in seen.items()):
            violations.append(m)
    return SearchResult(
        m=answer,
        accuracy=None if answer is None else seen[answer],
        evaluations=tuple(order),
        monotone_violations=tuple(violations),
        restarts=restarts,
        lo=lo,
        hi=hi,
        target=target,
    )


class _Unknown(Exception):
    """Raised by a replay of :func:`smallest_width` at the first width it has no accuracy for."""

    def __init__(self, m: int) -> None:
        super().__init__(m)
        self.m = m


def _next_width(known: dict[int, float], lo: int, hi: int, target: float, verify: int) -> int | None:
    """The next width :func:`smallest_width` would evaluate given the accuracies ``known`` (None: done)."""

    def lookup(m: int) -> float:
        if m not in known:
            raise _Unknown(m)
        return known[m]

    try:
        smallest_width(lookup, lo=lo, hi=hi, target=target, verify=verify)
    except _Unknown as need:
        return need.m
    return None


def _likely_success(known: dict[int, float], m: int, target: float) -> bool:
    """The outcome at ``m`` to speculate on first: success once any width has succeeded (the
    bisection and the verification), failure before (the gallop)."""
    del m  # the rule looks only at what is known
    return any(a >= target for a in known.values())


def smallest_width_batched(
    accuracies_at: Callable[[list[int]], list[float]],
    lo: int = 1,
    hi: int = 65536,
    target: float = 1.0,
    verify: int = 2,
    batch: int = 3,
) -> SearchResult:
    """:func:`smallest_width`, asking for several widths at a time (speculative evaluation).

    The answer is the one :func:`smallest_width` gives with the same accuracies: the search is
    replayed on what is known, and where it needs a width it does not have, that width is
    evaluated together with the widths the search would ask for next under each outcome
    (success or failure) of the ones before, breadth first, the likelier outcome first (failure
    while no width has succeeded, as in the gallop; success once one has, as in the bisection and
    the verification), up to ``batch`` widths per call of ``accuracies_at``. In the bisection,
    ``batch = 3`` evaluates the midpoint and both possible next midpoints at once (two halvings
    per call); in the verification, both verification widths come in one call. The evaluations
    the path did not need are reported in ``SearchResult.speculative`` and change nothing else:
    ``m``, ``evaluations`` (in the order the sequential search uses them),
    ``monotone_violations`` and ``restarts`` are those of :func:`smallest_width` (tested). Worth it where evaluating several widths in one call costs
    less than evaluating them one by one (the GD capacity search trains them as one stack,
    :func:`assocmem.mlps.mlp.train_mlps`).

    Parameters
    ----------
    accuracies_at : callable
        ``accuracies_at(widths) -> accuracies``: a list of distinct widths in, one accuracy per
        width (float or bool) out, in the same order. Each width is asked for once.
    lo, hi, target, verify
        As :func:`smallest_width`.
    batch : int, default 3
        Most widths per call (1: :func:`smallest_width`'s own order, one at a time).

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        As :func:`smallest_width`; a ``batch`` that is not an integer ``>= 1``; an
        ``accuracies_at`` that returns the wrong number of accuracies.
    TypeError
        If ``accuracies_at`` is not callable.
    """
    if not callable(accuracies_at):
        raise TypeError("accuracies_at must be a callable widths -> accuracies, "
                        f"got {type(accuracies_at).__name__}")
    lo, hi = _check_width("lo", lo), _check_width("hi", hi)
    if lo > hi:
        raise ValueError(f"lo must not exceed hi; got lo={lo}, hi={hi}")
    try:
        verify = as_int(verify, "verify", minimum=0)
        batch = as_int(batch, "batch", minimum=1)
    except ValueError as err:
        raise ValueError(f"verify must be an integer >= 0 and batch an integer >= 1 ({err})") from None
    if isinstance(target, float) and math.isnan(target):
        raise ValueError("target must not be NaN")
    target = as_real(target, "target")
    fail_value = target - 1.0  # a stand-in accuracy below the target, for hypothetical outcomes
    known: dict[int, float] = {}
    asked: list[int] = []  # every width evaluated, in the order evaluated
    while (need := _next_width(known, lo, hi, target, verify)) is not None:
        wanted, frontier = [need], [dict(known)]
        while frontier and len(wanted) < batch:  # breadth first over both outcomes of each wanted width
            nxt = []
            for hyp in frontier:
                m = _next_width(hyp, lo, hi, target, verify)
                if m is None:
                    continue
                if m not in wanted and m not in known:
                    if len(wanted) >= batch:
                        break
                    wanted.append(m)
                likely = _likely_success(hyp, m, target)
                for outcome in ((target, fail_value) if likely else (fail_value, target)):
                    nxt.append({**hyp, m: outcome})
            frontier = nxt
        values = accuracies_at(list(wanted))
        values = list(values)
        if len(values) != len(wanted):
            raise ValueError(f"accuracies_at returned {len(values)} accuracies for {len(wanted)} widths")
        for m, v in zip(wanted, values):
            known[m] = _accuracy(v, m)
            asked.append(m)
    result = smallest_width(known.__getitem__, lo=lo, hi=hi, target=target, verify=verify)
    used = {m for m, _ in result.evaluations}
    return dataclasses.replace(result, speculative=tuple((m, known[m]) for m in asked if m not in used))


def smallest_width_reference(
    accuracy_at: Callable[[int], float],
    lo: int = 1,
    hi: int = 65536,
    target: float = 1.0,
) -> SearchResult:
    """Plain reference for :func:`smallest_width`: bisection over ``[lo, hi]``, assuming monotone accuracy.

    Keeps ``fail < good`` with every width ``<= fail`` taken to miss and ``good`` to reach the
    target (``fail = lo - 1`` and ``good = hi + 1`` to start), evaluates the midpoint and halves
    the interval until ``good = fail + 1``. About ``log2(hi - lo)`` evaluations, starting at the
    middle of the range (so it builds the large models that the galloping search avoids), no
    verification. When accuracy is monotone in ``m`` it returns the same width as
    :func:`smallest_width` (tested); when it is not, either may differ.

    Parameters
    ----------
    accuracy_at : callable
        ``accuracy_at(m) -> float`` (or bool).
    lo, hi : int, default 1 and 65536
    target : float, default 1.0

    Returns
    -------
    SearchResult
        ``m`` (``None`` when no evaluated width reached the target), every evaluation,
        ``monotone_violations`` as in :func:`smallest_width`, ``restarts = 0``.

    Raises
    ------
    ValueError
        As :func:`smallest_width`.
    TypeError
        If ``accuracy_at`` is not callable.
    """
    if not callable(accuracy_at):
        raise TypeError(f"accuracy_at must be a callable m -> accuracy, got {type(accuracy_at).__name__}")
    lo, hi = _check_width("lo", lo), _check_width("hi", hi)
    if lo > hi:
        raise ValueError(f"lo must not exceed hi; got lo={lo}, hi={hi}")
    if isinstance(target, float) and math.isnan(target):
        raise ValueError("target must not be NaN")
    target = as_real(target, "target")
    order: list[tuple[int, float]] = []
    fail, good = lo - 1, hi + 1
    while good - fail > 1:
        mid = (fail + good) // 2
        acc = _accuracy(accuracy_at(mid), mid)
        order.append((mid, acc))
        if acc >= target:
            good = mid
        else:
            fail = mid
    seen = dict(order)
    violations = tuple(m for m, a in sorted(seen.items())
                       if a < target and any(s < m and b >= target for s, b in seen.items()))
    found = good <= hi
    return SearchResult(m=good if found else None, accuracy=seen[good] if found else None,
                        evaluations=tuple(order), monotone_violations=violations, restarts=0,
                        lo=lo, hi=hi, target=target)
