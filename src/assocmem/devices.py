"""Device selection shared by every module: ``device="auto"`` picks CUDA, then MPS, then CPU.

Also :func:`torch_threads`, the one place that sets torch's CPU thread count for a block of work
and restores it afterwards.
"""

from __future__ import annotations

import contextlib
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
        Any string torch accepts (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``) is
        passed through after checking the backend exists.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If the name is not a device type torch knows.
    RuntimeError
        If a CUDA or MPS device is requested but not available on this machine.
    """
    if isinstance(device, torch.device):
        return device
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    kind = str(device).split(":")[0]
    if kind not in _KNOWN:
        raise ValueError(f"unknown device {device!r}; expected one of {_KNOWN} (optionally 'cuda:N')")
    if kind == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available here")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise RuntimeError(f"device {device!r} requested but MPS is not available here")
    return torch.device(device)


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
