"""Tests of assocmem.mlps.editing.data: the seeded fact set, CSV loader, tokenizer and sequences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assocmem.mlps.editing.data import (
    HELDOUT_TEMPLATES,
    TRAIN_TEMPLATES,
    BookFacts,
    build_corpus,
    generate_book_facts,
    load_book_facts_csv,
    write_book_facts_csv,
)

FACTS = generate_book_facts(200, seed=3)
CORPUS = build_corpus(FACTS)


def test_generator_is_deterministic_for_a_seed():
    again = generate_book_facts(200, seed=3)
    assert again == FACTS
    other = generate_book_facts(200, seed=4)
    assert other.books != FACTS.books and other.authors != FACTS.authors
    assert len(FACTS) == 200 and len(set(FACTS.books)) == 200 and len(set(FACTS.authors)) == 200
    assert not set(FACTS.books) & set(FACTS.authors)


def test_corpus_is_deterministic_for_a_seed():
    again = build_corpus(generate_book_facts(200, seed=3))
    assert again.tokenizer.to_str() == CORPUS.tokenizer.to_str()
    assert again.template_ids == CORPUS.template_ids
    for t in range(CORPUS.num_templates):
        assert torch.equal(again.sequences(t)[0], CORPUS.sequences(t)[0])


def test_templates():
    assert len(TRAIN_TEMPLATES) == 16  # seed 001: 16 rephrases per fact
    assert TRAIN_TEMPLATES[0] == ("The author of", "is")  # the seed's example, the edit template
    assert not set(TRAIN_TEMPLATES) & set(HELDOUT_TEMPLATES) and len(HELDOUT_TEMPLATES) >= 1
    assert CORPUS.num_templates == len(TRAIN_TEMPLATES) + len(HELDOUT_TEMPLATES)


def test_titles_and_authors_are_atomic_tokens():
    F = len(FACTS)
    assert CORPUS.vocab_size == CORPUS.book_offset + 2 * F
    assert CORPUS.author_offset == CORPUS.book_offset + F
    for i in (0, 17, F - 1):
        assert CORPUS.tokenizer.token_to_id(FACTS.books[i]) == CORPUS.book_offset + i
        assert CORPUS.tokenizer.token_to_id(FACTS.authors[i]) == CORPUS.author_offset + i
        # encoding the full sentence text keeps title and author whole
        text = f"The author of {FACTS.books[i]} is {FACTS.authors[i]}"
        ids = CORPUS.tokenizer.encode(text).ids
        assert CORPUS.book_offset + i in ids and CORPUS.author_offset + i in ids


def test_non_fact_text_is_bpe_tokenized():
    # the template text is split by the trained BPE (real subword tokens, not whitespace words)
    pre, suf = CORPUS.template_ids[1]  # "Who is the author of", "? It is"
    assert all(0 <= i < CORPUS.book_offset for i in pre + suf)
    assert CORPUS.tokenizer.decode(list(pre)) == "Who is the author of"
    assert len(suf) == 3  # "?", "It", "is": punctuation split by the pre-tokenizer
    small = build_corpus(FACTS, bpe_vocab_size=40)  # too few merges for whole words
    pre_small, _ = small.template_ids[0]
    assert len(pre_small) > len("The author of".split())
    assert small.tokenizer.decode(list(pre_small)).replace(" ", "") == "Theauthorof"


def test_sequences_layout_and_edits():
    tokens, pos = CORPUS.sequences(0, [5, 6], authors=[6, 5])
    assert tokens.dtype == torch.int64 and tokens.shape[0] == 2
    assert tokens[0, 0] == CORPUS.bos_id and tokens[0, -1] == CORPUS.eos_id
    assert tokens[0, pos] == CORPUS.author_offset + 6 and tokens[1, pos] == CORPUS.author_offset + 5
    pre, suf = CORPUS.template_ids[0]
    assert tokens[0, 1 + len(pre)] == CORPUS.book_offset + 5
    assert CORPUS.decode(tokens[0]) == f"<bos> The author of {FACTS.books[5]} is {FACTS.authors[6]} <eos>"
    full, pos_full = CORPUS.sequences(CORPUS.num_templates - 1)
    assert full.shape[0] == len(FACTS)
    assert torch.equal(full[:, pos_full] - CORPUS.author_offset, torch.arange(len(FACTS)))


def test_csv_round_trip_and_selection(tmp_path):
    path = write_book_facts_csv(FACTS, tmp_path / "facts.csv")
    assert load_book_facts_csv(path) == FACTS
    assert load_book_facts_csv(path, max_facts=10) == BookFacts(FACTS.books[:10], FACTS.authors[:10])
    # one book per author: a second book by the same author, a repeated title, blanks are dropped
    raw = tmp_path / "raw.csv"
    raw.write_text("id,Book,Author\n1, Dune ,Frank Herbert\n2,Children of Dune,Frank Herbert\n"
                   "3,Dune,Someone Else\n4,,Nobody\n5,Emma,Jane Austen\n", encoding="utf-8")
    got = load_book_facts_csv(raw)
    assert got.books == ("Dune", "Emma") and got.authors == ("Frank Herbert", "Jane Austen")


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("title,writer\nA,B\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'book' and 'author' columns"):
        load_book_facts_csv(bad)
    empty = tmp_path / "empty.csv"
    empty.write_text("book,author\n,\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no \\(book, author\\) row"):
        load_book_facts_csv(empty)
    with pytest.raises(ValueError, match="num_facts must be a positive integer"):
        generate_book_facts(0)
    with pytest.raises(ValueError, match="seed must be an integer"):
        generate_book_facts(3, seed=1.5)
    with pytest.raises(ValueError, match="distinct"):
        BookFacts(("A", "A"), ("x", "y"))
    with pytest.raises(ValueError, match="both a title and an author"):
        BookFacts(("A", "B"), ("B", "C"))
    with pytest.raises(ValueError, match="as many authors"):
        BookFacts(("A",), ())
    with pytest.raises(ValueError, match="both a fact .* and a token"):
        build_corpus(BookFacts(("It", "Emma"), ("Stephen King", "Jane Austen")))
    with pytest.raises(ValueError, match="template must be an integer"):
        CORPUS.sequences(CORPUS.num_templates)
    with pytest.raises(ValueError, match="facts must lie in"):
        CORPUS.sequences(0, [len(FACTS)])
    with pytest.raises(ValueError, match="same length"):
        CORPUS.sequences(0, [0, 1], [0])
    with pytest.raises(ValueError, match="prefix, suffix"):
        build_corpus(FACTS, train_templates=[("only one",)])


def test_corpus_is_identical_in_a_fresh_process():
    """BPE merges and Faker draws do not depend on the process (hash seeds, thread pools)."""
    import hashlib
    import subprocess
    import sys

    code = ("import hashlib; from assocmem.mlps.editing.data import build_corpus, generate_book_facts; "
            "c = build_corpus(generate_book_facts(200, seed=3), bpe_vocab_size=60); "
            "print(hashlib.sha256(c.tokenizer.to_str().encode()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    here = build_corpus(FACTS, bpe_vocab_size=60)
    assert out == hashlib.sha256(here.tokenizer.to_str().encode()).hexdigest()


@pytest.mark.parametrize("template, facts, authors, match", [
    (True, None, None, "template must be an integer"),
    (0.5, None, None, "template must be an integer"),
    ("0", None, None, "template must be an integer"),
    (0, [0.7], None, "facts must hold whole numbers; got 0.7"),
    (0, torch.tensor([1.5]), None, "facts must hold whole numbers"),
    (0, [True, False], None, "facts must hold integers; got a boolean"),
    (0, torch.tensor([True]), None, "facts must hold integers; got a boolean tensor"),
    (0, ["1"], None, "facts must hold integers"),
    (0, [0, 1], [0.5, 1], "authors must hold whole numbers"),
    (0, [0], [-1], r"authors must lie in \[0, "),
])
def test_indices_are_never_rounded(template, facts, authors, match):
    """A float or bool book, author or template index is refused, not rounded to an integer."""
    with pytest.raises(ValueError, match=match):
        CORPUS.sequences(template, facts, authors)


def test_integral_indices_of_any_integer_type_are_accepted():
    ref, pos = CORPUS.sequences(1, [0, 2])
    for facts in ([0.0, 2.0], np.array([0, 2], dtype=np.int32), torch.tensor([0, 2], dtype=torch.int16)):
        tokens, p = CORPUS.sequences(np.int64(1), facts)
        assert torch.equal(tokens, ref) and p == pos


def test_a_csv_with_a_byte_order_mark_or_another_encoding(tmp_path):
    """Spreadsheet programs write a byte-order mark: it is not part of the first column's name."""
    bom = tmp_path / "bom.csv"
    bom.write_bytes("book,author\nDune,Frank Herbert\nEmma,Jane Austen\n".encode("utf-8-sig"))
    got = load_book_facts_csv(bom)
    assert got.books == ("Dune", "Emma") and got.authors == ("Frank Herbert", "Jane Austen")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("book,author\nLes Misérables,Victor Hugo\n".encode("latin-1"))
    with pytest.raises(ValueError, match="is not UTF-8 text .* save it as UTF-8"):
        load_book_facts_csv(latin)
    with pytest.raises(ValueError, match="is a folder, not a CSV file"):
        load_book_facts_csv(tmp_path)
