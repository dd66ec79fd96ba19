"""The claims registry: every checkable claim of the three sources, once, with a stable id.

Part of the shared floor (it imports no Part). The data ships with the package:

seed_000.yml   the claims of seed 000 (Part I: linear attention as a matrix memory)
seed_001.yml   the claims of seed 001 (Part II: *MLPs are Hebbians*)
seed_002.yml   the claims of seed 002 (Part III: the review of *Attention Approximates Sparse
               Distributed Memory*)
crosswalk.yml  every row of the chapters' reproduction tables, with the id of the claim it checks
               (or none, with the reason)

Modules
-------
registry   the :class:`Claim` record, :func:`load_claims`, :func:`get_claim` and
           :func:`load_crosswalk`, which validate the files as they read them
verdicts   :func:`verdicts`: one verdict per claim from the chapters' reproduction rows
           (:func:`assocmem.repro.collect`), and the conflicts between chapters

A reproduction row checks a claim by id with ``ReproductionTable.check(claim_id, ours=...)``
(:mod:`assocmem.repro`); the book's page of claims (``book/claims.md``, written by
``tools/booktools.py claims``) shows every claim with its verdict.

Every chapter with a reproduction table (chapters 01-03, 10-17, 30-37 and 50) is listed in the
crosswalk; a claim's ``checked_in`` names the chapters that check it today.
"""

from assocmem.claims import registry
from assocmem.claims.registry import (
    FIELDS,
    SOURCES,
    TEST_KINDS,
    Claim,
    CrosswalkRow,
    Erratum,
    get_claim,
    load_claims,
    load_crosswalk,
)
from assocmem.claims import verdicts as _verdicts_module
from assocmem.claims.verdicts import (
    CLAIM_VERDICTS,
    CONFLICT_KINDS,
    ROW_VERDICTS,
    ChapterVerdict,
    ClaimVerdict,
    Verdicts,
    row_claim_ids,
    verdicts,
)

__all__ = [*registry.__all__, *_verdicts_module.__all__]
