"""Executors: where a sweep's points run. Serial, a local process pool, or a Ray cluster.

Every executor hands back results as tasks finish (``map_unordered``), so the driver commits each
point as soon as it is done and the order in which points finish does not matter. When a task
raises, no new task is started; tasks already running are allowed to finish and their results
are still handed back, then :class:`TaskError` is raised.

Devices: the serial and process executors resolve the device once, in the driver
(:func:`assocmem.devices.resolve_device`). The Ray executor asks Ray for one GPU per task when the
device is CUDA (or ``"auto"`` on a cluster that has GPUs); Ray then makes exactly that GPU
visible to the task, which therefore uses ``"cuda"``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from assocmem._checks import as_int
from assocmem.devices import resolve_device

__all__ = ["EXECUTORS", "TaskError", "Executor", "SerialExecutor", "ProcessExecutor", "RayExecutor", "make_executor"]

#: Names accepted by :func:`make_executor` and the CLI's ``--executor``.
EXECUTORS = ("serial", "process", "ray")


class TaskError(RuntimeError):
    """A task raised. ``index`` is its position in the submitted list, ``cause`` the exception."""

    def __init__(self, index: int, cause: BaseException) -> None:
        self.index, self.cause = index, cause
        super().__init__(f"task {index} failed: {type(cause).__name__}: {cause}")


class Executor:
    """Common interface. Use as a context manager; :meth:`map_unordered` inside it.

    Parameters
    ----------
    workers : int or None
        Parallel workers (ignored by the serial executor); ``None`` means ``os.cpu_count()``.
        Python or numpy integers ``>= 1``; not booleans.

    Raises
    ------
    ValueError
        If ``workers`` is not ``None`` or an integer ``>= 1``.
    """

    name = "base"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None:
            try:
                workers = as_int(workers, "workers", minimum=1)
            except ValueError:
                raise ValueError(f"workers must be a positive integer or None; got {workers!r}") from None
        self.workers = workers

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Release processes or clusters this executor started."""

    def task_device(self, device: str | None) -> str:
        """The device string each task receives (it resolves it again with ``resolve_device``)."""
        return str(resolve_device(device))

    def map_unordered(self, fn: Callable, args: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Run ``fn(*args[i])`` for every ``i`` and yield ``(i, result)`` as each finishes.

        Raises
        ------
        TaskError
            After the tasks still running have finished, if some task raised.
        """
        raise NotImplementedError

    def describe(self) -> dict:
        """What to record in the provenance."""
        return {"executor": self.name, "workers": self.workers}


class SerialExecutor(Executor):
    """Runs the tasks one after another in this process (the reference executor)."""

    name = "serial"

    def map_unordered(self, fn: Callable, args: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        for i, a in enumerate(args):
            try:
                result = fn(*a)
            except Exception as exc:
                raise TaskError(i, exc) from exc
            yield i, result

    def describe(self) -> dict:
        return {"executor": self.name, "workers": 1}


def _init_process_worker(threads: int) -> None:
    """Initialiser of pool workers: share the cores between workers, no nested progress bars.

    The thread count goes into ``OMP_NUM_THREADS`` before torch is imported (the worker imports
    it when it unpickles its first task), and into torch directly if it is already loaded.
    """
    os.environ["ASSOCMEM_QUIET"] = "1"
    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


class ProcessExecutor(Executor):
    """A local :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method.

    ``spawn`` is safe with CUDA and threads and works the same on Linux, macOS and Windows; the
    function and its arguments must therefore be picklable (module-level functions, dataclass
    configs). Each worker gets ``max(1, cpu_count // workers)`` torch threads.
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        super().__init__(workers)
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            n = self.workers or os.cpu_count() or 1
            threads = max(1, (os.cpu_count() or 1) // n)
            ctx = multiprocessing.get_context("spawn")  # workers start on demand, up to n
            self._pool = ProcessPoolExecutor(
                max_workers=n, mp_context=ctx, initializer=_init_process_worker, initargs=(threads,)
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def map_unordered(self, fn: Callable, args: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        if not args:
            return
        pool = self._get_pool()
        futures = {pool.submit(fn, *a): i for i, a in enumerate(args)}
        pending = set(futures)
        failure: TaskError | None = None
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    if fut.cancelled():
                        continue
                    exc = fut.exception()
                    if exc is not None:
                        if failure is None:
                            failure = TaskError(futures[fut], exc)
                            for other in pending:
                                other.cancel()
                        continue
                    yield futures[fut], fut.result()
        finally:
            for fut in pending:
                fut.cancel()
        if failure is not None:
            raise failure from failure.cause

    def describe(self) -> dict:
        return {"executor": self.name, "workers": self.workers or os.cpu_count()}


class RayExecutor(Executor):
    """Each point is a Ray task; ``num_gpus=1`` per task when the device is CUDA.

    Parameters
    ----------
    workers : int or None
        CPUs of the local Ray instance started when there is no ``address`` (default: all);
        ignored when connecting to a cluster.
    address : str or None
        A running cluster (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``). ``None``
        starts a local instance, shut down on :meth:`close`. If Ray is already initialised in
        this process, that instance is used and left running.
    init_kwargs : dict or None
        Further keyword arguments for :func:`ray.init` (e.g. ``runtime_env``).

    Notes
    -----
    The cluster's workers must be able to import ``assocmem`` (and the module defining the
    sweep): install the package on every node, or pass a ``runtime_env``.

    Raises
    ------
    ValueError
        If ``workers`` is not ``None`` or an integer ``>= 1``, or ``address`` is not ``None`` or
        a non-empty str.
    """

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None,
                 init_kwargs: dict | None = None) -> None:
        super().__init__(workers)
        if address is not None and (not isinstance(address, str) or not address):
            raise ValueError(f"address must be a Ray cluster address such as 'auto' or 'HOST:6379', or None; "
                             f"got {address!r}")
        self.address = address
        self.init_kwargs = dict(init_kwargs or {})
        self.num_gpus = 0
        self.startup_s: float | None = None
        self._owns = False
        self._ray = None
        self._resources: dict = {}

    def __enter__(self) -> RayExecutor:
        try:
            import ray
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("the Ray executor needs Ray: pip install 'ray>=2.9'") from None
        self._ray = ray
        if not ray.is_initialized():
            kwargs = {"include_dashboard": False, "logging_level": logging.WARNING}
            if self.address is None:
                kwargs["num_cpus"] = self.workers or os.cpu_count()
            else:
                kwargs["address"] = self.address
            kwargs.update(self.init_kwargs)
            start = time.perf_counter()
            ray.init(**kwargs)
            self.startup_s = time.perf_counter() - start
            self._owns = True
        self._resources = dict(ray.cluster_resources())
        return self

    def close(self) -> None:
        if self._owns and self._ray is not None:
            self._ray.shutdown()
            self._owns = False

    def _cluster_gpus(self) -> float:
        return float(self._resources.get("GPU", 0))

    def task_device(self, device: str | None) -> str:
        if self._ray is None:
            raise RuntimeError("use RayExecutor as a context manager")
        name = str(resolve_device(None)) if device is None else str(device)
        kind = name.split(":")[0]
        if kind == "auto":
            if self._cluster_gpus() > 0:
                self.num_gpus = 1
                return "cuda"
            self.num_gpus = 0
            return "auto"
        if kind == "cuda":
            if self._cluster_gpus() <= 0:
                raise RuntimeError(f"device {name!r} requested but the Ray cluster has no GPU")
            self.num_gpus = 1
            return "cuda"  # Ray makes the task's GPU the only visible one
        if kind not in ("cpu", "mps"):
            resolve_device(name)  # raises a clear error for unknown names
        self.num_gpus = 0
        return name

    def map_unordered(self, fn: Callable, args: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        if self._ray is None:
            raise RuntimeError("use RayExecutor as a context manager")
        ray = self._ray
        if not args:
            return
        remote = ray.remote(fn).options(num_cpus=1, num_gpus=self.num_gpus)
        index = {}
        for i, a in enumerate(args):
            index[remote.remote(*a)] = i
        pending = list(index)
        failure: TaskError | None = None
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    try:
                        value = ray.get(ref)
                    except Exception as exc:
                        if failure is None:
                            failure = TaskError(index[ref], getattr(exc, "cause", None) or exc)
                            for other in pending:
                                ray.cancel(other)
                        continue
                    yield index[ref], value
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref)
                except Exception:  # pragma: no cover - best effort on the way out
                    pass
        if failure is not None:
            raise failure from failure.cause

    def describe(self) -> dict:
        info = {"executor": self.name, "address": self.address or "local", "gpus_per_task": self.num_gpus}
        if self._ray is not None:
            info["ray"] = self._ray.__version__
            info["cluster_cpus"] = self._resources.get("CPU", 0)
            info["cluster_gpus"] = self._resources.get("GPU", 0)
        info["workers"] = self.workers if self.address is None else None
        if self.startup_s is not None:
            info["ray_startup_s"] = round(self.startup_s, 3)
        return info


def make_executor(name: str, *, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor called ``name``.

    Parameters
    ----------
    name : {"serial", "process", "ray"}
    workers : int or None
        Parallel workers (process pool size; CPUs of a local Ray instance).
    address : str or None
        Ray cluster address (Ray only).

    Raises
    ------
    ValueError
        Unknown name, ``address`` given to a non-Ray executor, or bad ``workers``/``address``.
    """
    if not isinstance(name, str) or name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; valid executors: {', '.join(EXECUTORS)}")
    if address is not None and name != "ray":
        raise ValueError("--address is only meaningful with the Ray executor")
    if name == "serial":
        return SerialExecutor(workers)
    if name == "process":
        return ProcessExecutor(workers)
    return RayExecutor(workers, address)
