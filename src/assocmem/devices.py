"""Device selection shared by every module: ``device="auto"`` picks CUDA, then MPS, then CPU.

Also :func:`torch_threads`, the one place that sets torch's CPU thread count for a block of work
and restores it afterwards.
"""

from __future__ import annotations

import contextlib
import re
from numbers import Integral

import torch

__all__ = ["resolve_device", "torch_threads"]

_KNOWN = ("auto", "cpu", "cuda", "mps")


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """Turn a device request into a :class:`torch.device`.

    Parameters
    ----------
    device : str, torch.device or None
        ``"auto"`` (or ``None``) picks CUDA if available, then Apple MPS, then the CPU.
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` (and ``"cpu:0"``, ``"mps:0"``) are passed
        through after checking the backend exists. A :class:`torch.device` is returned as it is,
        after the same check for CUDA and MPS.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If ``device`` is not a string, a :class:`torch.device` or ``None``; if the name is not
        one of ``auto``, ``cpu``, ``cuda``, ``mps`` (names are case-sensitive, without spaces); or
        if its index is not a non-negative integer (``"cuda:x"``, ``"cpu:-1"``, ``"auto:0"``).
    RuntimeError
        If a CUDA or MPS device is requested but not available on this machine, or ``cuda:N``
        names a GPU this machine does not have.
    """
    if isinstance(device, torch.device):
        _check_available(device, repr(device))
        return device
    if device is None or (isinstance(device, str) and device == "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
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
    return out


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
def torch_threads(num_threads: int | None, device: str | torch.device | None = "cpu"):
    """Run a block with ``torch.set_num_threads(num_threads)``, then restore the previous count.

    Small reads and solves often run faster on one thread than on an OpenMP team competing with
    other work for the same cores; the experiments take a ``num_threads`` argument and use this.

    Parameters
    ----------
    num_threads : int or None
        Threads for the block, ``>= 1``; ``None`` leaves torch's setting alone.
    device : str, torch.device or None, default "cpu"
        Only a CPU device changes anything (threads do not matter to CUDA or MPS kernels);
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
