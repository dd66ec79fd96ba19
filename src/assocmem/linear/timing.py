"""Wall-clock timing of attention: softmax against linear attention, and decoding token by token.

Everything here measures time on the machine it runs on, so its numbers are *machine-dependent*:
the book shows them, labelled so, and never checks them against a seed. What the seed claims
about cost (seed 000 §2: the key-value cache grows with ``t`` and producing ``T`` tokens costs
time proportional to ``T^2``; §3: a fixed state updated by one term per step) is checked exactly
by counting, in :mod:`assocmem.linear.attention.decoding` (``numbers_held``, ``last_step_macs``).

* :func:`time_attention_vs_T` times softmax attention and the parallel, recurrent and chunked forms
  of causal linear attention over a range of sequence lengths.
* :func:`time_decoding` times step-by-step generation with a key-value cache and with the
  recurrent state, per token, as the number of tokens seen grows.
* :func:`loglog_slope` fits the exponent ``p`` of ``time ~ T^p``.

Each point is timed with :func:`assocmem.benchmarking.time_call`; :func:`assocmem.benchmarking.machine_info`
says where the numbers were measured. Presets (:data:`PRESETS`, :func:`get_preset`) size the
experiments of chapter 01 ("From attention to a matrix"): ``"quick"`` runs in seconds on two CPU
cores (the book and CI); ``"full"`` goes to ``T = 16384`` (a GPU, or a patient CPU, under papermill
or ``benchmarks/bench_attention.py``).

References
----------
Seed 000 §2-§3. PyTorch benchmark utilities: ``torch.utils.benchmark.Timer``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real, lookup, positive_int
from assocmem.benchmarking import time_call
from assocmem.devices import resolve_device, torch_threads
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.linear.attention.decoding import KVCacheDecoder, LinearAttentionDecoder
from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.linear.attention.softmax import softmax_attention

__all__ = [
    "TimingPreset",
    "PRESETS",
    "get_preset",
    "ATTENTION_METHODS",
    "DECODERS",
    "loglog_slope",
    "time_attention_vs_T",
    "time_decoding",
    "preset_dict",
]

#: What :func:`time_attention_vs_T` can time.
ATTENTION_METHODS = ("softmax", "parallel", "recurrent", "chunked")
#: What :func:`time_decoding` can time.
DECODERS = ("kv_cache", "recurrent")


@dataclass(frozen=True)
class TimingPreset:
    """The sizes of chapter 01's experiments (agreement of the forms, timing, decoding)."""

    d_k: int = 64  # key (and query) dimension
    d_v: int = 64  # value dimension
    agree_T: tuple[int, ...] = (1, 17, 256, 2048)  # sequence lengths for the agreement check
    agree_chunks: tuple[int, ...] = (1, 16, 64, 100)  # chunk sizes for the agreement check
    time_T: tuple[int, ...] = (128, 256, 512, 1024, 2048)  # sequence lengths timed
    chunk_size: int = 64  # chunk length of the timed chunked form
    min_run_time: float = 0.03  # seconds of repeated calls per timed point and round (torch Timer)
    rounds: int = 3  # sweeps over all (T, method) points; the fastest round of each point is kept
    decode_T: int = 2048  # tokens generated one at a time
    decode_repeats: int = 3  # decoding runs; the fastest run of each step is kept
    decode_heads: int = 8  # sequences decoded together, like the heads of one layer
    timing_dtype: str = "float32"  # dtype of the timed runs (agreement checks use float64)
    num_threads: int = 1  # CPU threads while timing (ignored on accelerators)


#: Named presets: ``"quick"`` for the book and CI, ``"full"`` up to ``T = 16384``.
PRESETS: dict[str, TimingPreset] = {
    "quick": TimingPreset(),
    "full": TimingPreset(
        agree_T=(1, 17, 256, 2048, 8192),
        agree_chunks=(1, 16, 64, 100, 1000),
        time_T=(128, 256, 512, 1024, 2048, 4096, 8192, 16384),
        min_run_time=0.1,
        decode_T=16384,
        decode_repeats=3,
    ),
}


def get_preset(name: str) -> TimingPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


def _dtype(dtype: str | torch.dtype) -> torch.dtype:
    """``torch.float32`` or ``torch.float64``, given as a dtype or its name ("float32")."""
    if isinstance(dtype, str):
        out = getattr(torch, dtype.removeprefix("torch."), None)
        if not isinstance(out, torch.dtype):
            raise ValueError(f"unknown floating dtype {dtype!r}; expected 'float32' or 'float64'")
        dtype = out
    return check_float_dtype(dtype)  # float16/bfloat16 and non-floating dtypes refused, naming the two


def _names(values, what: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` as a tuple of names from ``allowed``; a single name is a tuple of one."""
    values = (values,) if isinstance(values, str) else tuple(values)
    bad = [m for m in values if m not in allowed]
    if bad:
        raise ValueError(f"unknown {what}(s) {bad}; expected some of {allowed}")
    return values


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def loglog_slope(x: Iterable[float], y: Iterable[float]) -> float:
    """Least-squares slope ``p`` of ``log y = p log x + c``: the exponent of ``y ~ x^p``.

    Raises
    ------
    ValueError
        With fewer than two points, values that are not finite positive real numbers, or
        ``x`` taking a single value (the slope is then undefined).
    """
    arrays = []
    for name, values in (("x", x), ("y", y)):
        try:
            items = list(values)
            arr = np.asarray(items)
            if arr.dtype.kind not in "iuf" or any(isinstance(v, (bool, np.bool_)) for v in items):
                raise TypeError  # booleans, strings, objects, complex numbers
            arrays.append(arr.astype(float))
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an iterable of real numbers; got {values!r:.80}") from None
    x, y = arrays
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"need at least two (x, y) pairs of equal length; got {x.size} and {y.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("x and y must be finite for a log-log fit")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("x and y must be positive for a log-log fit")
    if np.all(x == x[0]):
        raise ValueError(f"x must take at least two different values for a slope; got all {x[0]!r}")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _attention_call(method: str, q, k, v, chunk_size: int) -> Callable[[], torch.Tensor]:
    if method == "softmax":
        return lambda: softmax_attention(q, k, v)
    return lambda: linear_attention(q, k, v, form=method, chunk_size=chunk_size)


def time_attention_vs_T(
    T_values: Iterable[int],
    d_k: int = 64,
    d_v: int = 64,
    *,
    methods: Iterable[str] = ATTENTION_METHODS,
    chunk_size: int = 64,
    dtype: str | torch.dtype | None = None,
    device: str | torch.device | None = None,
    seed: int = 0,
    min_run_time: float = 0.05,
    rounds: int = 1,
    num_threads: int = 1,
) -> pd.DataFrame:
    """Wall-clock time of causal attention over a whole sequence of length ``T``, for each method.

    Methods: ``"softmax"`` (:func:`~assocmem.linear.attention.softmax_attention`) and the ``"parallel"``,
    ``"recurrent"`` and ``"chunked"`` forms of :func:`~assocmem.linear.attention.linear_attention`. One
    sequence ``(T, d)`` of standard normal queries, keys and values per ``T``, no batch. The whole
    sweep is run ``rounds`` times and each point keeps its fastest round, so that a burst of load
    from another program spoils at most one round of a point.

    Parameters
    ----------
    T_values : iterable of int
        Sequence lengths.
    d_k, d_v : int, default 64
        Key and value dimensions.
    methods : iterable of str, default all of :data:`ATTENTION_METHODS`
    chunk_size : int, default 64
        Chunk length of the chunked form.
    dtype : str or torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        ``"auto"`` picks CUDA, then MPS, then the CPU.
    seed : int, default 0
    min_run_time : float, default 0.05
        Seconds of measurement per point and round (see :func:`time_call`).
    rounds : int, default 1
        Sweeps over all points (``>= 1``).
    num_threads : int, default 1

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``T``, ``seconds`` (fastest block average per call), ``us_per_token``
        (``1e6 seconds / T``). Machine-dependent.

    Raises
    ------
    ValueError
        For an unknown method (the message lists them), a dtype other than float32 or float64,
        ``rounds``, a ``T`` or ``chunk_size`` not an integer ``>= 1``, ``d_k`` or ``d_v`` not a
        positive integer, a non-integer ``seed``, or ``min_run_time`` not a finite number ``> 0``.
    """
    dtype = resolve_dtype(dtype)
    rounds = as_int(rounds, "rounds")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1; got {rounds}")
    methods = _names(methods, "method", ATTENTION_METHODS)
    dt = _dtype(dtype)
    dev = resolve_device(device, dtype=dt)
    d_k, d_v, chunk_size = positive_int("d_k", d_k), positive_int("d_v", d_v), positive_int("chunk_size", chunk_size)
    min_run_time = as_real(min_run_time, "min_run_time", minimum=0.0, strict_min=True)
    g = torch.Generator().manual_seed(as_int(seed, "seed"))
    T_values = [as_int(T, "T_values entry", minimum=1) for T in T_values]
    data = {T: tuple(torch.randn(T, d, generator=g, dtype=dt).to(dev) for d in (d_k, d_k, d_v)) for T in T_values}
    best: dict[tuple[int, str], float] = {}
    with torch.inference_mode():
        for _ in range(rounds):
            for T in T_values:
                for method in methods:
                    s = time_call(_attention_call(method, *data[T], chunk_size), min_run_time=min_run_time,
                                  num_threads=num_threads)
                    best[T, method] = min(s, best.get((T, method), math.inf))
    rows = [{"method": m, "T": T, "seconds": best[T, m], "us_per_token": 1e6 * best[T, m] / T}
            for T in T_values for m in methods]
    return pd.DataFrame(rows, columns=["method", "T", "seconds", "us_per_token"])


def time_decoding(
    T: int,
    d_k: int = 64,
    d_v: int = 64,
    *,
    decoders: Iterable[str] = DECODERS,
    dtype: str | torch.dtype | None = None,
    device: str | torch.device | None = None,
    seed: int = 0,
    repeats: int = 2,
    heads: int = 1,
    num_threads: int = 1,
) -> pd.DataFrame:
    """Wall-clock time per generated token when decoding ``T`` tokens one at a time.

    Each decoder (``"kv_cache"``: :class:`~assocmem.linear.attention.KVCacheDecoder`; ``"recurrent"``:
    :class:`~assocmem.linear.attention.LinearAttentionDecoder`) consumes the same ``T`` tokens;
    every step is timed with :func:`time.perf_counter` (accelerators synchronised after each
    step, as a generation loop must before it can pick the next token). The whole run is
    repeated ``repeats`` times and the fastest time of each step is kept, then the steps are
    grouped into octaves ``[2^j, 2^{j+1})`` of ``t`` and the median of each group reported.

    Parameters
    ----------
    T : int
        Tokens generated (``>= 1``).
    d_k, d_v : int, default 64
    decoders : iterable of str, default both of :data:`DECODERS`
    dtype : str or torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    seed : int, default 0
    repeats : int, default 2
    heads : int, default 1
        Independent sequences decoded together, as the heads of one layer are (a batch
        dimension of the decoders). More heads make the arithmetic, rather than Python's fixed
        cost per call, dominate each step.
    num_threads : int, default 1
        torch CPU threads while decoding (:func:`assocmem.devices.torch_threads`; restored
        afterwards, ignored on accelerators).

    Returns
    -------
    pandas.DataFrame
        Columns ``decoder``, ``t_lo``, ``t_hi`` (the octave of tokens seen, inclusive),
        ``t_mid`` (its geometric midpoint), ``us_per_token`` (median microseconds per step) and
        ``numbers_held`` (numbers held per head after step ``t_hi``, exact).
        Timings are machine-dependent; ``numbers_held`` is not.

    Raises
    ------
    ValueError
        For an unknown decoder, ``T``, ``repeats`` or ``heads`` not an integer ``>= 1``,
        ``d_k`` or ``d_v`` not a positive integer, a dtype other than float32 or float64, a
        non-integer ``seed``, or ``num_threads`` not an integer ``>= 1``.
    """
    dtype = resolve_dtype(dtype)
    decoders = _names(decoders, "decoder", DECODERS)
    T, repeats, heads = as_int(T, "T"), as_int(repeats, "repeats"), as_int(heads, "heads")
    if T < 1 or repeats < 1 or heads < 1:
        raise ValueError(f"T, repeats and heads must be >= 1; got T={T}, repeats={repeats}, heads={heads}")
    d_k, d_v = positive_int("d_k", d_k), positive_int("d_v", d_v)
    dt = _dtype(dtype)
    dev = resolve_device(device, dtype=dt)
    g = torch.Generator().manual_seed(as_int(seed, "seed"))
    q, k, v = (torch.randn(T, heads, d, generator=g, dtype=dt).to(dev) for d in (d_k, d_k, d_v))  # (T, H, d)
    edges = [1]
    while edges[-1] <= T:
        edges.append(2 * edges[-1])
    edges[-1] = T + 1
    if len(edges) > 2 and T + 1 - edges[-2] < (edges[-2] - edges[-3]) // 2:
        del edges[-2]  # a short last octave joins the one before it
    rows = []
    with torch.inference_mode(), torch_threads(num_threads, dev):
        for name in decoders:
            dec = (KVCacheDecoder if name == "kv_cache" else LinearAttentionDecoder)(d_k, d_v, dtype=dt, device=dev)
            best = np.full(T, np.inf)
            held = np.zeros(T, dtype=np.int64)
            for _ in range(repeats):
                dec.reset()
                for t in range(T):
                    start = time.perf_counter()
                    dec.step(q[t], k[t], v[t])
                    _sync(dev)
                    best[t] = min(best[t], time.perf_counter() - start)
                    held[t] = dec.numbers_held
            for lo, hi in zip(edges[:-1], edges[1:]):
                hi -= 1
                rows.append({
                    "decoder": name,
                    "t_lo": lo,
                    "t_hi": hi,
                    "t_mid": float(np.sqrt(lo * hi)),
                    "us_per_token": 1e6 * float(np.median(best[lo - 1:hi])),
                    "numbers_held": int(held[hi - 1]) // heads,
                })
    return pd.DataFrame(rows, columns=["decoder", "t_lo", "t_hi", "t_mid", "us_per_token", "numbers_held"])


def preset_dict(name: str) -> dict:
    """The preset ``name`` as a plain dict (for provenance records)."""
    return asdict(get_preset(name))
