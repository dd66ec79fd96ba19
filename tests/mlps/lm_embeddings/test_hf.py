"""Tests of the Hugging Face capture (:mod:`assocmem.mlps.lm_embeddings.hf`) on a tiny random Qwen3.

The model is built from a ``transformers.Qwen3Config`` (no download): vocabulary 97, hidden size
32, 4 blocks, 2 query heads sharing 1 key/value head of width 16, MLP width 64; seeded and cast to
float64. Tolerances: the MLP is float64 throughout, so ``mlp(x)`` against the hooked ``y`` is
float64 rounding only (the matmuls may block differently on a (B, T, d) and an (n, d) input).
The independent route to ``x`` agrees to float32 level only, because ``transformers`` computes
its RMSNorms and the RoPE angles in float32 even in a float64 model (``Qwen3RMSNorm.forward``,
``Qwen3RotaryEmbedding.forward``); entries of ``x`` are O(1) (RMSNorm with unit weights), so
``1e-5`` is a few float32 ulps times the depth of the computation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

from assocmem.mlps.lm_embeddings import hf
from assocmem.mlps.lm_embeddings.pairs import EmbeddingPairs

F64 = torch.float64
V = 97
CONFIG = dict(vocab_size=V, hidden_size=32, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
              head_dim=16, intermediate_size=64, max_position_embeddings=64)


def _tiny_qwen3(seed: int = 0, dtype=F64) -> Qwen3ForCausalLM:
    torch.manual_seed(seed)
    return Qwen3ForCausalLM(Qwen3Config(**CONFIG)).to(dtype).eval()


@pytest.fixture(scope="module")
def model():
    return _tiny_qwen3()


def _ids(b: int, t: int, seed: int) -> torch.Tensor:
    return torch.randint(0, V, (b, t), generator=torch.Generator().manual_seed(seed))


def _hooks(model, layer):
    block = model.model.layers[layer]
    return len(block.post_attention_layernorm._forward_hooks) + len(block.mlp._forward_hooks)


# --- layers -------------------------------------------------------------------------------------

def test_decoder_layers_and_mid_layer(model):
    assert hf.decoder_layers(model) is model.model.layers
    assert hf.decoder_layers(model.model) is model.model.layers  # the base model too
    assert hf.mid_layer(model) == 2  # 4 // 2; Qwen3-0.6B's 28 blocks give 14


# --- what is captured ---------------------------------------------------------------------------

def test_captured_y_is_the_mlp_of_the_captured_x(model):
    pairs = hf.capture_mlp_pairs(model, [_ids(2, 8, 1), _ids(3, 5, 2)], dtype=F64)
    assert isinstance(pairs, EmbeddingPairs)
    assert pairs.inputs.shape == pairs.outputs.shape == (31, 32)
    assert pairs.inputs.device.type == "cpu"
    with torch.no_grad():
        again = model.model.layers[2].mlp(pairs.inputs)
    torch.testing.assert_close(pairs.outputs, again, rtol=1e-12, atol=1e-14)
    # not a vacuous check: another block's MLP gives other outputs
    with torch.no_grad():
        other = model.model.layers[1].mlp(pairs.inputs)
    assert (other - pairs.outputs).abs().max() > 1e-3


def _rms(z, weight, eps):
    return weight * z / torch.sqrt(z.pow(2).mean(-1, keepdim=True) + eps)


def _rotate(z):
    half = z.shape[-1] // 2
    return torch.cat([-z[..., half:], z[..., :half]], dim=-1)


def _reference_block(model, ids, layer):
    """Block ``layer`` recomputed by hand from its input (``output_hidden_states``, no hooks).

    Returns ``(x, r, out)``: the post-attention RMSNorm output, the residual stream after attention,
    and the model's own output of the block (``hidden_states[layer + 1]``).
    """
    cfg = model.config
    with torch.no_grad():
        hs = model(input_ids=ids, output_hidden_states=True, use_cache=False).hidden_states
        h = hs[layer].to(F64)  # hidden_states[0] is the embedding, [l] the input of block l
        blk, att = model.model.layers[layer], model.model.layers[layer].self_attn
        eps = cfg.rms_norm_eps
        a = _rms(h, blk.input_layernorm.weight, eps)
        B, T, _ = a.shape
        H, Hk, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        q = _rms(att.q_proj(a).view(B, T, H, hd), att.q_norm.weight, eps)
        k = _rms(att.k_proj(a).view(B, T, Hk, hd), att.k_norm.weight, eps)
        v = att.v_proj(a).view(B, T, Hk, hd)
        params = getattr(cfg, "rope_parameters", None) or {}
        theta = params.get("rope_theta", getattr(cfg, "rope_theta", None))
        inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=F64) / hd)
        ang = torch.arange(T, dtype=F64)[:, None] * inv[None, :]
        cos = torch.cat([ang.cos(), ang.cos()], -1)[:, None, :]  # (T, 1, hd)
        sin = torch.cat([ang.sin(), ang.sin()], -1)[:, None, :]
        q, k = q * cos + _rotate(q) * sin, k * cos + _rotate(k) * sin
        k, v = k.repeat_interleave(H // Hk, dim=2), v.repeat_interleave(H // Hk, dim=2)
        scores = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(hd)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -math.inf)
        o = torch.einsum("bhij,bjhd->bihd", scores.softmax(-1), v).reshape(B, T, H * hd)
        r = h + att.o_proj(o)
        x = _rms(r, blk.post_attention_layernorm.weight, eps)
    return x.reshape(-1, x.shape[-1]), r.reshape(-1, r.shape[-1]), hs[layer + 1].reshape(-1, r.shape[-1])


@pytest.mark.parametrize("layer", [1, 2])
def test_captured_x_is_the_post_attention_norm_computed_by_hand(model, layer):
    ids = _ids(2, 9, 3)
    pairs = hf.capture_mlp_pairs(model, [ids], layer=layer, dtype=F64)
    x_ref, r_ref, out = _reference_block(model, ids, layer)
    torch.testing.assert_close(pairs.inputs, x_ref, rtol=1e-5, atol=1e-5)
    # y is the MLP output before the residual add: the block's output minus y is the residual
    torch.testing.assert_close(out - pairs.outputs, r_ref, rtol=1e-5, atol=1e-5)
    # sensitivity: dropping the attention path (x = norm of the block input) misses by far more
    h = model(input_ids=ids, output_hidden_states=True).hidden_states[layer].reshape(-1, 32).detach()
    no_attention = _rms(h, model.model.layers[layer].post_attention_layernorm.weight.detach(), 1e-6)
    assert (no_attention - pairs.inputs).abs().max() > 1e-2


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_default_store_is_float32_on_cpu_and_the_source_names_the_layer(model):
    pairs = hf.capture_mlp_pairs(model, [_ids(1, 6, 4)])
    assert pairs.inputs.dtype == pairs.outputs.dtype == torch.float32
    assert "decoder block 2 of 4" in pairs.source and "Qwen3ForCausalLM" in pairs.source
    exact = hf.capture_mlp_pairs(model, [_ids(1, 6, 4)], dtype=F64)
    torch.testing.assert_close(pairs.inputs, exact.inputs.float())


def test_max_pairs_truncates_exactly_and_reads_no_further_batch(model):
    batches = [_ids(2, 8, s) for s in range(5)]  # 16 tokens each
    full = hf.capture_mlp_pairs(model, batches, dtype=F64)
    assert len(full) == 80
    read = []

    def stream():
        for i, b in enumerate(batches):
            read.append(i)
            yield b

    cut = hf.capture_mlp_pairs(model, stream(), max_pairs=21, dtype=F64)
    assert len(cut) == 21 and read == [0, 1]  # 21 rows need two batches; the third is never read
    assert torch.equal(cut.inputs, full.inputs[:21]) and torch.equal(cut.outputs, full.outputs[:21])
    assert len(hf.capture_mlp_pairs(model, batches, max_pairs=16, dtype=F64)) == 16


@pytest.mark.parametrize("side", ["right", "left"])
def test_masked_positions_are_dropped_and_padding_changes_nothing(model, side):
    a, b = _ids(1, 8, 5), _ids(1, 5, 6)
    alone = [hf.capture_mlp_pairs(model, [s], dtype=F64) for s in (a, b)]
    pad = torch.zeros(1, 3, dtype=torch.int64)
    ids = torch.cat([a, torch.cat([b, pad], 1) if side == "right" else torch.cat([pad, b], 1)])
    mask = torch.ones(2, 8, dtype=torch.int64)
    if side == "right":
        mask[1, 5:] = 0
    else:
        mask[1, :3] = 0
    for batch in ((ids, mask), {"input_ids": ids, "attention_mask": mask}):
        pairs = hf.capture_mlp_pairs(model, [batch], dtype=F64)
        assert len(pairs) == 13
        torch.testing.assert_close(pairs.inputs, torch.cat([p.inputs for p in alone]), rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(pairs.outputs, torch.cat([p.outputs for p in alone]), rtol=1e-10, atol=1e-12)


# --- hooks ----------------------------------------------------------------------------------------

def test_hooks_are_removed_after_success_and_after_errors(model):
    hf.capture_mlp_pairs(model, [_ids(1, 4, 7)], layer=1)
    assert _hooks(model, 1) == 0

    def bad_stream():
        yield _ids(1, 4, 7)
        yield torch.tensor([[0.5, 1.0]])  # float ids, met after one good batch

    with pytest.raises(ValueError, match="integer tensor"):
        hf.capture_mlp_pairs(model, bad_stream(), layer=1)
    assert _hooks(model, 1) == 0

    def boom(module, inputs, output):
        raise RuntimeError("boom")

    h = model.model.layers[0].register_forward_hook(boom)  # fails inside the forward pass
    try:
        with pytest.raises(RuntimeError, match="boom"):
            hf.capture_mlp_pairs(model, [_ids(1, 4, 7)], layer=1)
    finally:
        h.remove()
    assert _hooks(model, 1) == 0


# --- token_blocks ---------------------------------------------------------------------------------

def test_token_blocks_concatenates_cuts_and_batches_in_order():
    texts = [[0, 1, 2], [3, 4], (5, 6, 7, 8, 9), [10]]  # 11 tokens: five blocks of 2, [10] dropped
    out = list(hf.token_blocks(texts, seq_len=2, batch_size=2))
    assert [tuple(b.shape) for b in out] == [(2, 2), (2, 2), (1, 2)]
    assert all(b.dtype == torch.int64 for b in out)
    assert torch.cat(out).flatten().tolist() == list(range(10))
    # tensors and arrays as texts, and a separator after each text
    mixed = [torch.tensor([1, 2]), np.array([3], dtype=np.int32), [4, 5]]
    sep = list(hf.token_blocks(mixed, seq_len=3, batch_size=8, separator=0))
    assert sep[0].tolist() == [[1, 2, 0], [3, 0, 4]]  # [5, 0] is the dropped partial block


def test_token_blocks_reads_lazily_and_feeds_the_capture(model):
    read = []

    def texts():
        for s in range(100):
            read.append(s)
            yield _ids(1, 7, s)[0].tolist()

    blocks = hf.token_blocks(texts(), seq_len=10, batch_size=3)
    pairs = hf.capture_mlp_pairs(model, blocks, max_pairs=50, dtype=F64)
    # 50 rows need two batches of 3 x 10 tokens, i.e. 60 tokens: the first 9 texts of 7, no more
    assert len(pairs) == 50 and read == list(range(9))


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_a_bfloat16_model_is_captured_as_float32():
    small = _tiny_qwen3(dtype=torch.bfloat16)  # how a reader may run the real model on a GPU
    pairs = hf.capture_mlp_pairs(small, [_ids(2, 5, 9)])
    assert pairs.inputs.dtype == torch.float32 and pairs.inputs.shape == (10, 32)
    with torch.no_grad():
        again = small.model.layers[2].mlp(pairs.inputs.to(torch.bfloat16)).float()
    torch.testing.assert_close(pairs.outputs, again)  # the same bfloat16 inputs, so the same outputs


# --- loading from a folder ------------------------------------------------------------------------

@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_save_pretrained_then_load_causal_lm_gives_the_same_pairs(model, tmp_path):
    model.save_pretrained(tmp_path)
    loaded = hf.load_causal_lm(tmp_path, dtype=F64)
    assert not loaded.training and type(loaded).__name__ == "Qwen3ForCausalLM"
    assert next(loaded.parameters()).dtype == F64
    ids = _ids(2, 6, 8)
    a = hf.capture_mlp_pairs(model, [ids], dtype=F64)
    b = hf.capture_mlp_pairs(loaded, [ids], dtype=F64)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.outputs, b.outputs)
    assert str(tmp_path) in b.source  # config.name_or_path of a loaded model is its folder
    texts = [_ids(1, 9, s)[0].tolist() for s in range(4)]  # 36 tokens -> 4 blocks of 8
    one_call = hf.capture_from_folder(tmp_path, texts, seq_len=8, batch_size=3, max_pairs=30)
    assert len(one_call) == 30 and one_call.inputs.dtype == torch.float32


# --- bad input -----------------------------------------------------------------------------------

def test_missing_folder_is_a_file_not_found_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="download the weights") as err:
        hf.load_causal_lm(tmp_path / "Qwen3-0.6B-Base")
    assert "Qwen3-0.6B-Base" in str(err.value)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(layer=4), r"layer must lie in \[0, 4\)"),
    (dict(layer=-1), r"layer must lie in \[0, 4\)"),
    (dict(layer=1.5), "layer must be an integer"),
    (dict(max_pairs=0), "max_pairs must be >= 1"),
    (dict(dtype=torch.float16), "dtype must be"),
])
def test_bad_capture_arguments(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        hf.capture_mlp_pairs(model, [_ids(1, 4, 0)], **kwargs)


@pytest.mark.parametrize(("batch", "match"), [
    (torch.tensor([[1, V]]), r"\[0, vocab_size\)"),
    (torch.tensor([[-1, 2]]), r"\[0, vocab_size\)"),
    (torch.tensor([[1.0, 2.0]]), "integer tensor"),
    (torch.tensor([1, 2]), r"shape \(B, T\)"),
    ((torch.tensor([[1, 2]]), torch.tensor([[1, 2]])), "0 or 1"),
    ((torch.tensor([[1, 2]]), torch.tensor([[1, 1, 1]])), "attention_mask shape"),
    ((torch.tensor([[1, 2]]), torch.tensor([[1.0, 1.0]])), "attention_mask must be"),
    ({"attention_mask": torch.tensor([[1, 1]])}, "needs 'input_ids'"),
])
def test_bad_batches(model, batch, match):
    with pytest.raises(ValueError, match=match):
        hf.capture_mlp_pairs(model, [batch])


def test_other_bad_capture_input(model):
    with pytest.raises(ValueError, match="no decoder blocks"):
        hf.capture_mlp_pairs(torch.nn.Linear(2, 2), [_ids(1, 2, 0)])
    with pytest.raises(ValueError, match="no decoder blocks"):
        hf.mid_layer(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="no unmasked token"):
        hf.capture_mlp_pairs(model, [])
    with pytest.raises(ValueError, match="no unmasked token"):
        hf.capture_mlp_pairs(model, [(torch.tensor([[1, 2]]), torch.tensor([[0, 0]]))])


@pytest.mark.parametrize(("texts", "kwargs", "match"), [
    ([[0, 1.5]], {}, "token ids must be integers"),
    ([[0, True]], {}, "token ids must be integers"),
    ([[0, -3]], {}, "non-negative"),
    (["the cat"], {}, "tokenise it first"),
    ([np.array([0.0, 1.0])], {}, "1-D and integer"),
    ([torch.tensor([[0, 1]])], {}, "1-D and integer"),
    ([[0, 1]], dict(seq_len=0), "seq_len must be >= 1"),
    ([[0, 1]], dict(batch_size=2.5), "batch_size must be an integer"),
    ([[0, 1]], dict(separator=-1), "separator must be >= 0"),
    ("the cat", {}, "iterable of token-id lists"),
])
def test_bad_token_streams(texts, kwargs, match):
    args = dict(seq_len=2, batch_size=2) | kwargs
    with pytest.raises(ValueError, match=match):
        list(hf.token_blocks(texts, **args))


def test_bad_loader_arguments(tmp_path):
    with pytest.raises(ValueError, match="path must be"):
        hf.load_causal_lm(3)
    with pytest.raises(ValueError, match="dtype must be"):
        hf.load_causal_lm(tmp_path, dtype=torch.int64)


def test_a_device_other_than_the_models_is_refused():
    from assocmem.mlps.lm_embeddings.hf import capture_mlp_pairs

    model = _tiny_qwen3()
    with pytest.raises(ValueError, match="differs from the model"):
        capture_mlp_pairs(model, [torch.zeros(1, 4, dtype=torch.int64)], device="meta")
    with pytest.raises(ValueError, match="torch device"):
        capture_mlp_pairs(model, [torch.zeros(1, 4, dtype=torch.int64)], device="bogus")


def test_load_refuses_a_bad_device_before_reading_weights(tmp_path):
    from assocmem.mlps.lm_embeddings.hf import load_causal_lm

    with pytest.raises(ValueError, match="unknown device"):
        load_causal_lm(tmp_path, device="bogus")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_load_refuses_an_absent_cuda_device_before_reading_weights(tmp_path, monkeypatch):
    import transformers

    from assocmem.mlps.lm_embeddings.hf import load_causal_lm

    def never(*args, **kwargs):
        raise AssertionError("the weights were read before the device was checked")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", never)
    with pytest.raises(RuntimeError, match="cuda"):
        load_causal_lm(tmp_path, device="cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        load_causal_lm(tmp_path, device=torch.device("cuda:0"))
