"""The chapters' maths renders under KaTeX (Colab's renderer for markdown) as well as MathJax."""

import nbformat
import pytest

import booktools
import maths

pytestmark = pytest.mark.browser


def _macro_body() -> str:
    source = booktools.macros_cell_source()
    return source.split("$$")[1]


USES = [
    r"\Q{i}^\top \K{j} \in \R^{d}",
    r"\E\big[\V{t}\big] = \Vb + \Kb - \Qb",
    r"\tr(\KK^\top \VV) \le \rank \KK",
]


def test_the_macros_cell_renders_under_katex_and_mathjax_and_again():
    body = _macro_body()
    items = [{"where": "macros", "tex": body, "display": True}]
    items += [{"where": f"use {i}", "tex": t, "display": False} for i, t in enumerate(USES)]
    # Colab renders a cell again when it is edited or the notebook reopened: no "already defined".
    items += [{"where": "macros again", "tex": body, "display": True}]
    items += [{"where": f"use again {i}", "tex": t, "display": True} for i, t in enumerate(USES)]
    assert maths.render(items) == []


def test_every_macro_of_the_config_is_defined_by_the_cell():
    body = _macro_body()
    for name in booktools.macros():
        assert f"\\def\\{name}" in body, name


def test_the_check_fails_on_what_colab_rejects():
    # The old cell: KaTeX predefines \R, and \newcommand may not redefine it.
    errors = maths.render([{"where": "old", "tex": r"\newcommand{\R}{\mathbb{R}}", "display": True}])
    assert [e["renderer"] for e in errors] == ["katex"] and "redefine" in errors[0]["error"]
    errors = maths.render([{"where": "undefined", "tex": r"\notamacro x", "display": False}])
    assert {e["renderer"] for e in errors} == {"katex", "mathjax"}


def test_maths_is_found_in_markdown_but_not_in_code():
    text = "Let $x \\in \\R$ and `$not$`.\n\n$$\na = b\n$$\n\n```python\ny = '$z$'\n```\n\\begin{align}\nc &= d\n\\end{align}\n"
    found = maths.text_maths(text, "t")
    assert [(f["tex"].split()[0], f["display"]) for f in found] == [
        ("x", False), ("a", True), ("\\begin{align}", True),
    ]


def test_every_chapter_renders_under_katex_and_mathjax():
    items = []
    for md, ipynb in booktools.chapter_pairs():
        if ipynb.exists():
            items += maths.chapter_maths(nbformat.read(ipynb, as_version=4), ipynb.stem)
    assert len(items) > 100
    errors = maths.render(items)
    assert not errors, "\n".join(f"{e['where']} [{e['renderer']}] {e['error'][:200]}: {e['tex'][:120]}" for e in errors)
