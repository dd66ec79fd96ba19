"""Tests for assocmem.sweeps.search: the capacity search finds thresholds, reports misses, and copes with
non-monotone accuracy."""

import math

import pytest

from assocmem.sweeps import smallest_width, smallest_width_batched


@pytest.mark.parametrize("threshold", [1, 2, 3, 7, 64, 257, 1000, 46341, 65536])
def test_search_finds_the_threshold_of_a_monotone_function(threshold):
    calls = []

    def accuracy(m):
        calls.append(m)
        return 1.0 if m >= threshold else 0.5

    result = smallest_width(accuracy)
    assert result.m == threshold and result.accuracy == 1.0 and result.found and result.monotone
    assert len(calls) == len(set(calls)) == result.n_evaluations  # no width evaluated twice
    assert result.n_evaluations <= 2 * math.log2(threshold) + 2 + 2 + 1  # gallop + bisect + verify
    assert max(calls) <= max(65536, threshold + 2)


def test_search_reports_a_miss_within_range():
    result = smallest_width(lambda m: float(m >= 100_000), hi=65536)
    assert result.m is None and result.accuracy is None and not result.found
    assert result.evaluations[-1] == (65536, 0.0)
    assert max(m for m, _ in result.evaluations) == 65536


def test_search_respects_lo_hi_and_target():
    result = smallest_width(lambda m: m / 100, lo=10, hi=200, target=0.9)
    assert result.m == 90
    assert min(m for m, _ in result.evaluations) == 10
    assert smallest_width(lambda m: 1.0, lo=5, hi=5).m == 5
    assert smallest_width(lambda m: True, lo=3).m == 3  # booleans work too


def test_search_non_monotone_dip_above_the_candidate():
    # succeeds from 100 on, except a dip at 101 and 102
    def accuracy(m):
        return 1.0 if m >= 100 and m not in (101, 102) else 0.9

    result = smallest_width(accuracy, verify=2)
    assert result.m == 103
    assert result.monotone_violations == (101, 102) and result.restarts == 1
    assert not result.monotone
    # without verification the search stops at the first candidate
    plain = smallest_width(accuracy, verify=0)
    assert plain.m == 100 and plain.monotone


def test_search_non_monotone_isolated_early_success():
    # a lucky width 4 succeeds; the real threshold is 300
    def accuracy(m):
        return 1.0 if m == 4 or m >= 300 else 0.0

    result = smallest_width(accuracy, verify=2)
    assert result.m == 300 and result.restarts == 1 and result.monotone_violations[0] == 5
    assert all(v > 4 for v in result.monotone_violations)
    assert smallest_width(accuracy, verify=0).m == 4


def test_search_rejects_bad_input():
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        smallest_width(lambda m: 1.0, lo=10, hi=5)
    with pytest.raises(ValueError, match="integer >= 1"):
        smallest_width(lambda m: 1.0, lo=0)
    with pytest.raises(ValueError, match="verify"):
        smallest_width(lambda m: 1.0, verify=-1)
    with pytest.raises(ValueError, match="NaN"):
        smallest_width(lambda m: float("nan"))


@pytest.mark.parametrize("threshold", [1, 2, 3, 17, 300, 487, 65535, 65536])
def test_reference_bisection_agrees_on_monotone_functions(threshold):
    from assocmem.sweeps import smallest_width_reference

    ref = smallest_width_reference(lambda m: float(m >= threshold))
    fast = smallest_width(lambda m: float(m >= threshold))
    assert ref.m == fast.m == threshold and ref.monotone and ref.restarts == 0
    assert ref.n_evaluations <= math.ceil(math.log2(65537)) + 1


def test_reference_bisection_reports_a_miss_and_rejects_bad_input():
    from assocmem.sweeps import smallest_width_reference

    miss = smallest_width_reference(lambda m: 0.5, lo=3, hi=40)
    assert miss.m is None and miss.accuracy is None and not miss.found
    assert smallest_width_reference(lambda m: m >= 5, lo=5, hi=5).m == 5
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        smallest_width_reference(lambda m: 1.0, lo=9, hi=3)
    with pytest.raises(TypeError):
        smallest_width_reference(3)
    with pytest.raises(ValueError, match="NaN"):
        smallest_width_reference(lambda m: float("nan"))


# ------------------------------------------------------------------------------------------------
# smallest_width_batched: the same search, several widths per call


def _batched_agrees(acc, lo, hi, verify, batch):
    seq = smallest_width(acc, lo, hi, verify=verify)
    calls = []

    def accs(widths):
        calls.append(list(widths))
        return [acc(m) for m in widths]

    res = smallest_width_batched(accs, lo, hi, verify=verify, batch=batch)
    asked = [m for c in calls for m in c]
    assert len(asked) == len(set(asked))  # no width twice
    assert all(len(c) <= batch for c in calls)
    assert (res.m, res.accuracy, res.evaluations, res.monotone_violations, res.restarts) == \
        (seq.m, seq.accuracy, seq.evaluations, seq.monotone_violations, seq.restarts)
    assert sorted(asked) == sorted([m for m, _ in seq.evaluations] + [m for m, _ in res.speculative])
    return res, calls


def test_batched_search_takes_the_sequential_path_on_random_functions():
    import random

    rng = random.Random(0)
    for _ in range(600):
        hi = rng.choice([1, 2, 3, 5, 17, 100, 65536])
        lo = rng.randint(1, min(hi, 20))
        threshold = rng.randint(lo, hi + 3)
        flipped = {rng.randint(lo, hi) for _ in range(rng.randint(0, 4))}  # non-monotone widths

        def acc(m, threshold=threshold, flipped=flipped):
            return float((m >= threshold) != (m in flipped))

        _batched_agrees(acc, lo, hi, rng.randint(0, 3), rng.randint(1, 7))


def test_batched_search_batches_the_gallop_and_the_verification():
    res, calls = _batched_agrees(lambda m: float(m >= 6), 1, 65536, 2, 3)
    assert res.m == 6 and len(calls) < len(res.evaluations)
    assert calls[0] == [1, 2, 4]  # the gallop, failures predicted while nothing has succeeded
    res1, calls1 = _batched_agrees(lambda m: float(m >= 6), 1, 65536, 2, 1)
    assert res1.speculative == () and [c[0] for c in calls1] == [m for m, _ in res1.evaluations]


def test_batched_search_rejects_bad_input():
    with pytest.raises(TypeError):
        smallest_width_batched(3)
    with pytest.raises(ValueError):
        smallest_width_batched(lambda ws: [1.0] * len(ws), batch=0)
    with pytest.raises(ValueError, match="accuracies"):
        smallest_width_batched(lambda ws: [1.0], batch=3)
    with pytest.raises(ValueError):
        smallest_width_batched(lambda ws: [float("nan")] * len(ws))
    with pytest.raises(ValueError):
        smallest_width_batched(lambda ws: [1.0] * len(ws), lo=5, hi=4)
