"""Benchmark of the SDM geometry in assocmem.sdm against the targets of the book's Part III.

(a) The exact circle-intersection table I(dv, d, n), dv = 0..2d, at n = 1000, d = 447 (the
    canonical SDM setting); target 0.15 s. Both exact methods are timed: the telescoped first
    difference of Eq. 2 (the default) and the direct double sum of Eq. 2 with shared binomial
    rows and prefix sums.
(b) 10,000 hypersphere-cap intersections at n = 64, d = 11 (the Attention setting), cosines
    linspace(-1, 1, 10000); target 0.1 s.

Each time is the median of several repeats after one warm-up call. Run with

    python benchmarks/bench_sdm_geometry.py
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np
import scipy

from assocmem import sdm


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up: imports, caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def verdict(seconds: float, target: float) -> str:
    status = "OK" if seconds < target else "SLOW"
    return f"{seconds * 1e3:9.2f} ms   target {target * 1e3:6.0f} ms   {status}"


def main() -> None:
    print(f"machine : {platform.platform()} | {platform.processor() or platform.machine()}")
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "n/a"
    print(f"cores   : {os.cpu_count()} logical, {usable} usable by this process")
    print(f"python  : {platform.python_version()} | numpy {np.__version__} "
          f"| scipy {scipy.__version__}")
    print()

    n, d = 1000, 447
    dvs = range(0, 2 * d + 1)
    table = sdm.circle_intersection_table(n, d, dvs)
    assert table == sdm.circle_intersection_table(n, d, dvs, method="sum")
    print(f"(a) exact table I(dv), dv = 0..{2 * d}, n = {n}, d = {d} "
          f"({len(table)} values, I(0) has {table[0].bit_length()} bits)")
    t_rec = median_time(lambda: sdm.circle_intersection_table(n, d, dvs), repeats=15)
    t_sum = median_time(lambda: sdm.circle_intersection_table(n, d, dvs, method="sum"), repeats=7)
    print(f"    method='recurrence' (default) {verdict(t_rec, 0.15)}")
    print(f"    method='sum' (Eq. 2 direct)   {verdict(t_sum, 0.15)}")
    print()

    rho = np.linspace(-1.0, 1.0, 10_000)
    values = sdm.cap_intersection(rho, 11, 64)
    print(f"(b) cap intersections, n = 64, d = 11, {rho.size} cosines in [-1, 1] "
          f"({np.count_nonzero(values)} nonzero)")
    t_cap = median_time(lambda: sdm.cap_intersection(rho, 11, 64), repeats=15)
    t_log = median_time(lambda: sdm.log_cap_intersection(rho, 11, 64), repeats=15)
    print(f"    cap_intersection              {verdict(t_cap, 0.10)}")
    print(f"    log_cap_intersection          {verdict(t_log, 0.10)}")


if __name__ == "__main__":
    main()
