"""environment.yml (conda) must list the same dependencies, with the same bounds, as pyproject.toml."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"torch": "pytorch"}  # conda-forge calls a few packages differently


def _split(spec: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", spec)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def _pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        specs += extra
    return dict(_split(s) for s in specs)


def _environment() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for s in dep.get("pip", []):
                if not s.startswith("-"):
                    out.update([_split(s)])
        elif not dep.startswith(("python=", "pip")) or dep.startswith("pip:"):
            out.update([_split(dep)])
    return out


def test_every_pyproject_dependency_is_in_environment_yml_with_the_same_bounds():
    env = _environment()
    for name, bound in _pyproject().items():
        conda_name = CONDA_NAMES.get(name, name)
        assert conda_name in env, f"{name} is in pyproject.toml but not in environment.yml"
        assert env[conda_name] == bound, f"{name}: pyproject says {bound!r}, environment.yml {env[conda_name]!r}"


def test_environment_yml_lists_nothing_pyproject_does_not():
    known = {CONDA_NAMES.get(n, n) for n in _pyproject()}
    extra = set(_environment()) - known
    assert not extra, f"environment.yml lists packages pyproject.toml does not: {sorted(extra)}"


def test_torch_is_never_installed_unpinned_by_make():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"TORCH_SPEC \?= torch==\d+\.\d+\.\d+", makefile), "the Makefile must pin torch to the CPU build"
