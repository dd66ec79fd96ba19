"""Device selection shared by every module: ``device="auto"`` picks CUDA, then MPS, then CPU."""

from __future__ import annotations

import torch

__all__ = ["resolve_device"]

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
