"""Tests for assocmem.mlps.hebbian_theory.presets: the chapter's sizes and the unknown-name error."""

from __future__ import annotations

import pytest

from assocmem.mlps.hebbian_theory import presets as ht


def test_presets_and_unknown_name():
    assert set(ht.PRESETS) >= {"quick", "full"}
    for p in ht.PRESETS.values():
        assert p.m <= p.F and p.m <= p.d * (p.d + 1) // 2
        assert p.precond_m <= p.precond_F and p.precond_m <= p.precond_d * (p.precond_d + 1) // 2
        assert p.welch_F > max(p.welch_ms)
    with pytest.raises(ValueError, match="quick"):
        ht.get_preset("nope")
