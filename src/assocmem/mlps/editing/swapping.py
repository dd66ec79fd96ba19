"""MLP swapping: edit a model's facts by building a new fact expert and swapping it in (seed 001, Sec. 5.2).

The edit of seed 001's Table 1: a fraction of the ``F`` facts (2, 5 or 10 %) is *altered*, their
authors replaced by a fresh permutation of the altered authors (:func:`edit_assignment`); the rest
is *preserved*. MLP swapping builds a fact expert for the **whole post-edit fact set**
(:func:`expert_fact_set`, :func:`build_fact_expert`) and swaps it into the frozen model
(:meth:`~assocmem.mlps.editing.model.EditingLM.with_fact_expert`); no Transformer weight changes.

The expert's facts. Keys are the *normalised* book embeddings and values the normalised author
embeddings of the model's frozen table (App. A.4.5: "the key embedding representing each book is
the normalized version of the corresponding atomic book token"); fact ``i`` maps book ``i`` to
author ``authors[i]``. The experts are the book's MLP memories, built by
:func:`assocmem.mlps.transformer.insertion.build_mlp`: the GD MLP trained with MSE (``gd_mse``, the
seed's base and Table 1) and the data-dependent Hebbian construction (``data_dependent``, width
1024 in the seed's Fig. 9), or any other method that function offers.

References
----------
Seed 001, Sec. 5.2 ("Fact Editing via MLP Swapping"), App. A.4.5 ("GD MLP Setup", "Evaluation",
"Baselines": 328, 819 and 1638 of 16,384 facts edited; Fig. 9, the data-dependent expert).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as Fn

from assocmem._checks import as_real, index_tensor, positive_int, seed_int, whole_numbers
from assocmem.mlps.editing.data import BookCorpus
from assocmem.mlps.editing.model import EditingLM
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp import FactMLP
from assocmem.mlps.transformer.insertion import build_mlp
from assocmem.devices import resolve_device

__all__ = ["EditAssignment", "edit_assignment", "num_edits", "expert_fact_set", "build_fact_expert", "mlp_swap"]


def num_edits(num_facts: int, fraction: float) -> int:
    """``round(fraction * F)``, at least 2 (a permutation needs two facts to move any).

    Seed 001's counts: 328, 819 and 1638 of 16,384 at 2, 5 and 10 %.

    Raises
    ------
    ValueError
        ``F < 2`` or ``fraction`` outside ``(0, 1]``.
    """
    F = positive_int("num_facts", num_facts)
    if F < 2:
        raise ValueError(f"editing needs at least 2 facts; got F = {F}")
    frac = as_real(fraction, "fraction", minimum=0.0, strict_min=True, maximum=1.0)
    return max(2, int(round(frac * F)))


class EditAssignment:
    """Which facts are altered and their new authors.

    Attributes
    ----------
    altered : torch.Tensor, shape ``(n,)``, int64
        Indices of the altered facts, ascending.
    preserved : torch.Tensor, shape ``(F - n,)``, int64
        The other facts, ascending.
    authors : torch.Tensor, shape ``(F,)``, int64
        The post-edit author of every fact (a permutation of ``0 .. F-1``): ``authors[i] = i``
        for preserved facts, ``authors[i] != i`` for altered ones.

    Parameters
    ----------
    altered : sequence of int or torch.Tensor, shape ``(n,)``
        Distinct fact indices in ``[0, F)``, ``n >= 1``, in any order (booleans, strings and
        non-integral floats are refused, never rounded).
    authors : sequence of int or torch.Tensor, shape ``(F,)``
        As the attribute; ``F >= 2``.

    Raises
    ------
    ValueError
        ``authors`` not a 1-D permutation of ``0 .. F-1`` with ``F >= 2``; ``altered`` empty,
        repeated, or outside ``[0, F)``; an altered fact that keeps its author or a preserved one
        that changes it (the post-edit facts would not be the ones the metrics score).
    """

    def __init__(self, altered: torch.Tensor, authors: torch.Tensor) -> None:
        a = whole_numbers(authors, "authors")
        F = a.size
        if a.ndim != 1 or F < 2:
            raise ValueError(f"authors must have shape (F,) with F >= 2; got shape {a.shape}")
        if not (np.sort(a) == np.arange(F)).all():
            raise ValueError(f"authors must be a permutation of 0 .. F-1 (one book per author); got "
                             f"{a.astype(np.int64).tolist()[:12]}")
        authors = torch.from_numpy(a.astype(np.int64))
        altered = index_tensor(altered, "altered", F, "F")
        if altered.numel() == 0 or altered.unique().numel() != altered.numel():
            raise ValueError(f"altered must hold distinct fact indices, at least one; got {altered.tolist()}")
        self.altered = altered.sort().values
        mask = torch.ones(F, dtype=torch.bool)
        mask[self.altered] = False
        self.preserved = torch.arange(F)[mask]
        if bool((authors[self.altered] == self.altered).any()) or \
                not torch.equal(authors[self.preserved], self.preserved):
            raise ValueError("every altered fact must change its author (authors[i] != i) and every other keep "
                             "it (authors[i] = i)")
        self.authors = authors

    @property
    def new_authors(self) -> torch.Tensor:
        """``authors[altered]``, shape ``(n,)``: the edited labels of the altered facts."""
        return self.authors[self.altered]


def edit_assignment(num_facts: int, fraction: float, seed: int = 0) -> EditAssignment:
    """Draw the altered facts and a fresh permutation of their authors with no fixed point.

    ``n = num_edits(F, fraction)`` facts are drawn uniformly without replacement; in a random
    order ``s_0 .. s_{n-1}`` of them, fact ``s_j`` gets the author of ``s_{j+1 mod n}``: a cyclic
    permutation, so every altered fact changes author and the post-edit facts still have one
    book per author.

    Parameters
    ----------
    num_facts : int
        ``F >= 2``.
    fraction : float
        In ``(0, 1]``.
    seed : int, default 0

    Returns
    -------
    EditAssignment

    Raises
    ------
    ValueError
        As :func:`num_edits`, or a non-integer seed.

    References
    ----------
    Seed 001, App. A.4.5, "Evaluation" (altered answers "replaced by a fresh permutation of
    author values").
    """
    n = num_edits(num_facts, fraction)
    F = int(num_facts)
    gen = torch.Generator().manual_seed(seed_int(seed))
    order = torch.randperm(F, generator=gen)[:n]  # the altered facts, in a random order
    authors = torch.arange(F)
    authors[order] = order.roll(-1)
    return EditAssignment(order, authors)


def expert_fact_set(embedding: torch.Tensor, corpus: BookCorpus,
                    authors: torch.Tensor | None = None) -> FactSet:
    """The fact set a fact expert stores: normalised book embeddings to normalised author embeddings.

    Parameters
    ----------
    embedding : torch.Tensor, shape ``(vocab_size, d)``
        The model's frozen table (``model.embedding``); computed in float64.
    corpus : BookCorpus
        Gives the id layout (``book_offset``, ``author_offset``, ``F``).
    authors : torch.Tensor, shape ``(F,)``, optional
        The author index of every book (:attr:`EditAssignment.authors` after an edit); the
        original ``0 .. F-1`` by default.

    Returns
    -------
    FactSet
        ``keys`` ``(F, d)``, ``values`` ``(F, d)`` (author ``j`` is value row ``j``), ``mapping =
        authors``; float64, unit rows.

    Raises
    ------
    ValueError
        An embedding whose shape does not fit the corpus, non-finite or zero rows, an author map
        of the wrong shape or range, or one holding booleans, strings or fractions.
    """
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    if not isinstance(embedding, torch.Tensor) or embedding.dim() != 2 or embedding.shape[0] != corpus.vocab_size:
        raise ValueError(f"embedding must be a (vocab_size, d) tensor with vocab_size = {corpus.vocab_size}")
    F = corpus.num_facts
    E = embedding.detach().to(torch.float64)
    books = E[corpus.book_offset: corpus.book_offset + F]
    vals = E[corpus.author_offset: corpus.author_offset + F]
    if not bool(torch.isfinite(books).all() and torch.isfinite(vals).all()):
        raise ValueError("embedding contains non-finite entries (nan or inf)")
    if bool((books.norm(dim=1) == 0).any() or (vals.norm(dim=1) == 0).any()):
        raise ValueError("a book or author embedding is zero and cannot be normalised")
    if authors is None:
        mapping = torch.arange(F)
    else:
        a = whole_numbers(authors, "authors")  # booleans, strings and fractions refused, never rounded
        if a.shape != (F,):
            raise ValueError(f"authors must have shape (F,) = ({F},); got {a.shape}")
        mapping = index_tensor(a, "authors", F, "F")
    return FactSet(Fn.normalize(books, dim=1), Fn.normalize(vals, dim=1), mapping)


def build_fact_expert(method: str, facts: FactSet, m: int, seed: int = 0, *, epochs: int = 10000,
                      lr: float = 1e-3, device: str | torch.device | None = None) -> FactMLP:
    """A frozen fact expert of hidden width ``m`` for ``facts`` (delegates to ``insertion.build_mlp``).

    Parameters
    ----------
    method : str
        One of :data:`assocmem.mlps.transformer.insertion.METHODS`; seed 001 uses ``"gd_mse"``
        (Table 1, ``m = 512``) and ``"data_dependent"`` (Fig. 9, ``m = 1024``).
    facts : FactSet
        :func:`expert_fact_set`.
    m : int
    seed : int, default 0
    epochs, lr : int, float
        GD only (seed 001: up to 10,000 epochs, learning rate ``1e-3``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        GD only.

    Returns
    -------
    assocmem.mlps.mlp.FactMLP
        Frozen; maps ``R^d -> R^d``.

    Raises
    ------
    ValueError
        As :func:`assocmem.mlps.transformer.insertion.build_mlp`.
    """
    device = resolve_device(device)
    return build_mlp(method, facts, m, seed, epochs=epochs, lr=lr, device=device)


def mlp_swap(model: EditingLM, corpus: BookCorpus, authors: torch.Tensor, method: str, m: int, seed: int = 0,
             *, epochs: int = 10000, lr: float = 1e-3, device: str | torch.device | None = None) -> EditingLM:
    """MLP swapping: the model with a new fact expert built for the post-edit facts ``authors``.

    Parameters
    ----------
    model : EditingLM
        The trained base model; unchanged (the result shares its trained modules).
    corpus : BookCorpus
    authors : torch.Tensor, shape ``(F,)``
        The post-edit author of every book (:attr:`EditAssignment.authors`).
    method, m, seed, epochs, lr, device
        As :func:`build_fact_expert`.

    Returns
    -------
    EditingLM
        ``model.with_fact_expert(new_expert)``.

    Raises
    ------
    ValueError
        ``model`` not an :class:`EditingLM`, or as :func:`expert_fact_set` and
        :func:`build_fact_expert`.

    References
    ----------
    Seed 001, Sec. 5.2 and App. A.4.5 ("constructs a replacement GD fact expert for the complete
    post-edit fact set and swaps that expert into the frozen Transformer").
    """
    device = resolve_device(device)
    if not isinstance(model, EditingLM):
        raise ValueError(f"model must be an EditingLM; got {type(model).__name__}")
    facts = expert_fact_set(model.embedding, corpus, authors)
    return model.with_fact_expert(build_fact_expert(method, facts, m, seed, epochs=epochs, lr=lr, device=device))
