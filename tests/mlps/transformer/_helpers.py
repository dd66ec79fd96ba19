"""Shared fixtures of the SSFR Transformer tests: tiny tasks and a hand-set key-copying attention."""

from __future__ import annotations

import torch

from assocmem.mlps.transformer import SSFRTask, SSFRTransformer, TransformerConfig, embedding_table

F64 = torch.float64


def tiny(d: int = 16, F: int = 8, VJ: int = 3, J: int = 3, seed: int = 0, dtype=F64, mlp=None, **cfg):
    """``(task, embedding, model)`` of a small SSFR instance on the CPU."""
    task = SSFRTask(F, VJ, J)
    E = embedding_table(task, d, seed=seed)
    model = SSFRTransformer(TransformerConfig(d=d, dtype=dtype, device="cpu", **cfg), E, mlp, task=task, seed=seed)
    return task, E, model


def copy_the_key(model: SSFRTransformer, gap: float = 2000.0) -> None:
    """Set ``W_Q``, ``W_K`` by hand so that the query position attends only to the key (a one-hot).

    Needs ``vocab_size <= d``: a vector ``w`` with ``<w, h_t> = 1`` on every fact token and ``0`` on
    junk and query tokens exists (least squares on the normalised table, exact), and with
    ``W_Q = I``, ``W_K = gap sqrt(d) h_Q w^T / ||h_Q||^2`` the score of token ``t`` is ``gap <w, h_t>``:
    ``gap`` for the key, ``0`` for everything else, so softmax puts ``1 - O(T e^{-gap})`` on the key.
    """
    task, d = model.task, model.config.d
    assert task.vocab_size <= d
    H = model.normed.double()  # (vocab, d)
    target = torch.zeros(task.vocab_size, dtype=F64)
    target[: task.num_facts] = 1.0
    w = torch.linalg.lstsq(H, target.unsqueeze(1)).solution.squeeze(1)  # (d,)
    hq = H[task.query_token]
    with torch.no_grad():
        model.attention.W_Q.copy_(torch.eye(d, dtype=F64))
        model.attention.W_K.copy_(gap * d**0.5 * torch.outer(hq, w) / (hq @ hq))
