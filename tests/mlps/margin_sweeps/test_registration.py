"""The registered margin sweeps of chapter 12 (assocmem.mlps.margin_sweeps.registration): presets,
the seed's grids, and the committed results of the stored presets.
"""

import math

import numpy as np
import pytest

from assocmem.mlps import margin_sweeps as MS
from assocmem.sweeps import config_to_json, get_sweep, load_results, point_seed


@pytest.mark.parametrize("name", MS.MARGIN_SWEEPS)
def test_registered_with_quick_and_stored_preset(name):
    sweep = get_sweep(name)
    stored = MS.STORED_PRESET[name]
    assert {"quick", stored} <= set(sweep.presets)
    quick = sweep.grid(sweep.config("quick"))
    full = sweep.grid(sweep.config(stored))
    # the quick grid is a subset of the stored grid: the same points, hence the same seeds
    full_keys = {tuple(sorted(p.items())) for p in full}
    assert all(tuple(sorted(p.items())) in full_keys for p in quick)
    assert len(quick) < len(full)
    assert all(point_seed(sweep.config("quick"), p) == point_seed(sweep.config(stored), p) for p in quick)


@pytest.mark.parametrize(
    "name, vary, lo, hi",
    [("margin_f_exact", "F", 32, 2048), ("margin_f_sketch", "F", 32, 512), ("margin_m_sketch", "m", 64, 1024)],
)
def test_isotropic_paper_grid_is_the_seeds(name, vary, lo, hi):
    cfg = get_sweep(name).config("paper")
    grid = get_sweep(name).grid(cfg)
    values = sorted({p[vary] for p in grid})
    assert len(grid) == 150 and len(values) == 30  # 30 log-spaced points, 5 seeds (App. A.3.2)
    assert values[0] == lo and values[-1] == hi
    ratios = np.diff(np.log(values))
    assert np.allclose(ratios, math.log(hi / lo) / 29, atol=0.05)


def test_spike_and_noisy_paper_grids():
    for on, beta_max in (("keys", 5.0), ("values", 10.0), ("both", 3.35)):
        grid = get_sweep(f"margin_spike_{on}").grid(get_sweep(f"margin_spike_{on}").config("paper"))
        betas = sorted({p["beta"] for p in grid})
        assert betas[0] == 0.0 and betas[-1] == beta_max and len(betas) == 30
    grid = get_sweep("margin_noisy").grid(get_sweep("margin_noisy").config("paper"))
    eps = sorted({p["eps"] for p in grid})
    assert len(grid) == 45 and len(eps) == 15 and eps[0] == 0.01 and eps[-1] == 2.0  # App. A.4.2


@pytest.mark.parametrize("name", MS.MARGIN_SWEEPS)
def test_committed_results_match_the_presets(name):
    sweep = get_sweep(name)
    preset = MS.STORED_PRESET[name]
    cfg = sweep.config(preset)
    try:
        frame = load_results(name, preset, config=config_to_json(cfg))
    except FileNotFoundError:
        pytest.skip(f"results/{name}/{preset}.csv not committed")
    assert len(frame) == len(sweep.grid(cfg))
    assert np.isfinite(frame["gamma_min" if name != "margin_bits" else "gamma_kernel"]).all()
