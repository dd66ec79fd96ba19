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
thread count to the cores that other processes leave free, judged by the CPU time they used over
the last quarter of a second or more (:func:`others_cores`, :func:`free_cores`). Everything here is
machine-dependent. Chapter 01's timings (:mod:`assocmem.linear.timing`)
and the scripts in ``benchmarks/`` use it.

References
----------
PyTorch benchmark utilities: ``torch.utils.benchmark.Timer``. Python's :mod:`timeit` (the minimum
of repeated timings).
"""

from __future__ import annotations

import contextlib
import math
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
    "others_cores",
    "free_cores",
    "load_capped_threads",
    "load_cap_enabled",
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


def machine_info(device: str | torch.device | None = None, num_threads: int | None = 1, *,
                 load_average: bool = False) -> dict[str, str]:
    """Where timings were taken: processor, cores, threads, accelerator, software versions.

    Parameters
    ----------
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
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


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all cores since boot, from the ``cpu`` line of ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 4:
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
        rest = text[text.rfind(b")") + 2 :].split()
        return int(rest[11]) + int(rest[12])  # fields 14 and 15 of stat(5): utime, stime
    except (OSError, IndexError, ValueError):
        return None


def _cpu_sample() -> tuple[int, int, int] | None:
    """(busy ticks of all cores, total ticks of all cores, this process's ticks), or ``None``."""
    cpu = _cpu_jiffies()
    own = _own_jiffies() if cpu is not None else None
    return None if own is None else (cpu[0], cpu[1], own)


def _shares(s0: tuple[int, int, int], s1: tuple[int, int, int]) -> tuple[float, float] | None:
    """(others' share, own share) of all cores' ticks between two :func:`_cpu_sample` readings.

    Others' ticks are the busy ticks of every core minus this process's own; both shares are
    clipped to ``[0, 1]`` (the two counters are kept by different kernel accounting and may
    disagree by a tick). ``None`` if no tick passed.
    """
    total = s1[1] - s0[1]
    if total <= 0:
        return None
    own = max(0, s1[2] - s0[2])
    others = (s1[0] - s0[0] - own) / total
    return min(1.0, max(0.0, others)), min(1.0, own / total)


#: Seconds a reading of :func:`others_cores` (and so of :func:`free_cores`) is reused.
FREE_CORES_TTL = 0.1
#: Shortest window, in seconds, over which other processes' CPU use is measured: 25 clock ticks
#: per core at the usual ``USER_HZ = 100``, so one tick of rounding is 0.04 of a core.
LOAD_WINDOW = 0.25
#: Cores' worth of CPU time over the window from which other processes count as holding a core.
TAKE_CORE_AT = 0.5
#: The estimate before the first window has passed: no core taken.
DEFAULT_OTHERS_CORES = 0.0


class _LoadState:
    """The thread rule's running estimate (one per process; reset in a forked child)."""

    __slots__ = ("anchor", "others", "checked")

    def __init__(self) -> None:
        self.anchor: tuple[float, tuple[int, int, int]] | None = None  # (time, sample) the window starts at
        self.others: float | None = DEFAULT_OTHERS_CORES  # None: /proc unavailable
        self.checked: float | None = None  # time of the last reading


_STATE = _LoadState()


def _now() -> float:
    return time.monotonic()


def others_cores(max_age: float = FREE_CORES_TTL) -> float | None:
    """Cores' worth of CPU time that *other* processes used over the last window of at least 0.25 s.

    From two readings of the ``cpu`` line of ``/proc/stat`` (busy clock ticks of all cores) and of
    ``/proc/self/stat`` (this process's user + system ticks, all its threads): other processes'
    ticks over all ticks, times ``os.cpu_count()``. ``1.0`` is one core kept busy by someone else
    throughout; a shell or a daemon that wakes up for a few milliseconds adds a few hundredths.

    No background thread and no waiting: the module keeps the reading a window started at. A call
    reads the counters (two small files, about 0.05 ms); once at least :data:`LOAD_WINDOW`
    (0.25 s) has passed since the window's start it replaces the estimate by the share over that
    window and starts the next window there; otherwise it returns the previous estimate. A reading
    younger than ``max_age`` seconds is reused without touching ``/proc``. The first window starts
    when this module is imported with the thread rule on (or when a forked child starts), else at
    the first call; until it has passed, the
    estimate is :data:`DEFAULT_OTHERS_CORES` (0: every core free, as on a platform without
    ``/proc``). The window covers whatever happened since the previous reading, so after a long
    pause it is a long average.

    Parameters
    ----------
    max_age : float, default FREE_CORES_TTL (0.1)
        Seconds a previous reading may be reused (0 always reads the counters).

    Returns
    -------
    float or None
        In ``[0, os.cpu_count()]``; ``None`` where ``/proc`` is unavailable (not Linux).

    Raises
    ------
    ValueError
        If ``max_age`` is not a finite number ``>= 0``.
    """
    if not (type(max_age) in (float, int) and 0 <= max_age < math.inf):
        max_age = as_real(max_age, "max_age", minimum=0)
    now = _now()
    state = _STATE
    if state.checked is not None and now - state.checked < max_age:
        return state.others
    state.checked = now
    sample = _cpu_sample()
    if sample is None:
        state.anchor, state.others = None, None
        return None
    if state.anchor is None:
        state.anchor = (now, sample)
        if state.others is None:
            state.others = DEFAULT_OTHERS_CORES
        return state.others
    start, first = state.anchor
    if now - start >= LOAD_WINDOW:
        shares = _shares(first, sample)
        if shares is not None:
            state.others = shares[0] * (os.cpu_count() or 1)
        state.anchor = (now, sample)
    return state.others


def _reset_load_state() -> None:
    """Start a new window now, with the default estimate (at import, and in a forked child).

    ``/proc`` is read here only where the thread rule is turned on (:func:`load_cap_enabled`): a
    process that has not opted in never reads it unless it asks (:func:`others_cores`)."""
    global _STATE
    _STATE = _LoadState()
    if load_cap_enabled():
        others_cores(max_age=0)




def free_cores(max_age: float = FREE_CORES_TTL) -> int:
    """Cores not held by other processes: :func:`usable_cores` minus the cores others keep busy.

    Others hold ``floor(others_cores() + 1 - TAKE_CORE_AT)`` cores: a process that kept at least
    half a core busy over the last window (:func:`others_cores`) takes a core, brief wake-ups do
    not. Where ``/proc`` is unavailable every usable core counts as free.

    Parameters
    ----------
    max_age : float, default FREE_CORES_TTL (0.1)
        Passed to :func:`others_cores`.

    Returns
    -------
    int
        In ``[1, usable_cores()]``.

    Raises
    ------
    ValueError
        If ``max_age`` is not a finite number ``>= 0``.
    """
    others = others_cores(max_age)
    cores = usable_cores()
    if others is None:
        return cores
    return max(1, cores - math.floor(others + 1.0 - TAKE_CORE_AT))


def load_cap_enabled() -> bool:
    """Whether the thread rule is on: only when the environment variable ``ASSOCMEM_LOAD_CAP`` is
    ``1``, ``true``, ``yes`` or ``on``.

    Off by default: a library does not change torch's thread count (a process-wide setting) on
    its caller's behalf. The book's own command line (``python -m assocmem sweep``) and
    ``make bench`` turn it on for their processes; a user opts in by setting the variable.
    """
    return os.environ.get("ASSOCMEM_LOAD_CAP", "0").strip().lower() in ("1", "true", "yes", "on")


_reset_load_state()
if hasattr(os, "register_at_fork"):  # a child's own ticks start at 0: its window must too
    os.register_at_fork(after_in_child=_reset_load_state)


@contextlib.contextmanager
def load_capped_threads(threads: int | None = None) -> Iterator[int]:
    """Run the block with torch's CPU threads capped at the cores other processes leave free.

    The thread rule of the library's fast paths on a shared machine (the whitened construction
    :func:`assocmem.mlps.mlp.hebbian_mlp`, the data-dependent construction, each width of the
    capacity search, the SDM read rules' ``step`` and linear attention): the block runs with
    ``min(threads, free_cores())`` threads, where ``threads`` is torch's current setting unless
    given, and torch's setting is restored afterwards. :func:`free_cores` counts a core as taken
    when other processes kept at least half a core busy over the last quarter of a second or more
    (:func:`others_cores`), so a background job takes its core and a shell waking up does not.
    Reason: the blocked fast paths run hundreds of short parallel regions per call, and an OpenMP
    team with more threads than free cores waits at the end of each one for a thread that the
    scheduler has put off the core; on two cores with one busy background process, two threads
    made the whitened construction 1.2-2.9x slower than one (issue 19). Capping never changes a
    result beyond the rounding that any thread count gives (the libraries' reductions may be
    split differently).

    The rule is opt-in (:func:`load_cap_enabled`): without ``ASSOCMEM_LOAD_CAP=1`` the block runs
    at torch's setting and nothing is changed. Even when on, torch's setting is process-wide for
    the duration of the block, which other Python threads of the process see; the book's command
    line and benchmarks, which own their processes, turn it on.

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
    use = min(want, free_cores()) if want > 1 and load_cap_enabled() else want
    if use == before:
        yield use
        return
    torch.set_num_threads(use)
    try:
        yield use
    finally:
        torch.set_num_threads(before)


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
    core minus this process's own ticks, over the block's total ticks (the quantity the thread
    rule, :func:`others_cores`, measures over its shorter windows). ``1 / cores`` is one core
    kept busy by someone else. It is ``None`` where ``/proc`` is unavailable.
    """

    def __init__(self) -> None:
        self._start = self._stop = None

    def _sample(self):
        return time.perf_counter(), _cpu_sample(), _loadavg()

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
            in ``[0, 1]``) and ``own_share`` (this process's share of the machine). A figure
            ``/proc`` cannot give is ``None``.

        Raises
        ------
        RuntimeError
            If the block has not been started and stopped.
        """
        if self._start is None or self._stop is None:
            raise RuntimeError("CpuLoad.summary() needs a finished block (start, then stop)")
        (t0, s0, l0), (t1, s1, l1) = self._start, self._stop
        shares = _shares(s0, s1) if s0 is not None and s1 is not None else None
        return {
            "seconds": t1 - t0,
            "loadavg_start": None if l0 is None else l0[0],
            "loadavg_end": None if l1 is None else l1[0],
            "others_share": None if shares is None else shares[0],
            "own_share": None if shares is None else shares[1],
        }
