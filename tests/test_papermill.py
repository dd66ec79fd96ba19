"""The README's recipe for rerunning a chapter with other parameters works (issue 29, item 9).

    papermill notebooks/NN-*.ipynb out.ipynb -p PRESET ... -p SEED ...

One chapter is run through papermill with its preset and another random seed than the book's:
papermill must find the ``parameters`` cell and inject the values after it, the chapter must run
to the end, and every reproduction table must still reach its expected verdicts (``show()``
raises otherwise), so that the checks hold for other draws, not only for the book's seed.
"""

import os
from pathlib import Path

import nbformat
import pytest

papermill = pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "30-sdm-in-one-page.ipynb"  # among the fastest chapters (seconds)


def test_a_chapter_reruns_with_injected_parameters(tmp_path, monkeypatch):
    from assocmem.repro import collect

    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    out = tmp_path / CHAPTER.name
    papermill.execute_notebook(str(CHAPTER), str(out), parameters={"PRESET": "quick", "SEED": 1},
                               cwd=str(CHAPTER.parent), progress_bar=False, kernel_name="python3")
    nb = nbformat.read(out, as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    at = next(i for i, t in enumerate(tags) if "parameters" in t)
    injected = nb.cells[at + 1]
    assert "injected-parameters" in injected.metadata.get("tags", [])
    assert "SEED = 1" in injected.source and 'PRESET = "quick"' in injected.source
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors[0].get("ename")
    rows = collect([out])
    assert len(rows) > 5 and set(rows.verdict) <= {"reproduced", "differs", "not comparable", "sanity: ok"}
