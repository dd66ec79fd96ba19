"""Capture the MLP input/output pairs of a Hugging Face decoder LM (Qwen3, the Llama family).

What is captured. At one decoder block of a pretrained causal LM, for every token of a text
stream, the MLP block's input ``x`` (the hidden state after the RMSNorm in front of the MLP) and
its output ``y`` (before the residual add). Seed 001 (App. A.5.3, "LM embeddings") streams the
train split of WikiText through Qwen3-0.6B-Base, records these at the middle block (layer 14 of
28) and keeps ``N = 500,000`` pairs; its Figures 12-14 (margin bounds, whitened MLP capacity,
Transformer-block capacity) then draw fact sets from them
(:func:`~assocmem.mlps.lm_embeddings.pairs.sample_fact_set`).

Hook points. A Qwen3 (or Llama) decoder block computes ``h <- h + attn(input_layernorm(h))``, then
``h <- h + mlp(post_attention_layernorm(h))``. :func:`capture_mlp_pairs` registers two forward
hooks on ``model.model.layers[layer]``: the output of ``post_attention_layernorm`` is ``x`` and
the output of ``mlp`` is ``y``. Once ``y`` is in hand the forward pass is stopped (the later blocks
and the vocabulary head are not needed), and the hooks are removed whatever happens.

How a reader runs it on the real model (the book cannot: nothing is downloaded here):

1. download Qwen3-0.6B-Base to a local folder and tokenise the WikiText train lines with the
   model's own tokenizer, e.g. ``ids = [tok(line)["input_ids"] for line in lines if line.strip()]``;
2. pass the id lists: ``pairs = capture_from_folder(folder, ids)`` (the mid layer, 500,000
   pairs), then ``save_pairs(pairs, "qwen3_mid.npz")`` and point chapter 17's parameter at the file.

The sequence length and batch size of the stream (:func:`token_blocks`) are not given by the seed;
``seq_len = 512`` is our default. The book itself runs this code only on a tiny randomly
initialised Qwen3 built from a ``transformers.Qwen3Config`` (its tests); the chapter's analyses
use the book's own trained LM (:mod:`~assocmem.mlps.lm_embeddings.editing_lm`).

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.5.3 and Figs. 12-14.
Qwen Team (2025), "Qwen3 technical report" (the architecture: pre-norm RMSNorm blocks).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import torch

from assocmem._checks import as_int, token_ids
from assocmem.devices import resolve_device
from assocmem.mlps.lm_embeddings.pairs import EmbeddingPairs
from assocmem.dtypes import resolve_dtype

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import PathLike
    from collections.abc import Iterator, Sequence

__all__ = [
    "load_causal_lm",
    "decoder_layers",
    "mid_layer",
    "token_blocks",
    "capture_mlp_pairs",
    "capture_from_folder",
]

_STORE_DTYPES = (torch.float32, torch.float64)


def load_causal_lm(path: PathLike, *, dtype: torch.dtype | None = None,
                   device: str | torch.device | None = None) -> torch.nn.Module:
    """A pretrained causal LM from a local folder, in eval mode (nothing is downloaded).

    Parameters
    ----------
    path : str or os.PathLike
        A folder written by ``save_pretrained`` (or a downloaded Hugging Face snapshot):
        ``config.json`` and the weights.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        The parameters' dtype (``torch.bfloat16`` halves the memory of a GPU run).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        As :func:`assocmem.devices.resolve_device` (``"auto"``, ``"cpu"``, ``"cuda"``,
        ``"cuda:N"``, ``"mps"``).

    Returns
    -------
    transformers.PreTrainedModel
        ``AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)`` on
        ``device``, in eval mode.

    Raises
    ------
    FileNotFoundError
        ``path`` is not an existing folder (the reader must download the weights beforehand).
    ValueError
        ``path`` is not a str or path, ``dtype`` is not a floating torch dtype, or ``device`` does
        not name a torch device (checked before the weights are read).
    RuntimeError
        ``device`` names a CUDA or MPS device this machine does not have (checked before the
        weights are read).
    OSError
        From ``transformers``: the folder holds no loadable model.
    """
    dtype = resolve_dtype(dtype)
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ValueError(f"path must be a folder path (str or os.PathLike); got {path!r}")
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch.dtype; got {dtype!r}")
    try:  # an unknown or absent device fails here, before the weights are read
        target = resolve_device(device)
    except ValueError as err:
        raise ValueError(f"device must name a torch device (e.g. 'cpu', 'cuda'); got {device!r} ({err})") from None
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"no model folder at {folder}: download the weights (e.g. Qwen3-0.6B-Base) to a local "
            "folder beforehand; this loader reads local files only")
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=dtype)
    return model.to(target).eval()


def decoder_layers(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The decoder blocks of a Qwen3 / Llama-family model, in order.

    Parameters
    ----------
    model : torch.nn.Module
        A causal LM (``model.model.layers``, as ``Qwen3ForCausalLM``) or its base model
        (``model.layers``, as ``Qwen3Model``).

    Returns
    -------
    torch.nn.ModuleList
        The blocks (not a copy).

    Raises
    ------
    ValueError
        The model has no such non-empty ``ModuleList`` (another architecture, e.g. GPT-2's
        ``transformer.h``).
    """
    inner = getattr(model, "model", None)
    for owner in (inner, model):
        layers = getattr(owner, "layers", None) if owner is not None else None
        if isinstance(layers, torch.nn.ModuleList) and len(layers) > 0:
            return layers
    raise ValueError(f"{type(model).__name__} has no decoder blocks at model.model.layers or model.layers; "
                     "this capture supports Qwen3 and Llama-family architectures")


def mid_layer(model: torch.nn.Module) -> int:
    """The middle decoder block, ``len(layers) // 2`` (Qwen3-0.6B: 28 blocks -> 14, seed 001 App. A.5.3).

    Raises
    ------
    ValueError
        As :func:`decoder_layers`.
    """
    return len(decoder_layers(model)) // 2


def _id_list(text, index: int) -> list[int]:
    """One text's token ids as a list of non-negative Python ints, or a ValueError naming the text."""
    if isinstance(text, torch.Tensor):
        if text.dim() != 1 or text.is_floating_point() or text.is_complex() or text.dtype == torch.bool:
            raise ValueError(f"text {index}: a tensor of token ids must be 1-D and integer; "
                             f"got {text.dtype} of shape {tuple(text.shape)}")
        ids = text.tolist()
    elif isinstance(text, np.ndarray):
        if text.ndim != 1 or text.dtype.kind not in "iu":
            raise ValueError(f"text {index}: an array of token ids must be 1-D and integer; "
                             f"got {text.dtype} of shape {text.shape}")
        ids = text.tolist()
    elif isinstance(text, (str, bytes)) or not isinstance(text, Iterable):
        raise ValueError(f"text {index} must be a list of token ids (tokenise it first); "
                         f"got {type(text).__name__}")
    else:
        ids = list(text)
    out = []
    for t in ids:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
            raise ValueError(f"text {index}: token ids must be integers; got {t!r}")
        if t < 0:
            raise ValueError(f"text {index}: token ids must be non-negative; got {int(t)}")
        out.append(int(t))
    return out


def token_blocks(token_stream: Iterable[Sequence[int]], seq_len: int, batch_size: int, *,
                 separator: int | None = None) -> Iterator[torch.Tensor]:
    """Cut tokenised texts into one stream and yield it as ``(batch_size, seq_len)`` blocks.

    The usual LM streaming: the texts' ids are concatenated (optionally with ``separator``, e.g.
    the tokenizer's EOS id, after each text), cut into consecutive blocks of ``seq_len`` tokens,
    and the blocks grouped into batches, in stream order. The last partial block is dropped; the
    last batch may hold fewer than ``batch_size`` blocks.

    Parameters
    ----------
    token_stream : iterable of sequences of int
        One entry per text (a list, tuple, 1-D integer tensor or array of token ids), e.g. one per
        WikiText line tokenised by the model's tokenizer. Read lazily.
    seq_len : int
        Tokens per block, ``>= 1``.
    batch_size : int
        Blocks per batch, ``>= 1``.
    separator : int, optional
        A non-negative id appended after every text.

    Yields
    ------
    torch.Tensor, shape ``(b, seq_len)``, int64
        ``b = batch_size`` except possibly for the last batch (``1 <= b <= batch_size``).

    Raises
    ------
    ValueError
        ``seq_len`` or ``batch_size`` not an integer ``>= 1``; a text that is not a sequence of
        integers (a raw string, floats, booleans) or holds a negative id; a bad ``separator``.
        Raised when the offending text is reached.
    """
    T = as_int(seq_len, "seq_len", minimum=1)
    B = as_int(batch_size, "batch_size", minimum=1)
    sep = [] if separator is None else [as_int(separator, "separator", minimum=0)]
    if isinstance(token_stream, (str, bytes, torch.Tensor)) or not isinstance(token_stream, Iterable):
        raise ValueError("token_stream must be an iterable of token-id lists (one per text); "
                         f"got {type(token_stream).__name__}")
    return _blocks(token_stream, T, B, sep)


def _blocks(token_stream, T: int, B: int, sep: list[int]):
    buffer: list[int] = []
    blocks: list[list[int]] = []
    for i, text in enumerate(token_stream):
        buffer.extend(_id_list(text, i))
        buffer.extend(sep)
        n_full = len(buffer) // T
        if n_full:
            blocks.extend(buffer[k * T:(k + 1) * T] for k in range(n_full))
            del buffer[: n_full * T]
        while len(blocks) >= B:
            yield torch.tensor(blocks[:B], dtype=torch.int64)
            del blocks[:B]
    if blocks:
        yield torch.tensor(blocks, dtype=torch.int64)


class _StopForward(Exception):
    """Raised by the MLP hook once ``y`` is captured: the rest of the forward pass is not needed."""


def _split_batch(batch, vocab_size: int, index: int):
    """``(input_ids (B, T) int64, attention_mask (B, T) bool or None)`` from one batch."""
    if isinstance(batch, Mapping):
        if "input_ids" not in batch:
            raise ValueError(f"batch {index}: a mapping batch needs 'input_ids'")
        ids, mask = batch["input_ids"], batch.get("attention_mask")
    elif isinstance(batch, (tuple, list)):
        if len(batch) != 2:
            raise ValueError(f"batch {index}: a pair batch must be (input_ids, attention_mask); got {len(batch)} items")
        ids, mask = batch
    else:
        ids, mask = batch, None
    try:
        ids = token_ids(ids, vocab_size)
    except ValueError as err:
        raise ValueError(f"batch {index}: {err}") from None
    if mask is not None:
        if not isinstance(mask, torch.Tensor) or mask.is_floating_point() or mask.is_complex():
            raise ValueError(f"batch {index}: attention_mask must be an integer or bool tensor; "
                             f"got {getattr(mask, 'dtype', type(mask).__name__)}")
        if mask.shape != ids.shape:
            raise ValueError(f"batch {index}: attention_mask shape {tuple(mask.shape)} != input_ids shape "
                             f"{tuple(ids.shape)}")
        if mask.dtype != torch.bool and bool(((mask != 0) & (mask != 1)).any()):
            raise ValueError(f"batch {index}: attention_mask entries must be 0 or 1")
        mask = mask.to(torch.bool)
    return ids, mask


def capture_mlp_pairs(model: torch.nn.Module, batches: Iterable[torch.Tensor], *, layer: int | None = None,
                      max_pairs: int = 500_000, device: str | torch.device | None = None,
                      dtype: torch.dtype | None = None) -> EmbeddingPairs:
    """Per-token MLP inputs ``x`` and outputs ``y`` at one decoder block, via forward hooks.

    For each batch the model runs under ``torch.no_grad()``; a hook on
    ``layers[layer].post_attention_layernorm`` records ``x`` (the post-RMSNorm hidden state fed to
    the MLP) and a hook on ``layers[layer].mlp`` records ``y`` (the MLP output before the residual
    add), then stops the pass. Rows are kept in stream order (batch, sequence, position) until
    ``max_pairs``; no further batch is read after that. The hooks are removed on return and on
    error.

    Parameters
    ----------
    model : torch.nn.Module
        A Qwen3 / Llama-family causal LM or base model (see :func:`decoder_layers`), e.g. from
        :func:`load_causal_lm`. Put in eval mode here.
    batches : iterable
        Each item a LongTensor ``(B, T)`` of token ids (as :func:`token_blocks` yields), a pair
        ``(input_ids, attention_mask)``, or a mapping with ``"input_ids"`` and optionally
        ``"attention_mask"`` (a tokenizer's padded output). Only positions whose mask is 1 are
        kept; with a mask, position ids count the unmasked tokens (so left padding is handled).
    layer : int, optional
        The block, in ``[0, n_layers)``; default :func:`mid_layer`.
    max_pairs : int, default 500,000
        ``N``, the most rows kept (seed 001: 500,000). Fewer are returned if the stream ends first.
    device : str or torch.device, optional
        Where the batches run: the device of the model's parameters (the default); another
        device is refused.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Stored dtype, float32 or float64 (500,000 pairs of width 1024 take 4 GB in float32).

    Returns
    -------
    EmbeddingPairs
        ``inputs`` ``(N, d)`` and ``outputs`` ``(N, d)`` on the CPU at ``dtype``, ``d`` the hidden
        size; ``source`` names the model (``config.name_or_path``, else its class) and the layer.

    Raises
    ------
    ValueError
        An unsupported architecture (:func:`decoder_layers`), a block without
        ``post_attention_layernorm`` and ``mlp``, ``layer`` out of range or not an integer,
        ``max_pairs < 1``, a bad ``dtype``; a batch that is not an integer ``(B, T)`` tensor with ids
        in ``[0, vocab_size)``, a mask of another shape or with values other than 0/1; a stream that
        yields no unmasked token; or non-finite captured values (:class:`EmbeddingPairs`).

    References
    ----------
    Seed 001, App. A.5.3 (Qwen3-0.6B-Base, layer 14 of 28, ``N = 500,000``).
    """
    dtype = resolve_dtype(dtype)
    layers = decoder_layers(model)
    n_layers = len(layers)
    L = mid_layer(model) if layer is None else as_int(layer, "layer")
    if not 0 <= L < n_layers:
        raise ValueError(f"layer must lie in [0, {n_layers}); got {L}")
    block = layers[L]
    norm, mlp = getattr(block, "post_attention_layernorm", None), getattr(block, "mlp", None)
    if not isinstance(norm, torch.nn.Module) or not isinstance(mlp, torch.nn.Module):
        raise ValueError(f"decoder block {L} ({type(block).__name__}) lacks post_attention_layernorm and mlp")
    N = as_int(max_pairs, "max_pairs", minimum=1)
    if dtype not in _STORE_DTYPES:
        raise ValueError(f"dtype must be torch.float32 or torch.float64; got {dtype!r}")
    if isinstance(batches, (str, bytes)) or not isinstance(batches, Iterable):
        raise ValueError(f"batches must be an iterable of token batches; got {type(batches).__name__}")
    config = getattr(model, "config", None)
    vocab_size = getattr(config, "vocab_size", None)
    if vocab_size is None:
        vocab_size = model.get_input_embeddings().num_embeddings
    home = next(model.parameters()).device
    if device is None:
        run_on = home
    else:
        try:
            run_on = torch.device(device)
        except (RuntimeError, TypeError) as err:
            raise ValueError(f"device must name a torch device; got {device!r}") from err
        if run_on.type != home.type or (run_on.index is not None and home.index is not None
                                        and run_on.index != home.index):
            raise ValueError(f"device {run_on} differs from the model's ({home}); move the model "
                             "there first (model.to(device))")

    seen: dict[str, torch.Tensor] = {}

    def on_norm(module, inputs, output):
        seen["x"] = output

    def on_mlp(module, inputs, output):
        seen["y"] = output
        raise _StopForward

    model.eval()
    xs, ys, kept = [], [], 0
    handles = [norm.register_forward_hook(on_norm), mlp.register_forward_hook(on_mlp)]
    try:
        with torch.no_grad():
            for i, batch in enumerate(batches):
                ids, mask = _split_batch(batch, int(vocab_size), i)
                kwargs = {"input_ids": ids.to(run_on), "use_cache": False}
                if mask is not None:
                    kwargs["attention_mask"] = mask.to(run_on, torch.int64)
                    kwargs["position_ids"] = (mask.to(torch.int64).cumsum(-1) - 1).clamp(min=0).to(run_on)
                seen.clear()
                try:
                    model(**kwargs)
                except _StopForward:
                    pass
                if "x" not in seen or "y" not in seen:
                    raise RuntimeError(f"batch {i}: the forward pass did not reach decoder block {L}'s MLP")
                x, y = seen["x"], seen["y"]
                if mask is not None:
                    keep = mask.to(x.device)
                    x, y = x[keep], y[keep]
                else:
                    x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
                take = min(N - kept, x.shape[0])
                xs.append(x[:take].detach().to("cpu", dtype))
                ys.append(y[:take].detach().to("cpu", dtype))
                kept += take
                if kept >= N:
                    break
    finally:
        for h in handles:
            h.remove()
        seen.clear()
    if kept == 0:
        raise ValueError("batches yielded no unmasked token: nothing was captured")
    name = getattr(config, "name_or_path", "") or type(model).__name__
    source = (f"{name}, decoder block {L} of {n_layers}: x = post_attention_layernorm output, "
              f"y = mlp output (pre-residual), {kept} tokens")
    return EmbeddingPairs(torch.cat(xs), torch.cat(ys), source=source)


def capture_from_folder(path: PathLike, token_stream: Iterable[Sequence[int]], *, seq_len: int = 512,
                        batch_size: int = 8, layer: int | None = None, max_pairs: int = 500_000,
                        model_dtype: torch.dtype | None = None, device: str | torch.device | None = None,
                        separator: int | None = None) -> EmbeddingPairs:
    """:func:`load_causal_lm` then :func:`capture_mlp_pairs` over :func:`token_blocks` of the texts.

    The one call for a reader with the weights: ``capture_from_folder("Qwen3-0.6B-Base", ids)``
    gives seed 001's pairs (mid layer, ``N = 500,000``), ``ids`` the tokenised WikiText lines.

    Parameters
    ----------
    path : str or os.PathLike
        The local model folder.
    token_stream : iterable of sequences of int
        Tokenised texts (:func:`token_blocks`).
    seq_len, batch_size, separator
        As :func:`token_blocks` (``seq_len = 512``: our choice; the seed gives none).
    layer, max_pairs
        As :func:`capture_mlp_pairs`.
    model_dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        The model's dtype (:func:`load_causal_lm`); the pairs are stored in float32.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    EmbeddingPairs

    Raises
    ------
    FileNotFoundError, ValueError, RuntimeError, OSError
        As :func:`load_causal_lm`, :func:`token_blocks` and :func:`capture_mlp_pairs`.
    """
    model_dtype = resolve_dtype(model_dtype, 'model_dtype')
    device = resolve_device(device)
    blocks = token_blocks(token_stream, seq_len, batch_size, separator=separator)
    model = load_causal_lm(path, dtype=model_dtype, device=device)
    return capture_mlp_pairs(model, blocks, layer=layer, max_pairs=max_pairs)  # where the model was loaded
