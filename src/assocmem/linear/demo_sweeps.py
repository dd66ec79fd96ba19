"""The ``demo`` sweep: Monte Carlo read error of the additive memory against ``(n - 1) / d_k``.

Part I's additive (outer-product) memory ``S = sum_i v_i k_i^T`` with ``n`` random unit keys in
``R^{d_k}`` has expected read error ``e_add(n) = (n - 1) / d_k`` (seed 000, §7). Each point of
this sweep estimates it by Monte Carlo (:func:`assocmem.linear.capacity.read_error_mc`) and reports the
estimate, its standard error, the closed form and the z-score of their difference. It is cheap
and real, which makes it the sweep engine's test case and its smallest worked example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assocmem.linear.capacity.read_error import read_error_mc
from assocmem.linear.theory import additive_read_error
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep

if TYPE_CHECKING:
    import torch

__all__ = ["DemoConfig", "demo_points", "demo_point"]


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of the ``demo`` sweep."""

    d_ks: tuple[int, ...]  # key dimensions d_k
    ratios: tuple[float, ...]  # loads n / d_k; n = max(1, round(ratio * d_k))
    trials: int  # Monte Carlo trials per point (independent draws of the n pairs)
    seed: int = 0  # base seed; a point's own seed is point_seed(config, point)

    def __post_init__(self) -> None:
        """Refuse a config no point could run (``--set`` builds configs from text)."""
        if not self.d_ks or any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in self.d_ks):
            raise ValueError(f"d_ks must be positive integers; got {self.d_ks!r}")
        if not self.ratios or any(not isinstance(r, (int, float)) or isinstance(r, bool) or not r > 0
                                  for r in self.ratios):
            raise ValueError(f"ratios must be positive numbers; got {self.ratios!r}")
        if not isinstance(self.trials, int) or isinstance(self.trials, bool) or self.trials < 1:
            raise ValueError(f"trials must be an integer >= 1; got {self.trials!r}")


def demo_points(config: DemoConfig) -> list[dict]:
    """The grid: one point ``{"d_k", "n"}`` per key dimension and load (duplicates dropped)."""
    grid = []
    for d_k in config.d_ks:
        for n in dict.fromkeys(max(1, round(r * d_k)) for r in config.ratios):
            grid.append({"d_k": int(d_k), "n": int(n)})
    return grid


def demo_point(config: DemoConfig, point: dict, device: torch.device) -> dict:
    """Monte Carlo read error of the additive memory at one ``(d_k, n)``.

    Returns
    -------
    dict
        ``error`` (mean over trials of the per-pair squared read error), ``sem`` (its standard
        error), ``theory`` (``(n - 1) / d_k``) and ``z`` (``(error - theory) / sem``).
    """
    d_k, n = point["d_k"], point["n"]
    est = read_error_mc("additive", n=n, d_k=d_k, trials=config.trials, seed=point_seed(config, point), device=device)
    theory = float(additive_read_error(n, d_k))
    z = (est.mean - theory) / est.sem if est.sem > 0 else 0.0
    return {"error": est.mean, "sem": est.sem, "theory": theory, "z": z}


register_sweep(
    "demo",
    config_type=DemoConfig,
    presets={
        "quick": DemoConfig(d_ks=(8, 16), ratios=(0.5, 1.0, 2.0), trials=200),
        "cpu": DemoConfig(d_ks=(16, 32, 64), ratios=(0.25, 0.5, 1.0, 2.0, 4.0), trials=2000),
        "paper": DemoConfig(d_ks=(16, 32, 64, 128, 256), ratios=(0.125, 0.25, 0.5, 1.0, 2.0, 4.0), trials=1000),
    },
    points=demo_points,
    run_point=demo_point,
    description="Monte Carlo read error of the additive memory vs (n-1)/d_k (Part I; the engine's example)",
)
