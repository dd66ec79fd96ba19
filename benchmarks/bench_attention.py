"""Wall-clock timing of softmax attention against causal linear attention, and of decoding.

    python benchmarks/bench_attention.py                     # quick preset, CPU, one thread
    python benchmarks/bench_attention.py --preset full --device auto

Prints, for the machine it runs on:

1. the time to run causal attention over a whole sequence of length T: softmax attention and the
   parallel, recurrent and chunked forms of linear attention, with the fitted exponent p of
   time ~ T^p over the three longest T;
2. the time per generated token when decoding one token at a time with a key-value cache and
   with the recurrent state, by octave of tokens seen, with the exact numbers each holds.

Every number here is machine-dependent; chapter 01 of the book shows the same measurements
(``notebooks/01-attention-to-matrix``) and checks the exact counts separately.
"""

from __future__ import annotations

import argparse
import sys
import time

from assocmem.benchmarking import machine_info
from assocmem.linear.timing import (
    PRESETS,
    get_preset,
    loglog_slope,
    time_attention_vs_T,
    time_decoding,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="quick", choices=sorted(PRESETS), help="experiment sizes (default quick)")
    parser.add_argument("--device", default="cpu", help='"cpu" (default), "cuda", "mps" or "auto"')
    parser.add_argument("--threads", type=int, default=None, help="CPU threads while timing (default: the preset's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    P = get_preset(args.preset)
    threads = P.num_threads if args.threads is None else args.threads
    start = time.perf_counter()

    print(f"# attention timing, preset {args.preset!r}, d_k = {P.d_k}, d_v = {P.d_v}, {P.timing_dtype}")
    for key, value in machine_info(args.device, threads).items():
        print(f"#   {key}: {value}")
    print("# wall-clock times: machine-dependent\n")

    times = time_attention_vs_T(P.time_T, P.d_k, P.d_v, chunk_size=P.chunk_size, dtype=P.timing_dtype,
                                device=args.device, seed=args.seed, min_run_time=P.min_run_time,
                                rounds=P.rounds, num_threads=threads)
    table = times.pivot(index="T", columns="method", values="seconds")[list(times.method.unique())]
    print(f"## whole sequence, ms (fastest of {P.rounds} rounds; chunk size {P.chunk_size})")
    print((1e3 * table).round(3).to_string())
    slopes = {m: loglog_slope(table.index[-3:], table[m].iloc[-3:]) for m in table.columns}
    print("fitted exponent p of time ~ T^p (three longest T):", {m: round(p, 2) for m, p in slopes.items()})

    per_token = time_decoding(P.decode_T, P.d_k, P.d_v, dtype=P.timing_dtype, device=args.device, seed=args.seed,
                              repeats=P.decode_repeats, heads=P.decode_heads, num_threads=threads)
    print(f"\n## decoding {P.decode_T} tokens one at a time, {P.decode_heads} heads: microseconds per token")
    us = per_token.pivot(index=["t_lo", "t_hi"], columns="decoder", values="us_per_token").round(1)
    held = per_token.pivot(index=["t_lo", "t_hi"], columns="decoder", values="numbers_held").astype(int)
    us.columns = [f"{c} us/token" for c in us.columns]
    held.columns = [f"{c} numbers held (exact)" for c in held.columns]
    print(us.join(held).to_string())
    print(f"\n# total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
