"""The book has one verdict per claim: every checked id is the registry's, and no two chapters
give a claim different verdicts, except the conflicts listed in :data:`KNOWN_CONFLICTS`.

The verdicts are those of :func:`assocmem.claims.verdicts` over the rows the executed chapters
store (summary tables included), with its rule for a conflict: chapters whose rows on a claim
combine to different verdicts (reproduced against differs, mixed against a definite verdict, not
comparable against a verdict), leaving out rows that declare a different test
(``different_test=``). A conflict is resolved in a chapter: by correcting the row that is wrong,
or, where the two chapters test different things, by saying so on the row with
``different_test="why"``.

:data:`KNOWN_CONFLICTS` lists the conflicts the chapters have today; the list may only shrink.
A new conflict fails the test, and so does a listed claim that no longer conflicts (remove it),
so that the list stays true.
"""

from pathlib import Path

import pytest

from assocmem.claims import load_claims, row_claim_ids, verdicts
from assocmem.repro import collect

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: Claims that chapters judge differently, each with the chapters and their verdicts; the set only
#: shrinks, and is empty since issue 27 resolved the last eight (the old C7 rows, 33 reproduced
#: against 37 differs, are the case tests/claims/test_verdicts.py keeps as a failing example).
KNOWN_CONFLICTS: set[str] = set()


@pytest.fixture(scope="module")
def rows():
    return collect(NOTEBOOKS, summaries=True)


@pytest.fixture(scope="module")
def result(rows):
    return verdicts(rows)


def test_every_checked_id_is_in_the_registry(rows):
    claims = load_claims()
    unknown = sorted({f"{ch}: {cid}" for ch, cid in zip(rows.chapter, rows.claim_id) if cid and cid not in claims})
    assert not unknown, f"chapters check ids the registry lacks (add the claim or fix the id): {unknown}"
    ids = row_claim_ids(rows)  # and every row without an id is in the crosswalk
    assert {i for i in ids if i} <= set(claims)


def _describe(v) -> str:
    return f"{v.id} ({v.conflict}): " + ", ".join(
        f"{c.chapter} {c.verdict}" for c in v.chapters if c.different_test is None)


def test_no_conflict_beyond_the_known_ones(result):
    new = [_describe(v) for v in result.conflicts if v.id not in KNOWN_CONFLICTS]
    assert not new, ("chapters give these claims different verdicts: correct the row that is wrong, or "
                     "say on it why its test differs (different_test=):\n  " + "\n  ".join(new))


def test_the_known_conflicts_are_still_conflicts(result):
    assert KNOWN_CONFLICTS <= set(load_claims()), sorted(KNOWN_CONFLICTS - set(load_claims()))
    resolved = sorted(KNOWN_CONFLICTS - {v.id for v in result.conflicts})
    assert not resolved, f"these claims no longer conflict: remove them from KNOWN_CONFLICTS: {resolved}"


def test_every_claim_has_one_verdict(result):
    assert list(result.claims) == list(load_claims())
    checked = {cid for cid, c in load_claims().items() if c.checked}
    assert {cid for cid, v in result.claims.items() if v.checked} == checked, \
        "the chapters that check a claim disagree with the registry's checked_in"


def test_the_contract_fails_on_the_old_c7_rows(tmp_path):
    """Before issue 27, chapter 33 judged C7 reproduced ("the band covers at least half of
    [beta_CD, beta_SNR]") and chapter 37 differs, on the same numbers: rebuilt here as stored
    rows, the check above must find that conflict."""
    import nbformat

    from assocmem.repro import ReproductionTable

    c7 = "002.c7.interpolates-cd-snr"
    old33 = ReproductionTable("Learnt band")
    old33.check(c7, ours="covers 0.62 of [10.1, 14.4]", passed=True, case="at least half covered")
    old37 = ReproductionTable("Trained-model claims")
    old37.check(c7, ours="62 % of the band above beta_SNR", passed=False, expect="differs",
                note="the band is not between the two optima")
    paths = []
    for name, table in (("33-old", old33), ("37-old", old37)):
        nb = nbformat.v4.new_notebook()
        data, meta = table.show()._repr_mimebundle_()
        nb.cells.append(nbformat.v4.new_code_cell("table.show()", outputs=[
            nbformat.v4.new_output("execute_result", data=data, metadata=meta, execution_count=1)]))
        paths.append(tmp_path / f"{name}.ipynb")
        nbformat.write(nb, paths[-1])
    found = verdicts(collect(paths, summaries=True))
    assert [v.id for v in found.conflicts] == [c7]
    assert found.claims[c7].conflict == "contradiction"
