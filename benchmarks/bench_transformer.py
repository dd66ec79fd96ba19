"""Training speed of the SSFR Transformer's attention (assocmem.mlps.transformer), CPU or CUDA.

    python benchmarks/bench_transformer.py                  # CPU, threads chosen by a GEMM probe
    python benchmarks/bench_transformer.py --threads 1 --steps 200
    python benchmarks/bench_transformer.py --device cuda    # the same figures on a GPU

One training step (:func:`assocmem.mlps.transformer.train_attention`) draws a batch of SSFR
sequences, runs the query-position forward (attention of the last position only, the frozen MLP,
the tied read-out over the F fact tokens), the cross-entropy, its backward and one AdamW update.
Prints, for the machine it runs on:

1. steps per second at the ``cpu``-scale settings of the Transformer sweeps
   (:mod:`assocmem.mlps.transformer_sweeps`: F = 512, J = V_J = 9, batch 256) for d = 32 and 64,
   in float32 (the library's default) and float64 (what the sweeps' presets use), with the
   identity MLP (attention pretraining) and with a bilinear MLP of width m = 64 inserted;
2. each step's achieved GFLOP/s, counted analytically (below), as a fraction of the machine's
   matmul rate measured in the same run: a square 512^3 GEMM in the step's dtype, and the step's
   largest product, the read-out ``(B, d) @ (d, F)``;
3. the projected wall time of one attention training of the ``paper`` preset (d = 128, F = 2048,
   J = V_J = 9, batch 1280, 4000 steps, float32), from steps timed at that scale.

Floating-point operations per sequence (a multiply-add counts 2; T = 2J + 2, m the MLP width):
forward ``4d^2`` (query and ``W_K^T q``) ``+ 4Td`` (scores, weighted sum) ``+ 6md`` (bilinear MLP)
``+ 2Fd`` (read-out); backward ``6d^2`` (gradients of ``W_Q``, ``W_K`` and ``q``) ``+ 4Td`` ``+ 6md``
(gradient to the MLP's input only: its weights are frozen) ``+ 2Fd``; so ``10d^2 + 8Td + 12md +
4Fd``. Softmax, norms, the loss, batch drawing and AdamW are not counted (they are O(T + d + F)
per sequence or O(d^2) per step), so the fraction is a lower bound on the GEMM efficiency.

Times are the fastest of several blocks (the minimum; other processes only ever add time); the
CPU-time rate (steps per second of this process's CPU time) is printed beside the wall-clock one.
Everything is machine-dependent; on a shared machine the load average printed with the machine
information says how much other work ran.
"""

from __future__ import annotations

import argparse
import time

import torch

from assocmem.benchmarking import fastest_thread_count, machine_info, time_call
from assocmem.devices import resolve_device
from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.transformer import (
    SSFRTask,
    SSFRTransformer,
    TrainConfig,
    TransformerConfig,
    embedding_table,
    fact_map,
    fact_set,
    train_attention,
)


def step_flops(d: int, T: int, m: int, F: int, batch: int) -> int:
    """Analytic FLOPs of one training step (see the module docstring)."""
    return batch * (10 * d * d + 8 * T * d + 12 * m * d + 4 * F * d)


def steps_per_second(model, task, mapping, batch: int, steps: int, blocks: int) -> tuple[float, float]:
    """``(wall, cpu)`` steps per second: the fastest of ``blocks`` timed runs of ``steps`` steps.

    ``cpu`` divides by this process's CPU time instead of the wall clock: on a shared machine
    with one thread it is the rate the step would have on a free core.
    """
    cfg = TrainConfig(steps=steps, batch_size=batch, lr=2e-4)
    train_attention(model, task, mapping, TrainConfig(steps=3, batch_size=batch))  # warm-up
    best, best_cpu = float("inf"), float("inf")
    for _ in range(blocks):
        if model.device.type == "cuda":
            torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.process_time()
        train_attention(model, task, mapping, cfg)  # reads the losses back: synchronised
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return steps / best, steps / best_cpu


def gemm_gflops(n: int, k: int, p: int, dtype: torch.dtype, device: torch.device) -> float:
    """GFLOP/s of an ``(n, k) @ (k, p)`` product in ``dtype`` on ``device`` (fastest block)."""
    a = torch.randn(n, k, dtype=dtype, device=device)
    b = torch.randn(k, p, dtype=dtype, device=device)
    seconds = time_call(lambda: a @ b, min_run_time=0.3, num_threads=torch.get_num_threads())
    return 2 * n * k * p / seconds / 1e9


def case(d: int, m: int, dtype: torch.dtype, device: torch.device, steps: int, blocks: int, F: int = 512,
         J: int = 9, batch: int = 256) -> None:
    task = SSFRTask(F, 9, J)
    E = embedding_table(task, d, seed=0)
    f = fact_map(task, 1)
    mlp = None if m == 0 else hebbian_mlp(fact_set(E, task, f), m, "full").to(dtype)
    model = SSFRTransformer(TransformerConfig(d=d, dtype=dtype, device=device), E, mlp, task=task)
    sps, cps = steps_per_second(model, task, f, batch, steps, blocks)
    flops = step_flops(d, task.seq_len, m, F, batch)
    rate = flops * sps / 1e9
    square = gemm_gflops(512, 512, 512, dtype, device)
    readout = gemm_gflops(batch, d, F, dtype, device)
    name = "identity MLP" if m == 0 else f"bilinear MLP m={m}"
    print(f"   d={d:3d} {str(dtype).replace('torch.', ''):7s} {name:18s} {sps:7.1f} steps/s "
          f"({cps:6.1f} per CPU-second)  "
          f"{flops / 1e6:6.1f} MFLOP/step  {rate:6.2f} GFLOP/s = {100 * rate / square:5.1f} % of a 512^3 GEMM "
          f"({square:.1f}), {100 * rate / readout:5.1f} % of the ({batch}x{d})@({d}x{F}) read-out GEMM "
          f"({readout:.1f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", default="auto", help='CPU threads, or "auto" (probe 1 vs all cores)')
    parser.add_argument("--device", default="cpu", help='"cpu", "cuda" or "auto"')
    parser.add_argument("--steps", type=int, default=100, help="training steps per timed block")
    parser.add_argument("--blocks", type=int, default=3, help="timed blocks per case (the fastest is kept)")
    parser.add_argument("--no-paper", action="store_true", help="skip the paper-scale projection")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    threads = fastest_thread_count((512, 512, 512)) if args.threads == "auto" else int(args.threads)
    torch.set_num_threads(threads)
    print(f"# assocmem SSFR Transformer training speed, {device}")
    for key, value in machine_info(device, threads, load_average=True).items():
        print(f"#   {key}: {value}")
    print("# wall-clock rates: machine-dependent\n")
    start = time.perf_counter()
    print("## 1-2. cpu-scale settings: F = 512, J = V_J = 9 (T = 20), batch 256")
    for d in (32, 64):
        for dtype in (torch.float32, torch.float64):
            for m in (0, 64):
                case(d, m, dtype, device, args.steps, args.blocks)
    if not args.no_paper:
        print("\n## 3. paper scale: d = 128, F = 2048, J = V_J = 9, batch 1280, float32, identity MLP")
        task = SSFRTask(2048, 9, 9)
        E = embedding_table(task, 128, seed=0)
        model = SSFRTransformer(TransformerConfig(d=128, device=device), E, task=task)
        few = 20 if device.type == "cuda" else 5
        sps, _ = steps_per_second(model, task, torch.arange(2048), 1280, few, 2)
        flops = step_flops(128, task.seq_len, 0, 2048, 1280)
        print(f"   {sps:.2f} steps/s ({flops / 1e9:.2f} GFLOP/step, {flops * sps / 1e9:.1f} GFLOP/s): one "
              f"4000-step attention training takes about {4000 / sps / 60:.1f} min here")
    print(f"\n# total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
