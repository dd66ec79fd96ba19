"""The default results folder never lands in another project's repository (issue 29, item 6)."""

import sys

import pytest

from assocmem.sweeps.store import default_results_dir

BOOK = '[build-system]\nrequires = []\n\n[project]\nname = "assocmem"\nversion = "0"\n'
OTHER = '[project]\nname = "my-project"\n\n[tool.x]\nname = "assocmem"\n'


@pytest.fixture(params=["tomllib", "python 3.10 (no tomllib)"])
def reader(request, monkeypatch):
    monkeypatch.delenv("ASSOCMEM_RESULTS_DIR", raising=False)
    if request.param != "tomllib":
        monkeypatch.setitem(sys.modules, "tomllib", None)  # import tomllib raises ImportError


def test_another_projects_repository_is_passed_over(tmp_path, monkeypatch, reader):
    (tmp_path / "pyproject.toml").write_text(OTHER)
    work = tmp_path / "src" / "pkg"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    assert default_results_dir() == work / "results"


def test_the_book_repository_is_found_from_a_subfolder(tmp_path, monkeypatch, reader):
    (tmp_path / "pyproject.toml").write_text(BOOK)
    (tmp_path / "notebooks" / "inner").mkdir(parents=True)
    (tmp_path / "notebooks" / "inner" / "pyproject.toml").write_text(OTHER)  # nested, not ours
    monkeypatch.chdir(tmp_path / "notebooks" / "inner")
    assert default_results_dir() == tmp_path / "results"


def test_the_environment_variable_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOCMEM_RESULTS_DIR", str(tmp_path / "mine"))
    assert default_results_dir() == tmp_path / "mine"
