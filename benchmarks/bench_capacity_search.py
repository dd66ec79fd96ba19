"""Wall-clock cost of one whole capacity search (assocmem.mlps.capacity_sweeps), CPU, float64.

    python benchmarks/bench_capacity_search.py               # threads chosen by a GEMM probe
    python benchmarks/bench_capacity_search.py --threads 1 --repeats 5

A capacity search finds the smallest hidden width m in [1, 65536] at which a memory stores every
fact of a tied fact set (accuracy 100 %, argmax over every value row): a gallop 1, 2, 4, ...,
a bisection, and two verification widths above the answer, building the memory and measuring its
accuracy at every width tried (seed 001, App. A.3.1). Prints, for the machine it runs on:

1. the whitened sketched-K2 construction (full ridge-whitened readout) at d = 64, F = 1024, the
   isotropic point of the ``cpu`` preset (same fact set and seed): total wall time of the search
   (target under 1 s; the same-run ratio against the plain bisection is in bench_ratios.py),
   the width found, the number
   of widths evaluated and the mean time per evaluation;
2. the data-dependent construction (two preconditioned-CG least-squares refits, then the
   whitened readout) at the same point.

Times are the median over ``--repeats`` whole searches (the min is shown too). Everything is
machine-dependent, and on a shared machine other processes inflate it (the load average is
printed).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from assocmem.benchmarking import fastest_thread_count, machine_info
from assocmem.sweeps import point_seed
from assocmem.mlps.capacity_sweeps import CAPACITY_PRESETS, capacity_fact_set, capacity_search, num_facts


def case(method: str, d: int, alpha: float, repeats: int, label: str, target: str) -> None:
    cfg = CAPACITY_PRESETS["cpu"]
    F = num_facts(alpha, d)
    point = {"method": method, "geometry": "isotropic", "d": d, "alpha": alpha, "F": F}
    facts = capacity_fact_set(cfg, d, F, "isotropic")
    seed = point_seed(cfg, point)
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = capacity_search(facts, method, seed, lo=cfg.lo, hi=cfg.hi, verify=cfg.verify)
        times.append(time.perf_counter() - t0)
    med, best = statistics.median(times), min(times)
    n = result.n_evaluations
    print(f"## {label} {method} capacity search, d={d}, F={F} (alpha={alpha:g}), isotropic, seed {seed}")
    print(f"   median {med:8.3f} s   (min {best:.3f} s over {repeats} searches)   {target}")
    print(f"   found m = {result.m} (W = 3 m d = {3 * result.m * d:,}), {n} widths evaluated, "
          f"{med / n * 1e3:.1f} ms per width; monotone violations: {len(result.monotone_violations)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", default="auto", help='CPU threads, or "auto" (probe 1 vs all cores)')
    parser.add_argument("--repeats", type=int, default=3, help="whole searches timed per case")
    args = parser.parse_args(argv)
    threads = fastest_thread_count((512, 512, 512)) if args.threads == "auto" else int(args.threads)
    torch.set_num_threads(threads)
    print("# assocmem capacity search timing, CPU, float64")
    for key, value in machine_info("cpu", threads, load_average=True).items():
        print(f"#   {key}: {value}")
    print("# wall-clock times: machine-dependent\n")
    start = time.perf_counter()
    case("whitened", 64, 1 / 4, args.repeats, "1.", "target < 1 s")
    print()
    case("data_dependent", 64, 1 / 4, args.repeats, "2.", "(no target)")
    print(f"\n# total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
