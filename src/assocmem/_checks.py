"""Input checks shared by the library's modules (private).

One definition of "an integer argument", so every function accepts and refuses the same things.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def as_int(value, name: str, minimum: int | None = None) -> int:
    """``value`` as a Python int, or a :class:`ValueError` naming the argument.

    Accepts Python and numpy integers, integral finite floats (``3.0``) and 0-d numpy arrays or
    torch tensors holding one of those (``torch.tensor(3)``). Refuses booleans (Python, numpy or
    0-d tensors), non-integral or non-finite reals and everything else.

    Raises
    ------
    ValueError
        If ``value`` is not an integer in the sense above, or is below ``minimum`` when given.
    """
    out = _integer(value, name)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    return out


def _integer(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got the boolean {value!r}")
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        item = value.item()  # a 0-d numpy array or torch tensor (numpy scalars are Integral/Real)
        if isinstance(item, bool):
            raise ValueError(f"{name} must be an integer, got the boolean {value!r}")
        value = item
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        f = float(value)
        if math.isfinite(f) and f.is_integer():
            return int(f)
    raise ValueError(f"{name} must be an integer, got {value!r}")


def lookup(table, name, what: str = "preset"):
    """``table[name]``, or a :class:`ValueError` that lists the valid names.

    The one lookup behind every module's ``get_preset``.

    Raises
    ------
    ValueError
        ``"unknown preset 'x'; valid presets: ['cpu', 'quick']"`` if ``name`` is not a key
        (or not hashable).
    """
    try:
        return table[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown {what} {name!r}; valid {what}s: {sorted(table)}") from None


def positive_int(name: str, value) -> int:
    """``value`` as an int ``>= 1``: a Python or numpy integer, not a bool and not a float.

    Raises
    ------
    ValueError
        ``"<name> must be a positive integer; got <value>"``.
    """
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def seed_int(seed) -> int:
    """``seed`` as an int: a Python or numpy integer, not a bool and not a float.

    Raises
    ------
    ValueError
        ``"seed must be an integer; got <seed>"``.
    """
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise ValueError(f"seed must be an integer; got {seed!r}")
    return int(seed)


def as_real(value, name: str, *, minimum: float | None = None, maximum: float | None = None,
            strict_min: bool = False, finite: bool = True) -> float:
    """``value`` as a Python float, or a :class:`ValueError` naming the argument.

    The one check behind every real-valued argument (``beta``, ``scale``, ``ridge``, ``eps``,
    tolerances): accepts Python and numpy reals and 0-d arrays or tensors holding one; refuses
    booleans, strings, complex numbers and everything else, NaN always, and infinities unless
    ``finite=False``.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.
    minimum, maximum : float, optional
        Inclusive bounds (``minimum`` exclusive when ``strict_min``).
    strict_min : bool, default False
    finite : bool, default True

    Raises
    ------
    ValueError
        ``"<name> must be a real number, got ..."``, ``"<name> must be finite, got inf"``,
        ``"<name> must be >= 0, got -1.0"`` (or ``> 0`` / ``<= max``).
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        item = value.item()
        if isinstance(item, bool):
            raise ValueError(f"{name} must be a real number, got the boolean {value!r}")
        value = item
    if not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        out = float(value)
    except OverflowError:  # a Python int beyond float64's range
        raise ValueError(f"{name} must be a finite real number, got an integer beyond float64's range") from None
    if math.isnan(out) or (finite and math.isinf(out)):
        raise ValueError(f"{name} must be {'finite' if finite else 'a number'}, got {out!r}")
    if minimum is not None and (out <= minimum if strict_min else out < minimum):
        raise ValueError(f"{name} must be {'>' if strict_min else '>='} {minimum:g}, got {out!r}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum:g}, got {out!r}")
    return out


def as_bool(value, name: str) -> bool:
    """``value`` as a Python bool: ``True``/``False`` (Python, numpy or a 0-d tensor), else a
    :class:`ValueError` (``"no"``, ``0`` and ``1`` are not booleans).

    Raises
    ------
    ValueError
        ``"<name> must be True or False, got 'no'"``.
    """
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        value = value.item()
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def token_ids(tokens, vocab_size: int):
    """``tokens`` checked as a batch of token ids and returned as an int64 tensor ``(B, T)``.

    The one check of "a batch of token sequences" shared by the language models of Part II (the SSFR
    Transformer and the editing LM).

    Raises
    ------
    ValueError
        Not a ``torch.Tensor``, not an integer dtype (bool refused), not 2-D, empty, or an id outside
        ``[0, vocab_size)``; or ``vocab_size`` not an integer ``>= 1`` (a bool is refused).
    """
    import torch  # the floor's other checks need no torch; only this one does

    if not isinstance(tokens, torch.Tensor):
        raise ValueError(f"tokens must be a torch.Tensor; got {type(tokens).__name__}")
    if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
        raise ValueError(f"tokens must be an integer tensor; got {tokens.dtype}")
    if tokens.dim() != 2 or tokens.shape[0] == 0 or tokens.shape[1] == 0:
        raise ValueError(f"tokens must have shape (B, T) with B, T >= 1; got {tuple(tokens.shape)}")
    vocab_size = as_int(vocab_size, "vocab_size", minimum=1)
    lo, hi = int(tokens.min()), int(tokens.max())
    if lo < 0 or hi >= vocab_size:
        raise ValueError(f"token ids must lie in [0, vocab_size) = [0, {vocab_size}); got range [{lo}, {hi}]")
    return tokens.to(torch.int64)


class TrainingDiverged(FloatingPointError, ValueError):
    """A training that diverged: a loss beyond :func:`loss_limit` (NaN and inf included), or
    non-finite parameters.

    Raised by the trainings of the library at the first such loss (or after the last update),
    after the model's parameters have been put back as they were before the call. It is both a
    :class:`FloatingPointError` and a :class:`ValueError` (the error the trainings have always
    raised for a diverged run), so either ``except`` clause catches it.
    """


def state_copy(module) -> dict:
    """A copy of ``module.state_dict()`` (every tensor cloned, any extra state -- a submodule's
    ``get_extra_state`` record -- deep-copied), for :func:`restore_state`.

    Only reads the module: taking the copy changes no value and draws no random number.
    """
    import copy

    import torch

    return {k: v.detach().clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v)
            for k, v in module.state_dict().items()}


def restore_state(module, saved: dict) -> None:
    """Put back the tensors of :func:`state_copy` into ``module`` (in place, same tensors)."""
    import torch

    with torch.no_grad():
        module.load_state_dict(saved)


def loss_limit(dtype) -> float:
    """The largest mean cross-entropy (nats) a training accepts: ``-ln`` of ``dtype``'s smallest
    normal number (87.3 for float32, 708.4 for float64).

    A mean cross-entropy ``L`` gives the targets a geometric-mean probability ``exp(-L)``. Beyond
    this limit that probability is below every normal number of the dtype the logits are computed
    in: the logits have come apart by more than the dtype's exponent range. It is the finite
    stage of a blow-up whose next step is an inf or a NaN: weights driven to 1e30 by too large a
    learning rate give such losses while every number is still finite.

    The limit is a property of the dtype, not a tuning: a training that learns stays far below it
    (near ``ln V`` and falling), so the check never stops one, and it changes no value of a
    normal run. What it does not call a divergence is a model whose weights are large but whose
    loss stays representable (a softmax attention driven into saturation by a huge ``lr``): its
    outputs are finite, its loss record shows that it learns nothing, and the evaluations, which
    refuse non-finite logits, report its true accuracy.

    Raises
    ------
    ValueError
        If ``dtype`` is not a floating torch dtype.
    """
    import torch

    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch dtype; got {dtype!r}")
    return -math.log(torch.finfo(dtype).tiny)


def check_loss(loss, step: int, *, what: str, lr: float, restored: bool = True, final: bool = False) -> None:
    """:class:`TrainingDiverged` if the 0-d tensor ``loss`` (a mean cross-entropy, nats) is NaN,
    infinite or above :func:`loss_limit` of its dtype, naming ``step``.

    One comparison, ``|loss| <= limit`` (NaN compares false), read on the host: the same single
    read a finiteness check makes, and no value of the training changes. ``step`` counts from 1;
    ``final`` says the loss is the model's after the last update (step ``step``), which the
    trainings check once so that no update goes unchecked. ``restored`` says whether the caller
    puts the model back before the error propagates (the message says so); otherwise the message
    says that no model is returned.

    Raises
    ------
    TrainingDiverged
        ``"<what> diverged: the loss is nan at step 3 (lr = 1e+30); lower lr ..."``, or
        ``"... the loss is 3.9e+15 at step 2, above 708 nats (the targets' mean probability
        exp(-loss) is below the smallest normal torch.float64) (lr = 1e+15) ..."``.
    """
    loss = loss.detach()
    limit = loss_limit(loss.dtype)
    if bool(loss.abs() <= limit):
        return
    value = float(loss)
    when = f"after the last update (step {step})" if final else f"at step {step}"
    beyond = "" if not math.isfinite(value) else (
        f", above {limit:.0f} nats (the targets' mean probability exp(-loss) is below the smallest "
        f"normal {loss.dtype})")
    raise TrainingDiverged(f"{what} diverged: the loss is {value:.3g} {when}{beyond} (lr = {lr:g}); lower lr. "
                           + ("The model's parameters were restored as they were before the call"
                              if restored else "No model is returned"))


def non_finite_parameter(module) -> str | None:
    """The name of the first parameter or buffer of ``module`` holding a NaN or an infinity, or None."""
    import torch

    with torch.no_grad():
        for name, t in (*module.named_parameters(), *module.named_buffers()):
            if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                return name
    return None


def check_finite_parameters(module, what: str = "model") -> None:
    """:class:`ValueError` if any floating parameter or buffer of ``module`` is NaN or infinite.

    The check every evaluation runs first: an argmax over the logits of a model with NaN weights
    would report an accuracy (NaN compares false, so the argmax picks an arbitrary index).

    Raises
    ------
    ValueError
        ``"the model's parameter 'w_q' is not finite (NaN or inf): a diverged training? ..."``.
    """
    name = non_finite_parameter(module)
    if name is not None:
        raise ValueError(f"the {what}'s parameter {name!r} is not finite (NaN or inf): a diverged training? "
                         "An accuracy computed from it would mean nothing")


def whole_numbers(x, name: str) -> np.ndarray:
    """``x`` (a number, a sequence, an ndarray or a tensor) as a float64 ndarray of whole numbers.

    The one reading of "counts or indices given as an array": accepts Python, numpy and torch
    integers and integral finite floats (``3.0``, the rule of :func:`as_int`); refuses booleans
    (``True`` is not the count 1), strings (``"3"`` is not 3), complex numbers, ``None``,
    non-integral or non-finite values, and ragged sequences.

    Raises
    ------
    ValueError
        ``"<name> must hold integers; got a boolean ..."``, ``"... got dtype <U1"``,
        ``"<name> must be finite; got nan"``, ``"<name> must hold whole numbers; got 2.5"``.
    """
    import torch

    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bool:
            raise ValueError(f"{name} must hold integers; got a boolean tensor")
        if x.is_complex():
            raise ValueError(f"{name} must hold integers; got dtype {x.dtype}")
        x = x.detach().cpu().to(torch.float64 if x.is_floating_point() else torch.int64).numpy()
    if isinstance(x, (bool, np.bool_, str, bytes)) or (isinstance(x, (list, tuple)) and holds_bool_or_str(x)):
        raise ValueError(f"{name} must hold integers; got a boolean or a string in {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold integers; got {type(x).__name__}") from None
    if a.dtype.kind == "O" and all(isinstance(v, Real) and not isinstance(v, (bool, np.bool_)) for v in a.flat):
        try:
            a = a.astype(np.float64)
        except OverflowError:
            raise ValueError(f"{name} must hold integers within float64's range") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers; got dtype {a.dtype}")
    out = a.astype(np.float64)
    if not np.isfinite(out).all():
        raise ValueError(f"{name} must be finite; got {float(out[~np.isfinite(out)].flat[0])!r}")
    bad = out != np.round(out)
    if bad.any():
        raise ValueError(f"{name} must hold whole numbers; got {float(out[bad].flat[0])!r}")
    if a.dtype.kind in "iu" and np.any(np.abs(a) > 2**53):
        raise ValueError(f"{name} must hold integers of magnitude at most 2**53 (exact in float64)")
    return out


def index_tensor(x, name: str, size: int, size_name: str | None = None):
    """``x`` as a 1-D int64 CPU tensor of indices in ``[0, size)`` (:func:`whole_numbers`'s rule).

    ``size_name`` (``"F"``) names the bound in the message: ``"must lie in [0, F) = [0, 6)"``.

    Raises
    ------
    ValueError
        As :func:`whole_numbers`, or an index outside ``[0, size)``.
    """
    import torch

    a = whole_numbers(x, name).reshape(-1)
    if a.size and (a.min() < 0 or a.max() >= size):
        bound = f"[0, {size_name}) = [0, {size})" if size_name else f"[0, {size})"
        raise ValueError(f"{name} must lie in {bound}; got range [{a.min():.0f}, {a.max():.0f}]")
    return torch.from_numpy(a.astype(np.int64))


def holds_bool_or_str(seq) -> bool:
    """Whether a (nested) list or tuple holds a bool or a string anywhere.

    ``np.asarray([True, 2])`` is an integer array and ``np.asarray(["1"], dtype=float)`` parses
    the string, so a sequence is checked before it becomes an array.
    """
    if not isinstance(seq, (list, tuple)):
        return False
    for v in seq:
        if isinstance(v, (bool, np.bool_, str, bytes)):
            return True
        if isinstance(v, (list, tuple)) and holds_bool_or_str(v):
            return True
    return False


def module_input(x, d: int, like: torch.Tensor, name: str = "x") -> torch.Tensor:
    """The input of a module's ``forward``, checked without reading its values (no host sync).

    What ``torch.nn.Linear`` would refuse, refused here with a clearer message: not a tensor, a
    last dimension other than ``d``, a dtype or device other than the module's (``like``, one of
    its parameters or buffers). Nothing is cast and no entry is inspected, so ``forward`` stays
    sync-free and traceable by ``torch.compile`` without graph breaks; a NaN in the input gives
    NaN outputs, as in torch's own layers. The validated entry points (``read``, ``features``)
    check the values too.

    Raises
    ------
    TypeError
        If ``x`` is not a tensor, or its dtype is not ``like``'s (the message says how to cast).
    ValueError
        If ``x`` has no dimension or its last one is not ``d``, or it is on another device.
    """
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (..., {d}); got {type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] != d:
        raise ValueError(f"{name} must have shape (..., {d}); got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}; cast it to the module's "
                        f"dtype ({name}.to({like.dtype})): forward does not cast its caller's tensors")
    if x.dtype != like.dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the module computes in {like.dtype}; cast the "
                        f"input ({name}.to({like.dtype})) or build the module in {x.dtype} "
                        "(module.to(dtype)); forward does not cast its caller's tensors")
    if x.device != like.device:
        raise ValueError(f"{name} is on {x.device} but the module is on {like.device}; move one of them")
    return x
