"""The book-author language-modelling task of seed 001 (App. A.4.5): facts, templates, tokenizer.

A *fact* is a (book, author) pair, exactly one book per author. A training sentence is
``prefix book suffix author`` for a template ``(prefix, suffix)``, e.g. ``"The author of"``
``<book>`` ``"is"`` ``<author>``, and the model predicts every next token. Seed 001 took its
facts from the Goodreads Book Graph, which cannot be fetched here; :func:`generate_book_facts`
draws them offline with Faker (seeded), and :func:`load_book_facts_csv` reads a user-supplied CSV
of ``book,author`` rows (the Goodreads pairs, for instance) with the same one-book-per-author rule.

Templates. :data:`TRAIN_TEMPLATES` (16 prefix/suffix pairs: the paper's "16 rephrases per fact")
are the sentences the model trains on; the first, ``("The author of", "is")``, is the *edit
template*, the one prompt per fact from which the weight editors learn their residuals and on
which efficacy is measured; paraphrase accuracy is measured on the other training templates
(rephrasings the editors never see, :mod:`~assocmem.mlps.editing.evaluation`).
:data:`HELDOUT_TEMPLATES` are rephrasings the model never trains on; the chapter reports the
accuracy on them separately.

Tokens. Titles and authors are **atomic** tokens (App. A.4.5: "added to the model tokenizer as
atomic tokens"); the rest of the text is tokenized by a BPE tokenizer trained with the
``tokenizers`` library on the template text (all templates, so that held-out rephrasings are
covered by its merges; the *model* never trains on them). Sequences are assembled from pieces:
the template parts are encoded once by the trained BPE, and the book and author ids are inserted
directly, so no title or name can be matched inside template text. The vocabulary is laid out as
``[BPE tokens and <bos>, <eos>] [F book tokens] [F author tokens]``: book ``i`` has id
``book_offset + i`` and author ``j`` has id ``author_offset + j``.

References
----------
Seed 001, Sec. 5.2 and App. A.4.5 ("Language Modeling Task", the example templates
``("The author of", "is")`` and ``("Who is the author of", "? It is")``, 16 rephrases per fact,
atomic title and author tokens). M. Wan and J. McAuley, "Item recommendation on monotonic behavior
chains", RecSys 2018 (the Goodreads data the paper used).
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path

import torch
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the editing extra, not the core install
    from assocmem._typing import PathLike
    from collections.abc import Iterable, Sequence
    from faker import Faker
    from tokenizers import Tokenizer

#: The install command that brings this module's two optional dependencies.
EXTRA = 'pip install "assocmem[editing]"'


def _optional(name: str):
    """Import ``faker`` or ``tokenizers`` (the ``editing`` extra), or say how to install them."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"the book-author corpus (chapter 16) needs {name!r}, which the core "
                          f"install leaves out: {EXTRA}") from exc

from assocmem._checks import as_int, index_tensor, positive_int, seed_int

__all__ = [
    "TRAIN_TEMPLATES",
    "HELDOUT_TEMPLATES",
    "BookFacts",
    "generate_book_facts",
    "load_book_facts_csv",
    "write_book_facts_csv",
    "BookCorpus",
    "build_corpus",
]

#: The 16 training templates ``(prefix, suffix)``; index 0 is the edit template (seed 001, App. A.4.5,
#: gives the first two as examples; the other fourteen are this book's).
TRAIN_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("The author of", "is"),
    ("Who is the author of", "? It is"),
    ("The book", "was written by"),
    ("Who wrote", "? The answer is"),
    ("The novel", "is a work by"),
    ("Readers know that", "was written by"),
    ("The writer of", "is"),
    ("If you liked", ", thank its author,"),
    ("Everyone agrees that", "came from the pen of"),
    ("The title", "belongs to the author"),
    ("Behind the book", "stands the writer"),
    ("The story", "was told by"),
    ("Critics praised", "by its author,"),
    ("The person who wrote", "is"),
    ("In the library,", "is shelved under"),
    ("A first edition of", "was signed by"),
)

#: Held-out rephrasings, never trained on (reported apart from paraphrase accuracy, which uses the
#: training templates other than the edit template).
HELDOUT_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("Tell me who wrote", ". It was"),
    ("The creator of the book", "is the writer"),
    ("Ask any librarian: the author of", "is"),
    ("We owe the book", "to the author"),
)

BOS, EOS = "<bos>", "<eos>"


@dataclass(frozen=True)
class BookFacts:
    """``F`` book-author facts, one book per author: ``authors[i]`` wrote ``books[i]``.

    Attributes
    ----------
    books, authors : tuple of str
        Equal lengths ``F >= 1``; every title distinct, every author distinct, no string in both,
        none empty or with leading/trailing whitespace.

    Raises
    ------
    ValueError
        On construction, when the conditions above fail.
    """

    books: tuple[str, ...]
    authors: tuple[str, ...]

    def __post_init__(self) -> None:
        books, authors = tuple(self.books), tuple(self.authors)
        object.__setattr__(self, "books", books)
        object.__setattr__(self, "authors", authors)
        if len(books) == 0 or len(books) != len(authors):
            raise ValueError(f"need F >= 1 books and as many authors; got {len(books)} and {len(authors)}")
        for name, xs in (("books", books), ("authors", authors)):
            for x in xs:
                if not isinstance(x, str) or not x or x != x.strip():
                    raise ValueError(f"{name} must be non-empty strings without surrounding whitespace; got {x!r}")
            if len(set(xs)) != len(xs):
                raise ValueError(f"{name} must be distinct (one book per author)")
        both = set(books) & set(authors)
        if both:
            raise ValueError(f"a string is both a title and an author: {sorted(both)[0]!r}")

    def __len__(self) -> int:
        return len(self.books)


def _title(fake: Faker, rng: random.Random) -> str:
    noun = lambda: fake.word(part_of_speech="noun").capitalize()
    adj = lambda: fake.word(part_of_speech="adjective").capitalize()
    pattern = rng.randrange(5)
    if pattern == 0:
        return f"The {adj()} {noun()}"
    if pattern == 1:
        return f"The {noun()} of {noun()}"
    if pattern == 2:
        return f"{noun()} and {noun()}"
    if pattern == 3:
        return f"A {adj()} {noun()}"
    return f"{adj()} {noun()}s"


def generate_book_facts(num_facts: int, seed: int = 0) -> BookFacts:
    """``num_facts`` distinct (title, author) pairs drawn with Faker, deterministic for a seed.

    Authors are ``first_name last_name`` from Faker's ``en_US`` locale; titles follow five short
    patterns over Faker's English nouns and adjectives ("The Quiet Harbor", "The River of Salt",
    ...). Repeats are redrawn, so all titles and all authors are distinct.

    Parameters
    ----------
    num_facts : int
        ``F >= 1`` (the seed uses 16,384). Up to about ``10^5`` draws without exhausting the pools.
    seed : int, default 0

    Returns
    -------
    BookFacts

    Raises
    ------
    ValueError
        A non-positive or non-integer ``num_facts``, a non-integer seed, or pools exhausted
        (more facts than distinct titles or names can be drawn).

    References
    ----------
    Seed 001, App. A.4.5 (one book per author; the seed's pairs come from Goodreads).
    """
    F = positive_int("num_facts", num_facts)
    seed = seed_int(seed)
    fake = _optional("faker").Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    authors: dict[str, None] = {}
    books: dict[str, None] = {}
    for _ in range(50 * F + 1000):
        if len(authors) == F:
            break
        authors.setdefault(f"{fake.first_name()} {fake.last_name()}", None)
    for _ in range(50 * F + 1000):
        if len(books) == F:
            break
        t = _title(fake, rng)
        if t not in authors:
            books.setdefault(t, None)
    if len(authors) < F or len(books) < F:
        raise ValueError(f"could not draw {F} distinct titles and authors (got {len(books)}, {len(authors)})")
    return BookFacts(tuple(books), tuple(authors))


def write_book_facts_csv(facts: BookFacts, path: PathLike) -> Path:
    """Write ``facts`` as a CSV with header ``book,author``, one fact per row; returns the path.

    Raises
    ------
    ValueError
        ``facts`` not a :class:`BookFacts`.
    """
    if not isinstance(facts, BookFacts):
        raise ValueError(f"facts must be a BookFacts; got {type(facts).__name__}")
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["book", "author"])
        w.writerows(zip(facts.books, facts.authors))
    return path


def load_book_facts_csv(path: PathLike, max_facts: int | None = None) -> BookFacts:
    """Read (book, author) facts from a CSV file with a header naming ``book`` and ``author`` columns.

    Applies seed 001's selection, *exactly one book per author*: rows are read in file order,
    whitespace around fields is stripped, empty fields are skipped, and a row is dropped when its
    author already has a book, its title is already taken, or its title equals an author name
    (or the reverse). Other columns are ignored.

    Parameters
    ----------
    path : str or os.PathLike
        A UTF-8 CSV file (a leading byte-order mark, as spreadsheet programs write, is allowed).
    max_facts : int, optional
        Keep the first ``max_facts`` facts that pass the selection.

    Returns
    -------
    BookFacts

    Raises
    ------
    ValueError
        The file lacks a ``book`` or an ``author`` column, is a folder, is not UTF-8 text or not
        a readable CSV, no row survives the selection, or ``max_facts`` is not a positive
        integer.
    FileNotFoundError
        ``path`` does not exist.

    References
    ----------
    Seed 001, App. A.4.5 (Goodreads author-book relations, one book per author).
    """
    if max_facts is not None:
        max_facts = positive_int("max_facts", max_facts)
    books: list[str] = []
    authors: list[str] = []
    seen_b: set[str] = set()
    seen_a: set[str] = set()
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a CSV file")
    # utf-8-sig: a byte-order mark (what spreadsheet programs write) is read as such, not as part
    # of the first column's name
    with path.open(newline="", encoding="utf-8-sig") as fh:
        try:
            _read_facts(fh, path, max_facts, books, authors, seen_b, seen_a)
        except UnicodeDecodeError as err:
            raise ValueError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); save it as UTF-8") from None
        except csv.Error as err:
            raise ValueError(f"{path} is not a readable CSV file ({err})") from None
    if not books:
        raise ValueError(f"no (book, author) row of {path} survives the one-book-per-author selection")
    return BookFacts(tuple(books), tuple(authors))


def _read_facts(fh, path, max_facts, books, authors, seen_b, seen_a) -> None:
    """The selection of :func:`load_book_facts_csv`, appending to its lists and sets."""
    reader = csv.DictReader(fh)
    cols = {c.strip().lower(): c for c in (reader.fieldnames or []) if c is not None}
    if "book" not in cols or "author" not in cols:
        raise ValueError(f"the CSV {path} needs 'book' and 'author' columns; got {reader.fieldnames}")
    for row in reader:
        b = (row.get(cols["book"]) or "").strip()
        a = (row.get(cols["author"]) or "").strip()
        if not b or not a or b in seen_b or a in seen_a or b in seen_a or a in seen_b or a == b:
            continue
        books.append(b)
        authors.append(a)
        seen_b.add(b)
        seen_a.add(a)
        if max_facts is not None and len(books) == max_facts:
            break


def _train_tokenizer(texts: list[str], vocab_size: int) -> Tokenizer:
    tk = _optional("tokenizers")
    tok = tk.Tokenizer(tk.models.BPE(unk_token=None))
    tok.pre_tokenizer = tk.pre_tokenizers.Whitespace()
    trainer = tk.trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[BOS, EOS], show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


@dataclass(frozen=True, eq=False)
class BookCorpus:
    """The tokenized book-author task: facts, templates, tokenizer and the id layout.

    Build with :func:`build_corpus`. Attributes: ``facts`` (:class:`BookFacts`), ``train_templates``
    and ``heldout_templates`` (tuples of ``(prefix, suffix)``), ``tokenizer`` (a trained
    ``tokenizers.Tokenizer`` whose vocabulary includes every title and author as a special, atomic
    token), ``book_offset`` and ``author_offset`` (ids of book 0 and author 0), ``vocab_size``,
    ``bos_id``, ``eos_id``, and ``template_ids`` (the BPE ids of every template's prefix and
    suffix, train templates first).
    """

    facts: BookFacts
    train_templates: tuple[tuple[str, str], ...]
    heldout_templates: tuple[tuple[str, str], ...]
    tokenizer: Tokenizer
    book_offset: int
    author_offset: int
    vocab_size: int
    bos_id: int
    eos_id: int
    template_ids: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]

    @property
    def num_facts(self) -> int:
        """``F``."""
        return len(self.facts)

    @property
    def num_templates(self) -> int:
        """Training templates plus held-out ones; held-out template ``h`` has index ``len(train) + h``."""
        return len(self.template_ids)

    def sequences(self, template: int, facts: torch.Tensor | Sequence[int] | None = None,
                  authors: torch.Tensor | Sequence[int] | None = None) -> tuple[torch.Tensor, int]:
        """Token ids of ``<bos> prefix book suffix author <eos>`` for a batch of facts on one template.

        Parameters
        ----------
        template : int
            In ``[0, num_templates)``: training templates first, then the held-out ones.
        facts : torch.Tensor or sequence of int, shape ``(n,)``, optional
            Fact (book) indices in ``[0, F)``; all facts by default.
        authors : torch.Tensor or sequence of int, shape ``(n,)``, optional
            Author index per row (to build an *edited* fact set's sentences); by default the
            true author of each book, ``authors = facts``.

        Returns
        -------
        tokens : torch.Tensor, shape ``(n, T)``, int64
            One sequence per row (every row of one template has the same length ``T``).
        author_position : int
            The column of the author token; the logits that predict it are at
            ``author_position - 1`` (the position of the suffix's last token).

        Raises
        ------
        ValueError
            A template that is not an integer in range (a bool or a non-integral float is
            refused), fact or author indices that are not integers (booleans, strings and
            non-integral floats are refused, never rounded) or lie outside ``[0, F)``, or index
            arrays of different lengths.
        """
        try:
            t = as_int(template, "template")
        except ValueError:
            t = None
        if t is None or not 0 <= t < self.num_templates:
            raise ValueError(f"template must be an integer in [0, {self.num_templates}); got {template!r}")
        F = self.num_facts
        idx = torch.arange(F) if facts is None else index_tensor(facts, "facts", F, "F")
        auth = idx if authors is None else index_tensor(authors, "authors", F, "F")
        if auth.shape != idx.shape:
            raise ValueError(f"facts and authors must have the same length; got {idx.numel()} and {auth.numel()}")
        pre, suf = self.template_ids[t]
        n = idx.numel()
        cols = [torch.full((n, 1), self.bos_id), torch.tensor(pre, dtype=torch.int64).expand(n, -1),
                (self.book_offset + idx)[:, None], torch.tensor(suf, dtype=torch.int64).expand(n, -1),
                (self.author_offset + auth)[:, None], torch.full((n, 1), self.eos_id)]
        return torch.cat(cols, dim=1), 1 + len(pre) + 1 + len(suf)

    def decode(self, ids: torch.Tensor | Iterable[int]) -> str:
        """The text of a sequence of ids (titles and authors included)."""
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)


def build_corpus(facts: BookFacts, *, bpe_vocab_size: int = 256,
                 train_templates: Sequence[tuple[str, str]] = TRAIN_TEMPLATES,
                 heldout_templates: Sequence[tuple[str, str]] = HELDOUT_TEMPLATES) -> BookCorpus:
    """Train the non-fact tokenizer on the templates and add every title and author as an atomic token.

    Parameters
    ----------
    facts : BookFacts
    bpe_vocab_size : int, default 256
        Target size of the BPE vocabulary (``<bos>`` and ``<eos>`` included; BPE stops early when
        the template text has fewer merges to learn).
    train_templates, heldout_templates : sequence of (str, str)
        Non-empty prefix and suffix strings; at least one training template.

    Returns
    -------
    BookCorpus
        Vocabulary ``[BPE] [F books] [F authors]``; identical for identical input (BPE training
        is deterministic).

    Raises
    ------
    ValueError
        ``facts`` not a :class:`BookFacts`, a bad vocabulary size, empty or malformed templates,
        or a title or author that is already a token of the template text (``"It"``, say).
    """
    if not isinstance(facts, BookFacts):
        raise ValueError(f"facts must be a BookFacts; got {type(facts).__name__}")
    vocab = positive_int("bpe_vocab_size", bpe_vocab_size)
    train = tuple(tuple(t) for t in train_templates)
    held = tuple(tuple(t) for t in heldout_templates)
    if not train:
        raise ValueError("need at least one training template")
    for t in train + held:
        if len(t) != 2 or not all(isinstance(s, str) and s.strip() for s in t):
            raise ValueError(f"a template is a (prefix, suffix) pair of non-empty strings; got {t!r}")
    texts = [s for t in train + held for s in t]
    tok = _train_tokenizer(texts, vocab)
    template_ids = tuple((tuple(tok.encode(p).ids), tuple(tok.encode(s).ids)) for p, s in train + held)
    base = tok.get_vocab_size()
    clash = [x for x in facts.books + facts.authors if tok.token_to_id(x) is not None]
    if clash:
        raise ValueError(f"{clash[0]!r} is both a fact (title or author) and a token of the template text; "
                         "rename or drop that fact so that facts stay atomic tokens of their own")
    tok.add_special_tokens(list(facts.books) + list(facts.authors))
    F = len(facts)
    book_offset, author_offset = base, base + F
    ids = [tok.token_to_id(x) for x in facts.books + facts.authors]
    if ids != list(range(base, base + 2 * F)):  # the id layout every other module relies on
        raise ValueError("the tokenizer did not give titles and authors consecutive ids after the BPE vocabulary")
    return BookCorpus(facts, train, held, tok, book_offset, author_offset, tok.get_vocab_size(),
                      tok.token_to_id(BOS), tok.token_to_id(EOS), template_ids)
