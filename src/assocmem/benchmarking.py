"""Benchmark helpers: where timings were taken, wall-clock time of one call, and reference rates.

A wall-clock time means little without the machine it was measured on and a reference measured in
the same run. :func:`machine_info` describes the processor, cores, threads, accelerator and
software versions (and, on request, how loaded a shared machine was); :func:`time_call` times one
callable with :class:`torch.utils.benchmark.Timer` (warm-up, automatic number of runs,
accelerator synchronisation, a fixed number of threads), keeping the fastest block by default, as
Python's :mod:`timeit` advises; :func:`gemm_rate` measures the machine's float64 GEMM rate, the
same-run reference of the benchmarks; :func:`fastest_thread_count` picks one thread or all cores by
measuring. Everything here is machine-dependent. Chapter 01's timings (:mod:`assocmem.linear.timing`)
and the scripts in ``benchmarks/`` use it.

References
----------
PyTorch benchmark utilities: ``torch.utils.benchmark.Timer``. Python's :mod:`timeit` (the minimum
of repeated timings).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable

import torch
from torch.utils import benchmark

from assocmem._checks import as_int, as_real
from assocmem.devices import resolve_device

__all__ = [
    "machine_info",
    "time_call",
    "gemm_rate",
    "fastest_thread_count",
]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: str | torch.device = "cpu", num_threads: int | None = 1, *,
                 load_average: bool = False) -> dict[str, str]:
    """Where timings were taken: processor, cores, threads, accelerator, software versions.

    Parameters
    ----------
    device : str or torch.device, default "cpu"
        The device timed (resolved with :func:`assocmem.devices.resolve_device`).
    num_threads : int or None, default 1
        CPU threads used while timing (``None``: torch's current setting).
    load_average : bool, default False
        Also report the system load average at the time of the call (how busy a shared machine
        was, which inflates wall-clock times).

    Returns
    -------
    dict of str to str
        Keys ``cpu``, ``cpu_cores``, ``threads``, ``device``, ``torch``, ``python``, ``os``; with
        ``load_average=True`` also ``load_average``: the 1, 5 and 15 minute load averages, e.g.
        ``"0.52, 0.81, 1.64 (1, 5, 15 min)"``, or ``"unavailable"`` where the platform has none.

    Raises
    ------
    ValueError
        If ``num_threads`` is not ``None`` or an integer ``>= 1``, or ``device`` is unknown.
    RuntimeError
        If ``device`` is not available here.
    """
    if num_threads is not None:
        num_threads = as_int(num_threads, "num_threads", minimum=1)
    dev = resolve_device(device)
    name = "cpu"
    if dev.type == "cuda":
        name = f"cuda ({torch.cuda.get_device_name(dev)})"
    elif dev.type == "mps":
        name = "mps"
    info = {
        "cpu": _cpu_model(),
        "cpu_cores": str(os.cpu_count()),
        "threads": str(torch.get_num_threads() if num_threads is None else num_threads),
        "device": name,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
    }
    if load_average:
        info["load_average"] = _load_average()
    return info


def _load_average() -> str:
    """The 1, 5 and 15 minute load averages as text, or ``"unavailable"``."""
    try:
        loads = os.getloadavg()
    except (AttributeError, OSError):
        return "unavailable"
    return f"{', '.join(f'{x:.2f}' for x in loads)} (1, 5, 15 min)"


def time_call(fn: Callable[[], object], *, min_run_time: float = 0.1, num_threads: int = 1,
              stat: str = "min") -> float:
    """Wall-clock seconds of one call of ``fn()``: the fastest (or median) block average.

    Uses :meth:`torch.utils.benchmark.Timer.blocked_autorange`: a warm-up call, then blocks of
    calls sized automatically until ``min_run_time`` seconds have been spent; accelerators are
    synchronised around each block. Each block gives one average time per call. The minimum over
    blocks is the default because interference from other processes only ever adds time (the
    advice of Python's :mod:`timeit`); the median is the alternative.

    Parameters
    ----------
    fn : callable with no arguments
    min_run_time : float, default 0.1
        Seconds of measurement (at least one block is run whatever its length).
    num_threads : int, default 1
        CPU threads torch may use while timing.
    stat : {"min", "median"}, default "min"
        Statistic over the blocks.

    Returns
    -------
    float
        Seconds per call (machine-dependent).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    ValueError
        If ``min_run_time`` is not a positive finite number (booleans and strings are refused),
        ``num_threads`` is not an integer ``>= 1`` or ``stat`` is unknown.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable with no arguments, got {type(fn).__name__}")
    min_run_time = _run_time(min_run_time)
    num_threads = as_int(num_threads, "num_threads", minimum=1)
    if not isinstance(stat, str) or stat not in ("min", "median"):
        raise ValueError(f"unknown stat {stat!r}; expected 'min' or 'median'")
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=num_threads)
    m = timer.blocked_autorange(min_run_time=min_run_time)
    return float(min(m.times)) if stat == "min" else float(m.median)


def _run_time(value) -> float:
    """``min_run_time`` as a positive finite float (seconds of measurement)."""
    try:
        return as_real(value, "min_run_time", minimum=0, strict_min=True)
    except ValueError:
        raise ValueError(f"min_run_time must be a positive finite number of seconds; got {value!r}") from None


def gemm_rate(n: int, k: int, p: int, *, num_threads: int | None = None, min_run_time: float = 0.5) -> float:
    """Achieved float64 GFLOP/s of an ``(n, k) @ (k, p)`` matrix product on the CPU.

    The machine's reference rate for the benchmarks: ``2 n k p`` flops over the median time per
    product (:func:`time_call` with ``stat="median"``).

    Parameters
    ----------
    n, k, p : int
        Matrix sizes, each ``>= 1``.
    num_threads : int or None, default None
        CPU threads; ``None`` uses torch's current setting.
    min_run_time : float, default 0.5
        Seconds of measurement.

    Returns
    -------
    float
        GFLOP/s (machine-dependent).

    Raises
    ------
    ValueError
        If a size is not an integer ``>= 1``, ``num_threads`` is not ``None`` or an integer
        ``>= 1``, or ``min_run_time`` is not a positive finite number.
    """
    sizes = [as_int(v, f"matrix size {name}") for name, v in (("n", n), ("k", k), ("p", p))]
    if min(sizes) < 1:
        raise ValueError(f"matrix sizes must be >= 1; got {(n, k, p)}")
    n, k, p = sizes
    min_run_time = _run_time(min_run_time)
    threads = torch.get_num_threads() if num_threads is None else as_int(num_threads, "num_threads", minimum=1)
    a = torch.randn(n, k, dtype=torch.float64)
    b = torch.randn(k, p, dtype=torch.float64)
    seconds = time_call(lambda: a @ b, min_run_time=min_run_time, num_threads=threads, stat="median")
    return 2 * n * k * p / seconds / 1e9


def fastest_thread_count(shape: tuple[int, int, int] = (1024, 512, 512), min_run_time: float = 0.3) -> int:
    """The faster of one thread and all available cores on a probe GEMM of ``shape``.

    On a loaded machine an OpenMP team larger than the free cores can be far slower than one
    thread, so the benchmarks measure before they choose.

    Returns
    -------
    int
        1 or the number of cores this process may run on.

    Raises
    ------
    ValueError
        If ``shape`` is not three integers ``>= 1`` or ``min_run_time`` is not a positive finite
        number.
    """
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__") or len(shape) != 3:
        raise ValueError(f"shape must be three matrix sizes (n, k, p), got {shape!r}")
    shape = tuple(as_int(v, "shape entry", minimum=1) for v in shape)
    min_run_time = _run_time(min_run_time)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(sorted({1, cores}),
               key=lambda t: gemm_rate(*shape, num_threads=t, min_run_time=min_run_time))
