"""Tests of assocmem.mlps.lm_embeddings.pairs: validation, .npz round trip, the uniform and the
separated draws of a fact set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assocmem.mlps.lm_embeddings.pairs import EmbeddingPairs, load_pairs, sample_fact_set, save_pairs

F64 = torch.float64
GEN = torch.Generator().manual_seed(0)
X = torch.randn(200, 6, generator=GEN, dtype=F64) * 3.0
Y = torch.randn(200, 6, generator=GEN, dtype=F64) * 0.5
PAIRS = EmbeddingPairs(X, Y, "test")


def test_lengths_and_widths():
    p = EmbeddingPairs(X[:, :4], Y, "s")
    assert (len(p), p.d_in, p.d_out) == (200, 4, 6)


def test_round_trip_keeps_values_dtype_and_source(tmp_path):
    path = save_pairs(PAIRS, tmp_path / "pairs")
    assert path.name == "pairs.npz"
    back = load_pairs(path)
    assert back.source == "test" and back.inputs.dtype == F64
    assert torch.equal(back.inputs, X) and torch.equal(back.outputs, Y)
    assert len(load_pairs(path, max_pairs=7)) == 7


def test_uniform_draw_is_unit_identity_and_seeded():
    f = sample_fact_set(PAIRS, 50, seed=3)
    assert f.keys.shape == (50, 6) and torch.equal(f.mapping, torch.arange(50))
    torch.testing.assert_close(torch.linalg.vector_norm(f.keys, dim=1), torch.ones(50, dtype=F64))
    torch.testing.assert_close(torch.linalg.vector_norm(f.values, dim=1), torch.ones(50, dtype=F64))
    # each key's row and its value's row come from the same captured pair
    rows = [int(torch.argmax(torch.nn.functional.normalize(X, dim=1) @ k)) for k in f.keys]
    torch.testing.assert_close(f.values, torch.nn.functional.normalize(Y[rows], dim=1))
    assert len(set(rows)) == 50  # without replacement
    assert torch.equal(sample_fact_set(PAIRS, 50, seed=3).keys, f.keys)
    assert not torch.equal(sample_fact_set(PAIRS, 50, seed=4).keys, f.keys)


def test_separated_draw_keeps_cosines_under_the_limit():
    # near-duplicates: every pair appears twice, the copy turned by a tiny angle
    x = torch.cat([X, X + 1e-4 * torch.randn(200, 6, generator=GEN, dtype=F64)])
    y = torch.cat([Y, Y + 1e-4 * torch.randn(200, 6, generator=GEN, dtype=F64)])
    p = EmbeddingPairs(x, y, "dup")
    f = sample_fact_set(p, 150, seed=1, max_cosine=0.99)
    for z in (f.keys, f.values):
        c = z @ z.T
        c.fill_diagonal_(-2.0)
        assert float(c.max()) <= 0.99
    u = sample_fact_set(p, 150, seed=1)  # the uniform draw keeps near-duplicates
    c = u.keys @ u.keys.T
    c.fill_diagonal_(-2.0)
    assert float(c.max()) > 0.9999


def test_separated_draw_refuses_when_too_few_pairs_qualify():
    with pytest.raises(ValueError, match="cannot be drawn"):
        sample_fact_set(PAIRS, 150, seed=0, max_cosine=0.0)


@pytest.mark.parametrize("call, match", [
    (lambda: EmbeddingPairs(X, Y[:5], "s"), "same number of rows"),
    (lambda: EmbeddingPairs(X[0], Y[0], "s"), "2-D"),
    (lambda: EmbeddingPairs(X * np.nan, Y, "s"), "non-finite"),
    (lambda: EmbeddingPairs(X.float(), Y, "s"), "dtype"),
    (lambda: EmbeddingPairs(X, Y, ""), "source"),
    (lambda: EmbeddingPairs(X.half(), Y.half(), "s"), "float16|dtype"),
    (lambda: sample_fact_set(PAIRS, 201), "exceeds"),
    (lambda: sample_fact_set(PAIRS, 0), "num_facts"),
    (lambda: sample_fact_set(EmbeddingPairs(X[:, :4], Y, "s"), 5), "one width"),
    (lambda: sample_fact_set(EmbeddingPairs(torch.zeros(3, 6, dtype=F64), Y[:3], "s"), 2), "is zero"),
    (lambda: EmbeddingPairs(torch.ones(3, 6, dtype=torch.int64), Y[:3], "s"), "float32 or float64"),
    (lambda: EmbeddingPairs(X > 0, Y, "s"), "float32 or float64"),
    (lambda: sample_fact_set(PAIRS, 5, dtype=torch.int64), "dtype"),
    (lambda: sample_fact_set(PAIRS, 5, dtype="float64"), "dtype"),
    (lambda: sample_fact_set(PAIRS, 5, max_cosine=1.0), "max_cosine"),
    (lambda: sample_fact_set(PAIRS, 5, max_cosine=True), "max_cosine"),
    (lambda: sample_fact_set((X, Y), 5), "EmbeddingPairs"),
    (lambda: save_pairs((X, Y), "x"), "EmbeddingPairs"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_load_refuses_missing_file_and_missing_arrays(tmp_path):
    with pytest.raises(FileNotFoundError, match="no captured pairs"):
        load_pairs(tmp_path / "none.npz")
    np.savez(tmp_path / "bad.npz", inputs=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="lacks the arrays"):
        load_pairs(tmp_path / "bad.npz")


def test_extreme_but_finite_rows_keep_their_direction():
    x = torch.cat([X[:4] * 1e200, X[4:8] * 1e-200])
    f = sample_fact_set(EmbeddingPairs(x, Y[:8], "extreme"), 8, seed=0)
    torch.testing.assert_close(torch.linalg.vector_norm(f.keys, dim=1), torch.ones(8, dtype=F64))


def test_grad_tensors_are_stored_detached():
    p = EmbeddingPairs(X.clone().requires_grad_(), Y, "g")
    assert not p.inputs.requires_grad


def test_save_and_load_refuse_what_is_not_a_pairs_file(tmp_path):
    (tmp_path / "d.npz").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        save_pairs(PAIRS, tmp_path / "d.npz")
    assert save_pairs(PAIRS, tmp_path / "x.NPZ").name == "x.NPZ"
    (tmp_path / "t.npz").write_text("not numpy")
    with pytest.raises(ValueError, match="not a .npz"):
        load_pairs(tmp_path / "t.npz")
    np.savez(tmp_path / "s.npz", inputs=X.numpy(), outputs=Y.numpy(), source=np.array(["a", "b"]))
    with pytest.raises(ValueError, match="one string"):
        load_pairs(tmp_path / "s.npz")


def test_saving_to_an_existing_folder_is_refused_not_written_beside_it(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match="is a folder; give a file name"):
        save_pairs(PAIRS, tmp_path / "out")
    assert not (tmp_path / "out.npz").exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        save_pairs(PAIRS, tmp_path / "afile" / "p.npz")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_truncated_or_corrupt_file_gets_a_clear_error(tmp_path, damage):
    data = save_pairs(PAIRS, tmp_path / "p.npz").read_bytes()
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:  # one byte of the inputs' data changed: the zip's CRC no longer matches
        data = data[:400] + bytes([data[400] ^ 0xFF]) + data[401:]
    (tmp_path / "bad.npz").write_bytes(data)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        load_pairs(tmp_path / "bad.npz")
