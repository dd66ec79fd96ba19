"""Benchmark helpers: where timings were taken, wall-clock time of one call, and reference rates.

A wall-clock time means little without the machine it was measured on and a reference measured in
the same run. :func:`machine_info` describes the processor, cores, threads, accelerator and
software versions (and, on request, how loaded a shared machine was); :func:`time_call` times one
callable with :class:`torch.utils.benchmark.Timer` (warm-up, automatic number of runs,
accelerator synchronisation, a fixed number of threads), keeping the fastest block by default, as
Python's :mod:`timeit` advises; :func:`gemm_rate` measures the machine's float64 GEMM rate, the
same-run reference of the benchmarks; :func:`fastest_thread_count` picks one thread or all cores by
measuring. :class:`CpuLoad` records how loaded a shared machine was during a block of timings
(``/proc/loadavg`` and the CPU share of other processes, from ``/proc/stat``), and
:func:`load_capped_threads` is the thread rule of the fast paths under load: it lowers torch's
thread count to the cores that other processes leave free (see its docstring). Everything here is
machine-dependent. Chapter 01's timings (:mod:`assocmem.linear.timing`)
and the scripts in ``benchmarks/`` use it.

References
----------
PyTorch benchmark utilities: ``torch.utils.benchmark.Timer``. Python's :mod:`timeit` (the minimum
of repeated timings).
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
from collections.abc import Callable, Iterator

import torch

from assocmem._checks import as_int, as_real
from assocmem.devices import resolve_device

__all__ = [
    "machine_info",
    "time_call",
    "gemm_rate",
    "fastest_thread_count",
    "usable_cores",
    "others_running",
    "free_cores",
    "load_capped_threads",
    "CpuLoad",
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
    from torch.utils import benchmark  # imported here: 0.2 s that the library's users need not pay

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


# ------------------------------------------------------------------------------------------------
# load on a shared machine, and the thread rule of the fast paths


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _own_running() -> int:
    """Threads of this process in state R (running or runnable), from ``/proc/self/task``."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                text = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        end = text.rfind(b")")
        if end >= 0 and text[end + 2 : end + 3] == b"R":
            count += 1
    return max(1, count)  # the thread reading this is running


def others_running() -> int | None:
    """Runnable tasks of *other* processes right now: ``/proc/loadavg``'s running count minus ours.

    The fourth field of ``/proc/loadavg`` counts the tasks (threads) that are running or waiting
    for a core at this instant, system-wide; this process's own running threads (its OpenMP
    workers may be spinning) are read from ``/proc/self/task`` and subtracted. An instantaneous
    reading, not an average: a process that is busy all the time (a background job) is always
    counted, a short-lived one only while it runs.

    Returns
    -------
    int or None
        ``>= 0``; ``None`` where ``/proc`` is unavailable (not Linux).
    """
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None
    return max(0, running - _own_running())


_FREE_CACHE: list[float] = [-1.0, 0.0]  # [time of the reading, free cores]
#: Seconds a reading of :func:`free_cores` is reused (reading costs about 0.1 ms).
FREE_CORES_TTL = 0.1


def free_cores(max_age: float = FREE_CORES_TTL) -> int:
    """Cores not taken by other processes: :func:`usable_cores` minus :func:`others_running`, at least 1.

    A reading younger than ``max_age`` seconds is reused. Where ``/proc`` is unavailable every
    usable core counts as free.

    Returns
    -------
    int
        In ``[1, usable_cores()]``.
    """
    now = time.monotonic()
    if now - _FREE_CACHE[0] <= max_age:
        return int(_FREE_CACHE[1])
    others = others_running()
    cores = usable_cores()
    free = cores if others is None else max(1, cores - others)
    _FREE_CACHE[0], _FREE_CACHE[1] = now, free
    return free


def _cap_enabled() -> bool:
    return os.environ.get("ASSOCMEM_LOAD_CAP", "1").strip().lower() not in ("0", "false", "no", "off")


@contextlib.contextmanager
def load_capped_threads(threads: int | None = None) -> Iterator[int]:
    """Run the block with torch's CPU threads capped at the cores other processes leave free.

    The thread rule of the library's fast paths on a shared machine (the whitened construction
    :func:`assocmem.mlps.mlp.hebbian_mlp`, the data-dependent construction and the capacity
    search): the block runs with ``min(threads, free_cores())`` threads, where ``threads`` is
    torch's current setting unless given, and torch's setting is restored afterwards. Reason:
    the blocked fast paths run hundreds of short parallel regions per call, and an OpenMP team
    with more threads than free cores waits at the end of each one for a thread that the
    scheduler has put off the core; on two cores with one busy background process, two threads
    made the whitened construction 1.2-2.9x slower than one (issue 19). Capping never changes a
    result beyond the rounding that any thread count gives (the libraries' reductions may be
    split differently).

    Set the environment variable ``ASSOCMEM_LOAD_CAP=0`` to turn the cap off (to measure what it
    saves).

    Parameters
    ----------
    threads : int or None, default None
        The most threads to use (``None``: torch's current setting).

    Yields
    ------
    int
        The thread count used inside the block.

    Raises
    ------
    ValueError
        If ``threads`` is not ``None`` or an integer ``>= 1``.
    """
    before = torch.get_num_threads()
    want = before if threads is None else as_int(threads, "threads", minimum=1)
    use = min(want, free_cores()) if _cap_enabled() and want > 1 else want
    if use == before:
        yield use
        return
    torch.set_num_threads(use)
    try:
        yield use
    finally:
        torch.set_num_threads(before)


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all cores since boot, from the ``cpu`` line of ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal (guest times are already in user / nice)
    total = sum(fields[:8])
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return total - idle, total


def _own_jiffies() -> int | None:
    """Clock ticks this process (all its threads) has run, user + system, from ``/proc/self/stat``."""
    try:
        with open("/proc/self/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rfind(b")") + 2 :].split()
    return int(rest[11]) + int(rest[12])  # fields 14 and 15 of stat(5): utime, stime


def _loadavg() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


class CpuLoad:
    """How loaded the machine was during a block of timings: load average and others' CPU share.

    Use as a context manager around the block (or call :meth:`start` and :meth:`stop`)::

        with CpuLoad() as load:
            ...  # timings
        load.summary()   # {'loadavg_1min': ..., 'others_share': ..., ...}

    ``others_share`` is the fraction of the machine's CPU time (all cores of ``/proc/stat``)
    that processes *other than this one* used during the block: the busy clock ticks of every
    core minus this process's own ticks, over the block's total ticks. ``1 / cores`` is one
    core kept busy by someone else. It is ``None`` where ``/proc`` is unavailable.
    """

    def __init__(self) -> None:
        self._start = self._stop = None

    def _sample(self):
        return time.perf_counter(), _cpu_jiffies(), _own_jiffies(), _loadavg(), others_running()

    def start(self) -> "CpuLoad":
        self._start, self._stop = self._sample(), None
        return self

    def stop(self) -> "CpuLoad":
        if self._start is None:
            raise RuntimeError("CpuLoad.stop() before start()")
        self._stop = self._sample()
        return self

    def __enter__(self) -> "CpuLoad":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def summary(self) -> dict[str, float | None]:
        """The block's load figures.

        Returns
        -------
        dict
            ``seconds`` (wall time of the block), ``loadavg_1min`` at its start and end
            (``loadavg_start``, ``loadavg_end``), ``others_share`` (see the class docstring;
            in ``[0, 1]``), ``own_share`` (this process's share of the machine), and
            ``others_running`` (runnable tasks of other processes at the end). A figure
            ``/proc`` cannot give is ``None``.

        Raises
        ------
        RuntimeError
            If the block has not been started and stopped.
        """
        if self._start is None or self._stop is None:
            raise RuntimeError("CpuLoad.summary() needs a finished block (start, then stop)")
        (t0, j0, o0, l0, _), (t1, j1, o1, l1, r1) = self._start, self._stop
        out: dict[str, float | None] = {
            "seconds": t1 - t0,
            "loadavg_start": None if l0 is None else l0[0],
            "loadavg_end": None if l1 is None else l1[0],
            "others_share": None,
            "own_share": None,
            "others_running": r1,
        }
        if j0 is not None and j1 is not None and o0 is not None and o1 is not None and j1[1] > j0[1]:
            total = j1[1] - j0[1]
            own = o1 - o0
            out["own_share"] = min(1.0, own / total)
            out["others_share"] = min(1.0, max(0.0, (j1[0] - j0[0] - own) / total))
        return out
