"""Tests for assocmem.claims.verdicts: one verdict per claim, and the conflicts between chapters.

The rows are those :func:`assocmem.repro.collect` returns; most tests write them as a small
DataFrame, and one builds two executed notebooks with ``ReproductionTable.check`` and reads them
back, as the book's contract test does with the real chapters.
"""

import nbformat
import pandas as pd
import pytest

from assocmem.claims import CLAIM_VERDICTS, CONFLICT_KINDS, load_claims, row_claim_ids, verdicts
from assocmem.repro import ReproductionTable, collect

A = "000.sec2.score-plus-one"
B = "000.sec1.separate-maps"
COLUMNS = ["chapter", "claim", "kind", "verdict", "anchor", "claim_id", "different_test"]


def _rows(*rows) -> pd.DataFrame:
    """Rows (chapter, claim id, verdict[, different test]) as collect() returns them."""
    out = []
    for i, (chapter, cid, verdict, *why) in enumerate(rows):
        kind = "not comparable" if verdict == "not comparable" else "claim"
        out.append([chapter, f"row {i}", kind, verdict, f"repro-t-{i}", cid, why[0] if why else ""])
    return pd.DataFrame(out, columns=COLUMNS)


def test_rows_of_one_chapter_combine_and_unchecked_claims_say_so():
    v = verdicts(_rows(("01-a", A, "reproduced"), ("01-a", A, "differs"),
                       ("01-a", B, "differs"), ("01-a", B, "not comparable")))
    assert v.claims[A].verdict == "mixed" and v.claims[B].verdict == "differs"
    assert v.claims[A].chapters[0].anchors == ("repro-t-0", "repro-t-1")
    assert not v.conflicts
    others = [c for cid, c in v.claims.items() if cid not in (A, B)]
    assert others and all(c.verdict == "unchecked" and not c.checked for c in others)
    assert list(v.claims) == list(load_claims())
    only_nc = verdicts(_rows(("01-a", A, "not comparable"), ("02-b", A, "not comparable")))
    assert only_nc.claims[A].verdict == "not comparable" and not only_nc.conflicts


@pytest.mark.parametrize("first, second, kind", [
    ("reproduced", "differs", "contradiction"),
    ("mixed", "reproduced", "partial"),
    ("differs", "mixed", "partial"),
    ("reproduced", "not comparable", "comparability"),
    ("not comparable", "mixed", "comparability"),
])
def test_chapters_that_disagree_conflict(first, second, kind):
    v = verdicts(_rows(("01-a", A, first), ("02-b", A, second), ("02-b", B, "reproduced")))
    assert [c.id for c in v.conflicts] == [A] and v.claims[A].verdict == "conflict"
    assert v.claims[A].conflict == kind and kind in CONFLICT_KINDS
    assert [(c.chapter, c.verdict) for c in v.claims[A].chapters] == [("01-a", first), ("02-b", second)]
    assert v.claims[B].conflict is None


def test_a_contradiction_outranks_the_other_kinds():
    v = verdicts(_rows(("01-a", A, "reproduced"), ("02-b", A, "differs"), ("03-c", A, "mixed"),
                       ("04-d", A, "not comparable")))
    assert v.claims[A].conflict == "contradiction"


def test_a_different_test_is_not_set_against_the_others():
    v = verdicts(_rows(("01-a", A, "reproduced"), ("02-b", A, "differs", "another grid"),
                       ("02-b", A, "reproduced")))
    assert not v.conflicts and v.claims[A].verdict == "reproduced"
    assert [(c.chapter, c.verdict, c.different_test) for c in v.claims[A].chapters] == [
        ("01-a", "reproduced", None), ("02-b", "differs", "another grid"), ("02-b", "reproduced", None)]
    only = verdicts(_rows(("01-a", A, "reproduced", "why 1"), ("02-b", A, "differs", "why 2")))
    assert not only.conflicts and only.claims[A].verdict == "mixed"


def test_counts_per_source_add_up():
    v = verdicts(_rows(("01-a", A, "reproduced"), ("02-b", A, "differs"), ("02-b", B, "reproduced")))
    counts = v.counts()
    assert list(counts.index) == ["000", "001", "002", "total"]
    assert list(counts.columns) == ["claims", "checked", "unchecked", *CLAIM_VERDICTS[:-1]]
    assert counts.loc["000", "checked"] == 2 and counts.loc["000", "conflict"] == 1
    assert counts.loc["000", "reproduced"] == 1 and counts.loc["001", "checked"] == 0
    assert counts.loc["total", "claims"] == len(load_claims())
    body = counts.loc[["000", "001", "002"]]
    assert (body["checked"] + body["unchecked"] == body["claims"]).all()
    assert (body[list(CLAIM_VERDICTS[:-1])].sum(axis=1) == body["checked"]).all()


def _registry_with_crosswalk(tmp_path, crosswalk: str):
    """A copy of the shipped registry whose crosswalk is ``crosswalk`` (YAML text)."""
    import shutil
    from importlib import resources

    shipped = resources.files("assocmem.claims")
    for name in ("seed_000.yml", "seed_001.yml", "seed_002.yml"):
        shutil.copy(shipped / name, tmp_path / name)
    (tmp_path / "crosswalk.yml").write_text(crosswalk)
    return tmp_path


def test_rows_by_add_are_found_in_the_crosswalk_and_sanity_rows_judge_nothing(tmp_path):
    # a crosswalk of rows made by add() before the chapters made them by id
    directory = _registry_with_crosswalk(tmp_path, """chapters:
  01-attention-to-matrix:
  - row: 'one vector: the score matrix is symmetric'
    id: 000.sec1.shared-vector-symmetric
  - row: exact zeros exactly where one chunk covers the sequence (C >= T)
    id: null
    reason: a sanity check of our own code (exact zeros of the chunked form)
""")
    rows = pd.DataFrame([
        ["01-attention-to-matrix", "one vector: the score matrix is symmetric", "claim", "reproduced", "r-1", "", ""],
        ["01-attention-to-matrix", "a check of our code", "sanity", "sanity: ok", "r-2", "", ""],
        ["01-attention-to-matrix", "exact zeros exactly where one chunk covers the sequence (C >= T)", "claim",
         "reproduced", "r-3", "", ""],
    ], columns=COLUMNS)
    assert row_claim_ids(rows, directory) == ["000.sec1.shared-vector-symmetric", None, None]
    old = rows.drop(columns=["claim_id", "different_test"])  # notebooks stored before the ids
    assert row_claim_ids(old, directory) == row_claim_ids(rows, directory)
    judged = verdicts(old, directory).claims["000.sec1.shared-vector-symmetric"]
    assert judged.verdict == "reproduced"


def test_what_the_registry_cannot_place_is_refused():
    with pytest.raises(KeyError, match="close ids: 000.sec2.score-plus-one"):
        verdicts(_rows(("01-a", "000.sec2.score-plus-on", "reproduced")))
    unlisted = _rows(("01-a", "", "reproduced"))
    with pytest.raises(ValueError, match=r"(?s)the crosswalk does not list.*01-a: row 0"):
        verdicts(unlisted)
    with pytest.raises(ValueError, match="verdict 'invalid'"):
        verdicts(_rows(("01-a", A, "invalid")))
    with pytest.raises(ValueError, match=r"missing columns \['anchor'\]"):
        verdicts(_rows(("01-a", A, "reproduced")).drop(columns=["anchor"]))
    with pytest.raises(ValueError, match=r"missing columns \['kind'\]"):
        row_claim_ids(_rows(("01-a", A, "reproduced")).drop(columns=["kind"]))


def _notebook(path, tables):
    nb = nbformat.v4.new_notebook()
    for t in tables:
        data, meta = t.show()._repr_mimebundle_()
        out = nbformat.v4.new_output("execute_result", data=data, metadata=meta, execution_count=1)
        nb.cells.append(nbformat.v4.new_code_cell("table.show()", outputs=[out]))
    nbformat.write(nb, path)
    return path


def test_the_detector_finds_a_conflict_between_executed_chapters_and_respects_a_different_test(tmp_path):
    """Two chapters check one claim by id and disagree: a conflict. Declaring the second test
    different (``different_test=``) removes it, and the row still shows its own verdict."""
    first = ReproductionTable("First")
    first.check(A, ours=2.718, tol=0.01)
    second = ReproductionTable("Second")
    second.check(A, ours=3.5, tol=0.01, expect="differs", note="a softer softmax")
    rows = collect([_notebook(tmp_path / "01-first.ipynb", [first]),
                    _notebook(tmp_path / "02-second.ipynb", [second])])
    found = verdicts(rows)
    assert [c.id for c in found.conflicts] == [A] and found.claims[A].conflict == "contradiction"

    declared = ReproductionTable("Second")
    declared.check(A, ours=3.5, tol=0.01, expect="differs", note="a softer softmax",
                   different_test="the score gap is 1.25, not 1")
    rows = collect([tmp_path / "01-first.ipynb", _notebook(tmp_path / "02-second.ipynb", [declared])])
    found = verdicts(rows)
    assert not found.conflicts and found.claims[A].verdict == "reproduced"
    assert found.claims[A].chapters[1].different_test == "the score gap is 1.25, not 1"
