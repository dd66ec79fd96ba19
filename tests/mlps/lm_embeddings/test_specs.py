"""The settings shared by the language-model sweeps (assocmem.mlps.lm_embeddings.specs): what is
accepted and the error for what is not."""

from __future__ import annotations

import pytest

from assocmem.mlps.editing_sweeps import FACT_EDITING_PRESETS
from assocmem.mlps.lm_embeddings import specs


@pytest.mark.parametrize("spec", ["editing_lm:cpu:gd_ce", "pairs/qwen3.npz"])
def test_pairs_specs_accepted(spec):
    assert specs.check_pairs_spec(spec) == spec


@pytest.mark.parametrize("spec", ["", "   ", None, 3, "editing_lm:cpu", "editing_lm::gd", "editing_lm:a:b:c"])
def test_pairs_specs_refused(spec):
    with pytest.raises(ValueError, match="pairs must be"):
        specs.check_pairs_spec(spec)


def test_trainings_limited_by_the_source():
    available = FACT_EDITING_PRESETS["cpu"].trainings
    specs.check_trainings("editing_lm:cpu:gd_ce", available)
    specs.check_trainings("pairs.npz", 1)
    with pytest.raises(ValueError, match="at most"):
        specs.check_trainings("editing_lm:cpu:gd_ce", available + 1)
    with pytest.raises(ValueError, match="must be 1"):
        specs.check_trainings("pairs.npz", 2)
    with pytest.raises(ValueError, match="trainings"):
        specs.check_trainings("pairs.npz", 0)


def test_grids():
    specs.check_grid("Fs", (2, 8, 64))
    for bad in [(), [2, 4], (4, 2), (2, 2), (1, 4), (2.5, 4)]:
        with pytest.raises(ValueError):
            specs.check_grid("Fs", bad)


def test_the_editing_prefix_is_the_spec_prefix():
    assert "editing_lm:cpu:gd_ce".startswith(specs.EDITING_PREFIX)
