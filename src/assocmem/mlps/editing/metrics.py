"""Fact-editing metrics: efficacy, paraphrase, specificity, their score, and the non-fact PPL ratio.

Seed 001 (App. A.4.5, Table 1) measures an edit by four quantities and one ratio, all defined here
once and used by every editor:

* **efficacy**: author-token accuracy on the altered facts under their *new* authors, on the
  templated prompt the edit was computed from;
* **paraphrase**: the same accuracy on held-out rephrasings of the altered facts;
* **specificity**: author-token accuracy on the preserved facts under their *original* authors;
* **score**: the harmonic mean of the three (Meng et al. 2023's "score"), 0 when any is 0;
* ``r_NF = PPL_post / PPL_pre = exp(CE_post - CE_pre)``, the cross-entropy averaged over every
  next-token position except the author tokens, over preserved and altered prompts.

Accuracy is the argmax rule of the book (:func:`assocmem.mlps.margins.decoding.accuracy`): a
prediction is correct when the label's logit is *strictly* larger than every other logit, so an
exact tie counts as an error and the outcome does not depend on how ``argmax`` breaks ties.

References
----------
Seed 001, Sec. 5.2 and App. A.4.5 (the definitions above, Table 1, Fig. 8);
K. Meng et al., "Mass-Editing Memory in a Transformer" (MEMIT), ICLR 2023, Sec. 5.2 (efficacy,
paraphrase, specificity and their harmonic mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.nn import functional as Fn

from assocmem._checks import as_real
from assocmem.mlps._checks import check_finite_result, float_tensor

__all__ = [
    "EditMetrics",
    "fact_accuracy",
    "edit_score",
    "token_cross_entropy",
    "nonfact_ppl_ratio",
    "edit_metrics",
]

_F64 = torch.float64


def _labels(labels, n: int, num_classes: int, name: str) -> torch.Tensor:
    if not isinstance(labels, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor; got {type(labels).__name__}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise ValueError(f"{name} must be an integer tensor; got {labels.dtype}")
    if labels.shape != (n,):
        raise ValueError(f"{name} must have shape (n,) = ({n},), one per row of the logits; got {tuple(labels.shape)}")
    if n and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise ValueError(f"{name} must lie in [0, {num_classes}); got range [{int(labels.min())}, {int(labels.max())}]")
    return labels.to(torch.int64)


def fact_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of rows whose label has the strictly largest logit.

    Parameters
    ----------
    logits : torch.Tensor, shape ``(n, V)``
        The model's logits at the author position (the next token after the prompt), ``n >= 1``,
        ``V >= 1``; real and finite.
    labels : torch.Tensor, shape ``(n,)``, integer
        The author token expected for each row, in ``[0, V)``.

    Returns
    -------
    float
        In ``[0, 1]``. Exact ties count as errors.

    Raises
    ------
    ValueError
        Logits not a finite real ``(n, V)`` tensor with ``n, V >= 1``; labels of the wrong shape,
        dtype or range.

    References
    ----------
    Seed 001, App. A.4.5 (efficacy, paraphrase and specificity are this accuracy on three prompt
    sets and two label sets).
    """
    logits = float_tensor(logits, "logits", ndim=2, min_rows=1)
    if logits.shape[1] == 0:
        raise ValueError("logits must have at least one column (V >= 1)")
    labels = _labels(labels, logits.shape[0], logits.shape[1], "labels")
    target = logits.gather(1, labels[:, None])  # (n, 1)
    others = logits.scatter(1, labels[:, None], -math.inf)  # (n, V): the label's entry removed
    correct = (target[:, 0] > others.max(dim=1).values) if logits.shape[1] > 1 else torch.ones(logits.shape[0], dtype=torch.bool)
    return float(correct.to(_F64).mean())


def edit_score(efficacy: float, paraphrase: float, specificity: float) -> float:
    """The harmonic mean ``3 / (1/e + 1/p + 1/s)`` of the three accuracies; 0 if any of them is 0.

    Parameters
    ----------
    efficacy, paraphrase, specificity : float
        Each in ``[0, 1]``.

    Returns
    -------
    float
        In ``[0, 1]``, at most the smallest of the three times 3.

    Raises
    ------
    ValueError
        An argument that is not a real number in ``[0, 1]``.

    References
    ----------
    MEMIT (Meng et al. 2023), Sec. 5.2 ("Score"); seed 001, App. A.4.5.
    """
    vals = [as_real(v, n, minimum=0.0, maximum=1.0) for v, n in
            ((efficacy, "efficacy"), (paraphrase, "paraphrase"), (specificity, "specificity"))]
    if min(vals) == 0.0:
        return 0.0
    return 3.0 / sum(1.0 / v for v in vals)


def token_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean next-token cross-entropy (nats) over the positions selected by ``mask``, in float64.

    Parameters
    ----------
    logits : torch.Tensor, shape ``(N, T, V)``
        Logits predicting ``targets``; real and finite (computed in float64).
    targets : torch.Tensor, shape ``(N, T)``, integer
        The next token at each position, in ``[0, V)`` where ``mask`` is true (other entries,
        such as padding, are ignored and may hold any integer).
    mask : torch.Tensor, shape ``(N, T)``, bool
        The positions counted: for ``r_NF``, every real next-token position except the author
        tokens. At least one must be true.

    Returns
    -------
    float
        ``-(1/|mask|) sum_{mask} log softmax(logits)[target]``, ``>= 0``.

    Raises
    ------
    ValueError
        Wrong shapes or dtypes, non-finite logits, an empty mask, a selected target out of range.

    References
    ----------
    Seed 001, App. A.4.5 (``CE_NF``, "averaged over all next-token positions except the
    author-value tokens").
    """
    logits = float_tensor(logits, "logits", ndim=3)
    N, T, V = logits.shape
    if V == 0:
        raise ValueError("logits must have at least one column (V >= 1)")
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError("mask must be a bool torch.Tensor of shape (N, T)")
    if mask.shape != (N, T):
        raise ValueError(f"mask must have shape (N, T) = ({N}, {T}); got {tuple(mask.shape)}")
    if not isinstance(targets, torch.Tensor) or targets.is_floating_point() or targets.dtype == torch.bool:
        raise ValueError("targets must be an integer torch.Tensor of shape (N, T)")
    if targets.shape != (N, T):
        raise ValueError(f"targets must have shape (N, T) = ({N}, {T}); got {tuple(targets.shape)}")
    if not bool(mask.any()):
        raise ValueError("mask selects no position: the cross-entropy of nothing is undefined")
    sel = logits[mask].to(_F64)  # (M, V)
    tgt = _labels(targets[mask], sel.shape[0], V, "targets (where mask is true)")
    return float(check_finite_result(Fn.cross_entropy(sel, tgt, reduction="mean"), "the cross-entropy"))


def nonfact_ppl_ratio(ce_pre: float, ce_post: float) -> float:
    """``r_NF = PPL_post / PPL_pre = exp(CE_post - CE_pre)``; 1 means non-fact loss unchanged.

    Parameters
    ----------
    ce_pre, ce_post : float
        Mean non-fact cross-entropies (nats, :func:`token_cross_entropy`) before and after the
        edit; finite, ``>= 0``.

    Returns
    -------
    float
        ``> 0``.

    Raises
    ------
    ValueError
        Negative or non-finite cross-entropies, or a ratio that overflows float64.

    References
    ----------
    Seed 001, App. A.4.5, the equation for ``r_NF``; Fig. 8.
    """
    pre = as_real(ce_pre, "ce_pre", minimum=0.0)
    post = as_real(ce_post, "ce_post", minimum=0.0)
    try:
        return math.exp(post - pre)
    except OverflowError:
        raise ValueError(f"r_NF = exp({post - pre:.4g}) overflows float64") from None


@dataclass(frozen=True)
class EditMetrics:
    """The five numbers of one row of seed 001's Table 1.

    Attributes
    ----------
    efficacy, paraphrase, specificity, score : float
        In ``[0, 1]`` (see the module docstring).
    r_nf : float
        The non-fact perplexity ratio, ``> 0``.
    """

    efficacy: float
    paraphrase: float
    specificity: float
    score: float
    r_nf: float

    def as_dict(self) -> dict[str, float]:
        """The fields as a plain dict (for a sweep row)."""
        return {"efficacy": self.efficacy, "paraphrase": self.paraphrase, "specificity": self.specificity,
                "score": self.score, "r_nf": self.r_nf}


def edit_metrics(edited_logits: torch.Tensor, edited_labels: torch.Tensor, paraphrase_logits: torch.Tensor,
                 paraphrase_labels: torch.Tensor, preserved_logits: torch.Tensor,
                 preserved_labels: torch.Tensor, *, ce_pre: float, ce_post: float) -> EditMetrics:
    """All of Table 1's quantities from the post-edit logits at the author position.

    Parameters
    ----------
    edited_logits : torch.Tensor, shape ``(n_a, V)``
        Altered facts on the edit's template; ``edited_labels`` ``(n_a,)`` their new authors.
    paraphrase_logits : torch.Tensor, shape ``(n_p, V)``
        Altered facts on held-out rephrasings; ``paraphrase_labels`` ``(n_p,)`` their new authors.
    preserved_logits : torch.Tensor, shape ``(n_s, V)``
        Preserved facts; ``preserved_labels`` ``(n_s,)`` their original authors.
    ce_pre, ce_post : float
        Keyword-only: non-fact cross-entropies before and after the edit
        (:func:`token_cross_entropy`).

    Returns
    -------
    EditMetrics

    Raises
    ------
    ValueError
        As :func:`fact_accuracy` and :func:`nonfact_ppl_ratio`, naming the bad argument.

    References
    ----------
    Seed 001, App. A.4.5 and Table 1.
    """
    e = fact_accuracy(edited_logits, edited_labels)
    p = fact_accuracy(paraphrase_logits, paraphrase_labels)
    s = fact_accuracy(preserved_logits, preserved_labels)
    return EditMetrics(e, p, s, edit_score(e, p, s), nonfact_ppl_ratio(ce_pre, ce_post))
