"""Project the wall time of the ``paper`` capacity preset on the machine it runs on (issue 30, item 5).

    python benchmarks/gpu_projection.py --device cuda          # on a lent GPU (the intended use)
    python benchmarks/gpu_projection.py --device cpu --quick   # a dry run of the script here

The ``paper`` preset of the ``capacity`` sweep (:mod:`assocmem.mlps.capacity_sweeps`) searches every
method at ``d`` in {64, 90, 128} and every ``alpha = F / d^2`` of the seed, GD in three trainings
of 10,000 full-batch epochs per width. Running it to find out how long it takes is the thing to
avoid, so this script times pieces and multiplies:

1. **GD.** For every ``(d, F)`` of the grid it times ``train_mlps`` on a stack of two widths near
   the GD capacity the stored ``cpu`` runs suggest (``m = max(2, round(0.024 F))``: 4 at F = 128,
   12 at F = 512) for ``--epochs`` epochs, and projects one search as ``rounds x 10,000 x`` the
   time per epoch of a two-width stack, with ``rounds = ceil((2 log2 m + 3) / 2)`` (the gallop
   and the bisection, two widths a call; the stored ``cpu`` searches took 6-10 evaluations at
   m = 4-12), times three trainings and two geometries.
2. **Constructions.** One whitened capacity search (``capacity_search(..., "whitened")``, the
   whole search, timed) at each ``(d, F)`` up to ``--max-whitened-F``; the larger loads are
   extrapolated as ``F^3`` (the Gram matrix and its factor at ``m ~ F / 2``).
3. **Transformer.** One step of the SSFR Transformer's attention at the paper's scale (d = 128,
   F = 2048, batch 1280), as ``benchmarks/bench_transformer.py`` times it, times 4,000 steps.

Every projected figure is printed with the measurement it comes from; none is a measured whole
preset. The projection is rough (GD's capacity and the number of evaluations are guesses from
the ``cpu`` runs; a search's widths differ from the timed stack), good to a factor of about two.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from assocmem.benchmarking import machine_info
from assocmem.devices import resolve_device
from assocmem.mlps.capacity_sweeps import PAPER_ALPHAS, capacity_search, num_facts
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.gradient_descent import train_mlps


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def gd_epoch_seconds(d: int, F: int, epochs: int, device: torch.device) -> tuple[int, float]:
    """Seconds per epoch of a two-width ``train_mlps`` stack at the guessed GD capacity."""
    m = max(2, round(0.024 * F))
    facts = make_fact_set(F, d, tied=True, seed=0, device=device)
    train_mlps(facts, [m, m + 1], epochs=5, tol=0.0, device=device, dtype=torch.float32)  # warm-up
    _sync(device)
    t0 = time.perf_counter()
    train_mlps(facts, [m, m + 1], epochs=epochs, tol=0.0, device=device, dtype=torch.float32)
    _sync(device)
    return m, (time.perf_counter() - t0) / epochs


def whitened_search_seconds(d: int, F: int, device: torch.device) -> float:
    facts = make_fact_set(F, d, tied=True, seed=0, device=device)
    t0 = time.perf_counter()
    capacity_search(facts, "whitened", 0)
    _sync(device)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto", help='"cuda", "cpu" or "auto"')
    parser.add_argument("--epochs", type=int, default=200, help="GD epochs timed per (d, F)")
    parser.add_argument("--max-whitened-F", type=int, default=8192, help="largest F searched (whitened)")
    parser.add_argument("--quick", action="store_true", help="d = 64 only, F <= 1024, 20 epochs")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    dims, epochs = ((64,), 20) if args.quick else ((64, 90, 128), args.epochs)
    print(f"# projection of the paper capacity preset, {device}")
    for key, value in machine_info(device, None, load_average=True).items():
        print(f"#   {key}: {value}")
    start = time.perf_counter()
    gd_total = wh_total = 0.0
    wh_last: tuple[int, float] | None = None
    print("\n| d | F | GD m timed | s / epoch (2 widths) | GD search, projected | 3 trainings x 2 geometries |"
          " whitened search |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for d in dims:
        for alpha in PAPER_ALPHAS:
            F = num_facts(alpha, d)
            if args.quick and F > 1024:
                continue
            m, per_epoch = gd_epoch_seconds(d, F, epochs, device)
            rounds = math.ceil((2 * math.log2(m) + 3) / 2)
            search = rounds * 10000 * per_epoch
            gd_total += 6 * search
            if F <= args.max_whitened_F:
                wh = whitened_search_seconds(d, F, device)
                wh_last, wh_text = (F, wh), f"{wh:.2f} s (timed)"
            else:
                F0, t0 = wh_last
                wh = t0 * (F / F0) ** 3
                wh_text = f"{wh:.0f} s (from F = {F0} as F^3)"
            wh_total += 2 * wh
            print(f"| {d} | {F} | {m} | {per_epoch * 1e3:.2f} ms | {search / 60:.1f} min ({rounds} rounds) | "
                  f"{6 * search / 3600:.2f} h | {wh_text} |")
    print(f"\nGD, every point: {gd_total / 3600:.1f} h; whitened searches, both geometries: {wh_total / 3600:.2f} h "
          "(NTK, unwhitened and data-dependent are of the same order as whitened or less)")
    if not args.quick:
        from bench_transformer import SSFRTask, SSFRTransformer, TransformerConfig, embedding_table, steps_per_second

        task = SSFRTask(2048, 9, 9)
        model = SSFRTransformer(TransformerConfig(d=128, device=device), embedding_table(task, 128, seed=0),
                                task=task)
        sps, _ = steps_per_second(model, task, torch.arange(2048), 1280, 20, 2)
        print(f"Transformer attention, paper scale (d = 128, F = 2048, batch 1280): {sps:.2f} steps/s, "
              f"a 4,000-step training {4000 / sps / 60:.1f} min")
    print(f"\n# total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
