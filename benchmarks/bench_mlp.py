"""Wall-clock cost of the closed-form fact-storing MLPs (assocmem.mlps.mlp), CPU, float64.

    python benchmarks/bench_mlp.py                 # all three cases, threads chosen by a GEMM probe
    python benchmarks/bench_mlp.py --quick         # skip the large data-dependent case
    python benchmarks/bench_mlp.py --threads 2

Prints, for the machine it runs on:

1. the whitened sketched-K2 construction (Algorithm 1, full whitening, primal branch) plus its
   accuracy over every value row (strict argmax, as assocmem.mlps.margins.accuracy), at d = 64,
   F = 1024, m = 512 (target < 15 ms; the same-run ratio against the plain reference is in
   bench_ratios.py, which ``make bench`` runs). The timed
   pipeline is ``hebbian_mlp(..., return_features=True)`` followed by
   ``accuracy_from_outputs(Phi @ B.T, facts)``: validate the fact set, draw A and G, features,
   Gram matrix, Cholesky, triangular solves, forward pass on the stored keys (reusing the
   construction's features), scores against every value row and the strict argmax check. The
   unfused ``accuracy(hebbian_mlp(...), facts)``, which recomputes the features, is timed too.
   A per-step breakdown gives each step's GFLOP/s against a GEMM of the Gram matrix's size timed
   in the same run;
2. the data-dependent construction (eqs. 17-18 by preconditioned CG, then the whitened readout)
   at d = 64, F = 1024, m = 256 (target < 100 ms);
3. the same at d = 128, F = 4096, m = 2048, with the achieved GFLOP/s of its dominant step (the
   CG solves: four thin GEMMs per iteration) against the machine's float64 matmul rate measured in
   the same run, both for a square 2048^3 GEMM and for the solve's own GEMM shapes (target: at
   least 50 % of the square rate).

Times are medians over repeated calls (torch.utils.benchmark blocked_autorange; the min is shown
too). Everything is machine-dependent, and on a shared machine other processes inflate it (the
load average is printed with the machine information).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.utils import benchmark

from assocmem.benchmarking import fastest_thread_count, gemm_rate, machine_info
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margins.decoding import accuracy, accuracy_from_outputs
from assocmem.mlps.mlp._common import _checked_facts, _gaussian
from assocmem.mlps.mlp.architectures import _stacked_features
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp
from assocmem.mlps.mlp.hebbian import hebbian_mlp
from assocmem.mlps.mlp.readout import _cholesky, _gram_lower, _gram_panels


def timed(stmt, min_run_time: float, **globs) -> tuple[float, float]:
    """(median, min) seconds per call of ``stmt`` over blocked_autorange blocks."""
    m = benchmark.Timer(stmt=stmt, globals=globs, num_threads=torch.get_num_threads()).blocked_autorange(
        min_run_time=min_run_time)
    return float(m.median), float(min(m.times))


def whitened_pipeline(facts, m: int) -> float:
    """Case 1 as timed: build the whitened MLP, then its strict accuracy over every value row.

    The forward pass on the stored keys reuses the feature matrix of the construction.
    """
    model, Phi = hebbian_mlp(facts, m, "full", return_features=True)
    return accuracy_from_outputs(Phi @ model.B.T, facts)


def case_whitened(min_run_time: float) -> None:
    d, F, m = 64, 1024, 512
    fs = make_fact_set(F, d, tied=True, seed=0)
    V = fs.values.shape[0]
    g = dict(whitened_pipeline=whitened_pipeline, accuracy=accuracy, hebbian_mlp=hebbian_mlp, fs=fs, m=m)
    med, best = timed("whitened_pipeline(fs, m)", min_run_time, **g)
    model, Phi = hebbian_mlp(fs, m, "full", return_features=True)
    acc = whitened_pipeline(fs, m)
    assert acc == accuracy(model, fs), "fused and unfused accuracy disagree"
    print(f"## 1. whitened construction + accuracy, d={d}, F={F}, V={V}, m={m} "
          f"({model.info['branch']} branch)")
    print(f"   median {med * 1e3:8.2f} ms   (min {best * 1e3:.2f} ms)   target < 15 ms"
          f"   accuracy {acc:.4f}")
    med_u, best_u = timed("accuracy(hebbian_mlp(fs, m, 'full'), fs)", min_run_time, **g)
    print(f"   unfused accuracy(hebbian_mlp(...)), features recomputed: median {med_u * 1e3:.2f} ms "
          f"(min {best_u * 1e3:.2f} ms)")

    # per-step breakdown: the steps of the pipeline above, timed one by one
    K, C = fs.keys, fs.targets
    AG = _gaussian(2 * m, d, torch.Generator().manual_seed(0)).mul_(m ** -0.25)  # [A; G]
    S0 = _gram_lower(Phi, F * 1e-6)
    S = S0.clone()
    L = _cholesky(S0.clone(), 1e-6, "primal")
    R = C.T @ Phi
    B = model.B
    out = Phi @ B.T
    gram_flops = sum(2 * F * (e - i) * e for i, e in _gram_panels(m))
    steps = [  # (name, statement, flops, statement whose time is subtracted)
        ("validate the fact set", "_checked_facts(fs, True)", 0, None),
        ("draw A, G (2m x d normals)", "_gaussian(2 * m, d, torch.Generator().manual_seed(0)).mul_(m ** -0.25)",
         0, None),
        ("features Phi = (K A^T) * (K G^T)", "_stacked_features(K, AG)", 2 * F * d * 2 * m, None),
        ("Gram Phi^T Phi, lower panels", "_gram_lower(Phi, F * 1e-6)", gram_flops, None),
        ("Cholesky (blocked, in place)", "S.copy_(S0); _cholesky(S, 1e-6, 'primal')", m ** 3 // 3,
         "S.copy_(S0)"),
        ("C^T Phi", "C.T @ Phi", 2 * F * m * d, None),
        ("two triangular solves", "torch.linalg.solve_triangular(L, torch.linalg.solve_triangular("
         "L.mT, R, upper=True, left=False), upper=False, left=False)", 2 * m * m * d, None),
        ("forward Phi B^T (features reused)", "Phi @ B.T", 2 * F * m * d, None),
        ("scores vs every value row, argmax", "accuracy_from_outputs(out, fs)", 2 * F * d * V, None),
    ]
    g.update(torch=torch, d=d, F=F, K=K, AG=AG, Phi=Phi, C=C, S=S, S0=S0, L=L, R=R, B=B, out=out,
             _checked_facts=_checked_facts, _gaussian=_gaussian, _stacked_features=_stacked_features,
             _gram_lower=_gram_lower, _cholesky=_cholesky, accuracy_from_outputs=accuracy_from_outputs)
    rate = gemm_rate(F, m, m, min_run_time=min(0.5, min_run_time))
    print(f"   steps (median; GFLOP/s against a ({F} x {m}) @ ({m} x {m}) GEMM timed in this run at "
          f"{rate:.1f} GFLOP/s):")
    total_s = total_f = 0.0
    for name, stmt, flops, minus in steps:
        s, _ = timed(stmt, min(0.3, min_run_time), **g)
        if minus is not None:  # e.g. the copy that lets the in-place Cholesky run again
            s -= timed(minus, min(0.3, min_run_time), **g)[0]
        total_s += s
        total_f += flops
        rate_s = f"{flops / s / 1e9:6.1f} GFLOP/s ({100 * flops / s / 1e9 / rate:3.0f} %)" if flops else ""
        print(f"     {name:<38s} {s * 1e3:7.3f} ms  {flops / 1e6:6.1f} MFLOP  {rate_s}")
    print(f"     {'sum of the steps':<38s} {total_s * 1e3:7.3f} ms  {total_f / 1e6:6.1f} MFLOP  "
          f"{total_f / total_s / 1e9:6.1f} GFLOP/s; the flops alone need {total_f / rate / 1e6:.2f} ms "
          "at the GEMM rate")


def case_data_dependent(d: int, F: int, m: int, min_run_time: float, target_ms: float | None,
                        rates: dict[str, float] | None = None, repeats: int = 0, label: str = "") -> None:
    fs = make_fact_set(F, d, tied=True, seed=0)
    print(f"## {label} data-dependent construction, d={d}, F={F}, m={m}")
    if repeats:
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            model = data_dependent_mlp(fs, m)
            runs.append((time.perf_counter() - t0, model.info))
        totals = [r[0] for r in runs]
        med, best = statistics.median(totals), min(totals)
        infos = [r[1] for r in runs]
    else:
        med, best = timed("data_dependent_mlp(fs, m)", min_run_time, data_dependent_mlp=data_dependent_mlp,
                          fs=fs, m=m)
        infos = [data_dependent_mlp(fs, m).info]
        model = data_dependent_mlp(fs, m)
    info = infos[-1]
    it_g, it_a = info["solve_G"]["iterations"], info["solve_A"]["iterations"]
    line = f"   median {med * 1e3:9.2f} ms   (min {best * 1e3:.2f} ms)"
    if target_ms is not None:
        line += f"   target < {target_ms:g} ms"
    print(line)
    print(f"   CG iterations (G, A): {it_g}, {it_a};  relative residuals "
          f"{info['solve_G']['relative_residual']:.1e}, {info['solve_A']['relative_residual']:.1e};"
          f"  accuracy {accuracy(model, fs):.4f}")
    if rates is not None:
        solve_s = [i["solve_G"]["seconds"] + i["solve_A"]["seconds"] for i in infos]
        solve_f = [i["solve_G"]["flops"] + i["solve_A"]["flops"] for i in infos]
        gflops = statistics.median(f / s / 1e9 for f, s in zip(solve_f, solve_s))
        share = statistics.median(solve_s) / med
        print(f"   dominant step: the two CG solves, {statistics.median(solve_s):.2f} s "
              f"({100 * share:.0f} % of the construction), {solve_f[-1] / 1e9:.1f} GFLOP")
        print(f"   achieved {gflops:6.1f} GFLOP/s")
        for name, rate in rates.items():
            print(f"     vs {name:<38s} {rate:6.1f} GFLOP/s  ->  {100 * gflops / rate:5.1f} %"
                  f"{'   (target >= 50 %)' if name.startswith('square') else ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", default="auto", help='CPU threads, or "auto" (probe 1 vs all cores)')
    parser.add_argument("--min-run-time", type=float, default=2.0, help="seconds of measurement per small case")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the large case")
    parser.add_argument("--quick", action="store_true", help="skip the large data-dependent case")
    args = parser.parse_args(argv)
    threads = fastest_thread_count((1024, 512, 512)) if args.threads == "auto" else int(args.threads)
    torch.set_num_threads(threads)
    print("# assocmem.mlps.mlp construction timing, CPU, float64")
    for key, value in machine_info("cpu", threads, load_average=True).items():
        print(f"#   {key}: {value}")
    print("# wall-clock times: machine-dependent\n")
    start = time.perf_counter()
    case_whitened(args.min_run_time)
    print()
    case_data_dependent(64, 1024, 256, args.min_run_time, target_ms=100, label="2.")
    if not args.quick:
        print()
        rates = {
            "square 2048^3 GEMM (machine rate)": gemm_rate(2048, 2048, 2048, min_run_time=1.0),
            "the solve's GEMM (4096x128)@(128x2048)": gemm_rate(4096, 128, 2048, min_run_time=1.0),
            "the solve's GEMM (2048x4096)@(4096x128)": gemm_rate(2048, 4096, 128, min_run_time=1.0),
        }
        case_data_dependent(128, 4096, 2048, args.min_run_time, target_ms=None, rates=rates,
                            repeats=args.repeats, label="3.")
    print(f"\n# total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
