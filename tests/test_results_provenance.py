"""The committed results in results/: each file names the clean commit that produced it, and every
trained result stores several trainings of each point.

A result file's provenance record (``<preset>.json``) names the git commit of the code that ran
and whether the tree was dirty. A dirty tree means the commit does not identify the code, so a
committed result must come from a clean, committed tree (``"dirty": false``) whose commit is in
this repository's history. The files not yet rerun from a clean tree are listed in
:data:`PENDING_CLEAN_RERUN`; the list may only shrink (a listed file that is clean fails, so the
list is kept true).

A trained result is a sample (README, "What is the same on every machine"): the sweeps in
:data:`TRAINED` store at least three trainings of every point (in the column it names:
``training``, or the older sweeps' ``rep`` and ``replicate``), and their reruns are checked
against that spread. :data:`ONE_TRAINING` lists the sweeps whose results come
out of training but that store one training per point (or replicates that are not yet a
``training`` column), until they are rerun with trainings.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from assocmem.compare.adapters import MEMORY_INFO

ROOT = Path(__file__).resolve().parents[1]
RESULTS = sorted((ROOT / "results").glob("*/*.json"))

#: sweep/preset files still produced from a dirty tree, to be rerun from a clean commit.
PENDING_CLEAN_RERUN: set[str] = {
}
#: Sweeps whose every point stores at least three trainings.
TRAINED = {"fact_editing": "training", "editing_moments": "training", "lm_pairs": "training", "lm_margin": "training",
           "lm_capacity": "training", "transformer_usability": "rep", "attention_noise": "rep",
           "transformer_capacity": "rep", "trained_recall": "replicate", "memory_table": "training",
           "capacity": "training", "capacity_more": "training", "lm_dedup": "training",
           "lm_block_capacity": "training", "lm_block_recipe": "rep"}
#: Sweeps that store trained and untrained results side by side: the rows whose trainings count
#: (memory_table: the memories that come out of training, the GD MLP; capacity and capacity_more:
#: the GD searches; the other memories are built once). A preset with no such rows (the quick
#: presets run no GD) has nothing to count.
TRAINED_ROWS = {"memory_table": lambda f: f[f["memory"].map(lambda m: MEMORY_INFO[m].trained)],
                "capacity": lambda f: f[f["method"] == "gd"],
                "capacity_more": lambda f: f[f["method"] == "gd"]}
#: Sweeps with trained results that do not yet store three trainings per point (none now; a
#: new trained sweep that stores one training is listed here until it is rerun).
ONE_TRAINING: set[str] = set()


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def test_there_are_committed_results():
    assert len(RESULTS) >= 20


@pytest.mark.parametrize("path", RESULTS, ids=_name)
def test_result_names_a_clean_commit(path):
    git = json.loads(path.read_text())["git"]
    assert re.fullmatch(r"[0-9a-f]{40}", git["commit"] or ""), f"{_name(path)}: no commit recorded"
    if _name(path) in PENDING_CLEAN_RERUN:
        assert git["dirty"] is True, f"{_name(path)} is clean now: remove it from PENDING_CLEAN_RERUN"
        return
    assert git["dirty"] is False, (f"{_name(path)} was produced from a dirty tree: rerun it from a clean "
                                   "commit (python -m assocmem sweep NAME --preset P in a clean checkout)")
    if _git("rev-parse", "--is-shallow-repository") == "false":
        assert _git("merge-base", "--is-ancestor", git["commit"], "HEAD") is not None, \
            f"{_name(path)}: commit {git['commit'][:12]} is not in this repository's history"


@pytest.mark.parametrize("path", [p for p in RESULTS if p.parent.name in TRAINED], ids=_name)
def test_trained_results_store_three_trainings_per_point(path):
    prov = json.loads(path.read_text())
    frame = pd.read_csv(path.with_suffix(".csv"))
    column = TRAINED[path.parent.name]
    assert column in frame.columns, f"{_name(path)}: no {column!r} column"
    frame = TRAINED_ROWS.get(path.parent.name, lambda f: f)(frame)
    if frame.empty:
        return
    keys = [c for c in prov["point_columns"] if c != column]
    counts = frame.groupby(keys)[column].nunique() if keys else pd.Series([frame[column].nunique()])
    assert counts.min() >= 3, f"{_name(path)}: a point with {counts.min()} training(s)"


def test_the_lists_name_real_sweeps():
    stored = {p.parent.name for p in RESULTS}
    assert set(TRAINED) <= stored and ONE_TRAINING <= stored and not set(TRAINED) & ONE_TRAINING
    assert {n.split("/")[0] for n in PENDING_CLEAN_RERUN} <= stored
