"""A toy sweep for the sweep tests, whose calls are counted and which can be made to fail at chosen
points (the fixtures ``toy`` and ``toy2`` that register it are in ``conftest.py``)."""

import math
from dataclasses import dataclass

import pandas as pd

from assocmem.sweeps import point_seed


CALLS: list[int] = []  # point "i" of every run_point call, in call order


FAIL_AT: set[int] = set()  # points at which toy_point raises


@dataclass(frozen=True)
class ToyConfig:
    size: int  # number of points
    seed: int = 0  # base seed


def toy_points(config):
    return [{"i": i, "label": f"p{i}"} for i in range(config.size)]


def toy_point(config, point, device):
    i = point["i"]
    CALLS.append(i)
    if i in FAIL_AT:
        raise RuntimeError(f"boom at {i}")
    return {"square": i * i, "root": math.sqrt(i), "even": i % 2 == 0, "note": None if i == 0 else f"n{i}",
            "seed_used": point_seed(config, point)}


def toy_rows(config, point, device):
    i = point["i"]
    CALLS.append(i)
    if i in FAIL_AT:
        raise RuntimeError(f"boom at {i}")
    return [{"rep": r, "value": 10 * i + r} for r in range(2)]


def _without_wall(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns="wall_time_s").reset_index(drop=True)
