"""Throughput of the App. B.7 read rules (assocmem.sdm.convergence) on the CPU.

One *query-step* is one read of one query from a memory of m patterns: an (n x m) similarity
row, the weights, and the weighted sum of the m patterns. The book's target is at least 1e5
query-steps per second for the softmax read (``Cont_SDM_BFit_Attention``) and the
continuous-SDM read (``Cont_SDM``, cap-intersection weights) at n = 64, m = 1024 on a CPU,
reached by reading many queries at once.

For each rule, dtype and batch size the script times ``ReadRule.step`` (one read of the whole
batch, inputs already validated, as inside ``converge``) and reports the median over repeats
after a warm-up, with 1 and 2 torch threads. The machine's load average is printed too: on a
shared machine other processes take cores and the figures drop accordingly, and OpenMP's
second thread can make a read *slower* when the second core is busy (measured here: with a load
average of 3 on two cores, one thread reads three times faster than two).

Run with

    python benchmarks/bench_sdm_read.py                # 1 and 2 threads, batch 1024 and 4096
    python benchmarks/bench_sdm_read.py --threads 1 --batch 8192 --all-rules
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import torch

from assocmem.sdm.convergence.algorithms import ALGORITHMS
from assocmem.sdm.convergence.perturbations import random_patterns
from assocmem.sdm.convergence.read_rules import make_read_rule

TARGET = 1e5  # query-steps per second
HEADLINE = ("Cont_SDM_BFit_Attention", "Cont_SDM")


def machine_info() -> list[str]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "n/a"
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("n/a",) * 3
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return [
        f"machine : {platform.platform()}",
        f"cpu     : {cpu}",
        f"cores   : {os.cpu_count()} logical, {usable} usable",
        f"load    : {', '.join(f'{v:.2f}' if isinstance(v, float) else v for v in load)} (1, 5, 15 min)",
        f"python  : {platform.python_version()} | torch {torch.__version__}",
    ]


def time_rule(name: str, n: int, m: int, d: int, batch: int, dtype: torch.dtype,
              repeats: int) -> tuple[float, float]:
    """Query-steps per second of one read of ``batch`` queries: (median, best) over repeats."""
    rule = make_read_rule(name, n, d, r=2**64, device="cpu", dtype=dtype, chunk_size=batch)
    pb, pc = random_patterns(m, n, seed=0)
    patterns = pb if rule.is_binary else pc
    prep = rule.prepare(patterns)
    _, queries = random_patterns(batch, n, seed=1)
    if rule.is_binary:
        queries = (queries > 0).to(torch.uint8)
    x = rule.prepare_queries(queries)
    rule.step(x, prep)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        rule.step(x, prep)
        times.append(time.perf_counter() - start)
    return batch / statistics.median(times), batch / min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="torch thread counts to try (default 1 and 2)")
    parser.add_argument("--batch", type=int, nargs="+", default=[1024, 4096], help="queries per read")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--d", type=int, default=11, help="radius (default 11, the SNR optimum)")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--all-rules", action="store_true", help="time all eight rules")
    args = parser.parse_args()
    print("\n".join(machine_info()))
    print()
    print(f"n = {args.n}, m = {args.m}, d = {args.d}; {args.repeats} reads after a warm-up "
          "(median and best: on a loaded machine the best read is the one least disturbed)")
    print(f"{'rule':28s} {'threads':>7s} {'dtype':8s} {'batch':>6s} {'median q-steps/s':>17s} "
          f"{'best q-steps/s':>15s}  verdict")
    rules = ALGORITHMS if args.all_rules else HEADLINE
    best: dict[str, float] = {}
    for threads in args.threads:
        torch.set_num_threads(threads)
        for name in rules:
            for dtype in (torch.float32, torch.float64):
                for batch in args.batch:
                    med, top = time_rule(name, args.n, args.m, args.d, batch, dtype, args.repeats)
                    best[name] = max(best.get(name, 0.0), med)
                    mark = "OK" if med >= TARGET else "below"
                    print(f"{name:28s} {threads:7d} {str(dtype).replace('torch.', ''):8s} {batch:6d} "
                          f"{med:17,.0f} {top:15,.0f}  {mark}")
    print()
    for name in HEADLINE:
        if name in best:
            status = "OK" if best[name] >= TARGET else "BELOW TARGET"
            print(f"best median {name:28s} {best[name]:12,.0f} query-steps/s   target {TARGET:,.0f}   "
                  f"{status}")


if __name__ == "__main__":
    main()
