"""Tests for assocmem.sdm.convergence.agreement: per-rule summaries, paired agreement between
rules, the worst level per pair, and settings kept apart.
"""

import pandas as pd
import pytest
import torch

from assocmem.sdm.convergence.agreement import agreement, agreement_summary, summarize
from assocmem.sdm.convergence.experiment import convergence_experiment


def test_summary_and_agreement(small_run):
    s = summarize(small_run)
    assert len(s) == 3 * 2 * 2 and (s["count"] == 16).all()
    assert (s.ci_low <= s.mean_cosine).all() and (s.mean_cosine <= s.ci_high).all()
    a = agreement(small_run)
    same = a[a.algorithm == "Binary_SDM_NeuronLimit"]  # r = 2^64 at n = 64: identical to Binary_SDM
    assert (same.mean_diff == 0).all() and (same.outcome_agreement == 1).all()
    worst = agreement_summary(a)
    row = worst[(worst.algorithm == "Cont_SDM_BFit_Attention") & (worst.d == 5)].iloc[0]
    assert row.max_abs_diff == pytest.approx(1 - (1 - 24 / 64), abs=1e-6) and row.level_at_max == 12
    assert row.min_agreement == 0.0
    pairs = agreement(small_run, reference=None)
    assert set(zip(pairs.algorithm, pairs.reference)) == {
        ("Binary_SDM_NeuronLimit", "Binary_SDM"), ("Cont_SDM_BFit_Attention", "Binary_SDM"),
        ("Cont_SDM_BFit_Attention", "Binary_SDM_NeuronLimit")}
    with pytest.raises(ValueError, match="not in the frame"):
        agreement(small_run, reference="Cont_SDM")
    with pytest.raises(ValueError, match="columns"):
        summarize(pd.DataFrame({"x": [1]}))


def test_settings_are_kept_apart_and_threads_restored():
    threads = torch.get_num_threads()
    kw = dict(radii=[15], levels=[0, 4], num_queries=8, show_progress=False, num_threads=1)
    a = convergence_experiment(64, 64, algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit"], **kw)
    b = convergence_experiment(64, 64, algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit"], r=10**5,
                               setting="n=64,r=1e5", **kw)
    assert torch.get_num_threads() == threads
    both = pd.concat([a, b], ignore_index=True)
    ag = agreement(both)
    assert set(ag.setting) == {"n=64", "n=64,r=1e5"} and (ag["count"] == 8).all()
    assert len(summarize(both)) == 2 * 2 * 2
