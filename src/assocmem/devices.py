"""Device selection shared by every module: ``device=None`` (the default of every public
signature) is torch's default device, ``torch.get_default_device()``, as in torch; the explicit
``device="auto"`` picks CUDA, then MPS, then CPU.

MPS has no float64: :func:`resolve_device` given ``dtype=torch.float64`` skips it under
``"auto"`` and refuses it when it is asked for by name.

Random draws follow one rule across the library: they happen on the CPU, from a CPU generator
seeded by the seed, and the result moves to the target device, so that a seed gives the same
numbers on every device (the book's committed outputs are CPU draws). :func:`check_cpu_generator`
refuses a generator of another device where a user may pass one.

Also :func:`torch_threads`, the one place that sets torch's CPU thread count for a block of work
and restores it afterwards.
"""

from __future__ import annotations

import contextlib
import re
from numbers import Integral

import torch

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["resolve_device", "check_cpu_generator", "torch_threads", "uniform_on_cpu_"]

_KNOWN = ("auto", "cpu", "cuda", "mps")


def resolve_device(device: str | torch.device | None = None, *,
                   dtype: torch.dtype | None = None) -> torch.device:
    """Turn a device request into a :class:`torch.device`.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` is torch's default device (``torch.get_default_device()``: the CPU unless the
        caller's process set another with :func:`torch.set_default_device`); the library's
        ``device=None`` defaults all resolve here. ``"auto"`` picks CUDA if available, then
        Apple MPS, then the CPU.
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` (and ``"cpu:0"``, ``"mps:0"``) are passed
        through after checking the backend exists. A :class:`torch.device` is returned as it is,
        after the same check for CUDA and MPS. ``"meta"`` is torch's meta device: tensors with a
        shape and no storage, for building a module whose ``state_dict`` is then loaded with
        ``load_state_dict(..., assign=True)``.
    dtype : torch.dtype, optional
        The dtype the caller will compute in. ``torch.float64``: ``"auto"`` skips MPS (Apple
        GPUs have no float64; CUDA, else the CPU), and an MPS device asked for by name is refused.
        Any other value changes nothing (the caller checks its own dtype argument).

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If ``device`` is not a string, a :class:`torch.device` or ``None``; if the name is not
        one of ``auto``, ``cpu``, ``cuda``, ``mps`` (names are case-sensitive, without spaces); if
        its index is not a non-negative integer (``"cuda:x"``, ``"cpu:-1"``, ``"auto:0"``); or if an MPS device is asked for
        with ``dtype=torch.float64`` (the message names float32 and the CPU).
    RuntimeError
        If a CUDA or MPS device is requested but not available on this machine, or ``cuda:N``
        names a GPU this machine does not have.
    """
    wide = isinstance(dtype, torch.dtype) and dtype == torch.float64
    if device is None:
        device = torch.get_default_device()
    if isinstance(device, torch.device):
        _check_available(device, repr(device))
        return _check_float64(device, repr(device), wide)
    if isinstance(device, str) and device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if not wide and mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device == "meta":
        return torch.device("meta")
    if not isinstance(device, str):
        raise ValueError(f"unknown device {device!r}: device must be a str ({_KNOWN}, optionally "
                         f"'cuda:N'), a torch.device or None, got {type(device).__name__}")
    kind, sep, index = device.partition(":")
    if kind not in _KNOWN:
        raise ValueError(f"unknown device {device!r}; expected one of {_KNOWN} (optionally 'cuda:N')")
    if sep and kind == "auto":
        raise ValueError(f"unknown device {device!r}: 'auto' takes no index (use 'auto' or 'cuda:N')")
    if sep and not re.fullmatch(r"[0-9]+", index):
        raise ValueError(f"unknown device {device!r}: the index after ':' must be a non-negative integer "
                         "(e.g. 'cuda:1')")
    out = torch.device(device)
    _check_available(out, repr(device))
    return _check_float64(out, repr(device), wide)


def _check_float64(device: torch.device, shown: str, wide: bool) -> torch.device:
    """``device``, or a ValueError if it is MPS and the caller computes in float64."""
    if wide and device.type == "mps":
        raise ValueError(f"device {shown} cannot compute in torch.float64 (Apple's MPS has no float64); "
                         "use dtype=torch.float32 on MPS, or device='cpu' (device='auto' picks the CPU "
                         "for float64 on a Mac)")
    return device


def check_cpu_generator(generator: torch.Generator, name: str = "seed") -> torch.Generator:
    """``generator`` if it draws on the CPU; a clear error otherwise.

    The library draws on the CPU and moves the result (module docstring), so a generator of
    another device could not drive the draw; refusing it says why, where torch would fail with a
    device mismatch deep inside the call.

    Parameters
    ----------
    generator : torch.Generator
    name : str, default "seed"
        The argument's name in the caller, for the message.

    Returns
    -------
    torch.Generator
        ``generator`` itself.

    Raises
    ------
    ValueError
        If ``generator`` is not a :class:`torch.Generator`, or lives on a device other than the
        CPU (the message says to pass an int seed or a CPU generator).
    """
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"{name} must be a torch.Generator here; got {type(generator).__name__}")
    if generator.device.type != "cpu":
        raise ValueError(f"{name} is a torch.Generator on {generator.device}; random draws happen on the CPU "
                         "(a seed gives the same numbers on every device) and then move to the target device: "
                         "pass an int seed or a CPU torch.Generator")
    return generator


def uniform_on_cpu_(out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Fill ``out`` with uniform ``[0, 1)`` draws made on the CPU from ``generator``; return ``out``.

    The library's rule for random draws (module docstring): on a CPU tensor the draw is made in
    place; on another device it is made in a CPU tensor of the same shape and dtype and copied, so
    a seed gives the same numbers on every device.

    Raises
    ------
    ValueError
        If ``generator`` is not a CPU :class:`torch.Generator` (:func:`check_cpu_generator`).
    """
    check_cpu_generator(generator, "generator")
    if out.device.type == "cpu":
        return out.uniform_(0.0, 1.0, generator=generator)
    return out.copy_(torch.empty(out.shape, dtype=out.dtype).uniform_(0.0, 1.0, generator=generator))


def _check_available(device: torch.device, shown: str) -> None:
    """RuntimeError if ``device`` is CUDA or MPS and this machine cannot run it."""
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"device {shown} requested but CUDA is not available here")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise RuntimeError(f"device {shown} requested but this machine has {count} CUDA device(s) "
                               f"(cuda:0 to cuda:{count - 1})")
    if device.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise RuntimeError(f"device {shown} requested but MPS is not available here")


@contextlib.contextmanager
def torch_threads(num_threads: int | None, device: str | torch.device | None = None) -> Iterator[None]:
    """Run a block with ``torch.set_num_threads(num_threads)``, then restore the previous count.

    Small reads and solves often run faster on one thread than on an OpenMP team competing with
    other work for the same cores; the experiments take a ``num_threads`` argument and use this.

    Parameters
    ----------
    num_threads : int or None
        Threads for the block, ``>= 1``; ``None`` leaves torch's setting alone.
    device : str, torch.device or None
        ``None`` is torch's default device. Only a CPU device changes anything (threads do not matter to CUDA or MPS kernels);
        resolved with :func:`resolve_device`.

    Raises
    ------
    ValueError
        If ``num_threads`` is not ``None`` and not an integer ``>= 1``.

    Examples
    --------
    >>> with torch_threads(1):
    ...     pass
    """
    if num_threads is not None and (isinstance(num_threads, bool) or not isinstance(num_threads, Integral)
                                    or num_threads < 1):
        raise ValueError(f"num_threads must be an integer >= 1 or None; got {num_threads!r}")
    active = num_threads is not None and resolve_device(device).type == "cpu"
    saved = torch.get_num_threads()
    if active:
        torch.set_num_threads(int(num_threads))
    try:
        yield
    finally:
        if active:
            torch.set_num_threads(saved)
