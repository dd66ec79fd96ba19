"""Benchmark pair of the whitened capacity search with nested draws, for ``bench_ratios.py``.

``whitened_nested_search_pair(rounds)`` returns a :class:`bench_ratios.Pair` (to be merged into
``bench_ratios.py`` beside ``capacity_pair``), at the ``cpu`` preset point ``d = 64``,
``alpha = 1/4`` (``F = 1024``, isotropic, the whitened method's weights seed):

=======================  ==========================================================================
fast                     ``whitened_nested_search`` (gallop, bisection, two verification widths;
                         features, Gram matrix and ``Psi^T C`` of the largest width reused)
reference                ``whitened_nested_search_reference``: the same search path, every width
                         built from scratch by ``hebbian_mlp_reference(..., draw="nested")``
                         (whole Gram matrix, ``torch.linalg.solve``) and scored by ``accuracy``
extra: fast, no reuse    the same search path, every width built from scratch by the fast
                         ``hebbian_mlp(..., "full", draw="nested", return_features=True)`` and
                         scored by ``accuracy_from_outputs`` (float64, as the other two score):
                         what the reuse alone saves
=======================  ==========================================================================

All three must find the same width: asserted when the pair is built (and the fast and reference
searches must evaluate the same widths with the same accuracies); every timed no-reuse call checks
its width against the fast one, and ``bench_ratios.main`` checks ``extra_check`` (fast against
reference) after the rounds, as for ``capacity_pair``.

    python benchmarks/_pairs_whitened.py [rounds]     # a short stand-alone run, 1 thread
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_ratios import Pair  # noqa: E402


def whitened_nested_search_pair(rounds: int) -> Pair:
    from assocmem.benchmarking import load_capped_threads
    from assocmem.mlps.facts import FactSet
    from assocmem.mlps.capacity_sweeps import CAPACITY_PRESETS, capacity_fact_set, num_facts
    from assocmem.mlps.margins.decoding import accuracy_from_outputs
    from assocmem.mlps.mlp import hebbian_mlp
    from assocmem.mlps.mlp.whitened_search import whitened_nested_search, whitened_nested_search_reference
    from assocmem.sweeps import point_seed, smallest_width

    cfg = CAPACITY_PRESETS["cpu"]
    d, alpha = 64, 1 / 4
    F = num_facts(alpha, d)
    facts = capacity_fact_set(cfg, d, F, "isotropic")
    f64 = FactSet(facts.keys.double(), facts.values.double(), facts.mapping)  # what the searches score
    seed = point_seed(cfg, {"method": "whitened", "geometry": "isotropic", "d": d, "alpha": alpha, "F": F})
    found = {}

    def fast():
        res = whitened_nested_search(facts, seed, lo=cfg.lo, hi=cfg.hi, verify=cfg.verify)
        found["fast"] = res.m
        return res

    def reference():
        res = whitened_nested_search_reference(facts, seed, lo=cfg.lo, hi=cfg.hi, verify=cfg.verify)
        found["ref"] = res.m
        return res

    def scratch_accuracy(m: int) -> float:
        with load_capped_threads():
            model, Phi = hebbian_mlp(f64, m, "full", seed=seed, draw="nested", return_features=True)
            return accuracy_from_outputs(Phi @ model.B.T, f64)

    def no_reuse():
        res = smallest_width(scratch_accuracy, lo=cfg.lo, hi=cfg.hi, verify=cfg.verify)
        assert res.m == found.get("fast", res.m), (res.m, found)
        return res

    a, b, c = fast(), reference(), no_reuse()
    assert a.m == b.m == c.m, f"widths differ: fast {a.m}, reference {b.m}, no reuse {c.m}"
    assert a.evaluations == b.evaluations, "fast and reference searches took different paths"
    pair = Pair("whitened nested search", fast, reference, rounds, warmup=False,
                extra={"fast builds, no reuse": no_reuse})
    pair.extra_check = found
    return pair


if __name__ == "__main__":
    import torch

    from bench_ratios import fmt_time, run_pair

    torch.set_num_threads(1)
    pair = whitened_nested_search_pair(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    res = run_pair(pair)
    scratch = fmt_time(res["extra:fast builds, no reuse"])
    print(f"{pair.name}: fast {fmt_time(res['fast'])}, ref {fmt_time(res['ref'])}, ratio {res['ratio']:.1f}x "
          f"[{res['ratio_lo']:.1f}-{res['ratio_hi']:.1f}]; no reuse {scratch}"
          f"; m = {pair.extra_check['fast']}; others {100 * (res['others_share'] or 0):.0f} % CPU, "
          f"load {res['loadavg_start']:.2f}->{res['loadavg_end']:.2f}")
