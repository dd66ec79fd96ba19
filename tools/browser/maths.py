"""TeX in the chapters' markdown cells, and a renderer check under KaTeX and MathJax.

    python tools/browser/maths.py            # every chapter's maths under KaTeX (Colab) and MathJax

``render(items)`` hands a list of expressions to tools/browser/check_maths.js (Node, with the npm
``katex`` and ``mathjax`` packages from tools/browser/node_modules) and returns the errors.
``chapter_maths(nb)`` lists a notebook's maths in reading order: ``$$...$$`` and amsmath
environments (display), ``$...$`` (inline), from markdown cells only, code spans and fences
excluded. The macros cell comes first in every chapter, so its definitions are in force for the
rest, as on Colab.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "check_maths.js"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_ENV = re.compile(r"^\\begin\{(\w+\*?)\}.*?^\\end\{\1\}", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]+?)(?<=\S)(?<!\\)\$(?!\$)")


def text_maths(text: str, where: str) -> list[dict]:
    """The maths of one markdown text, in order: display first-class, then inline."""
    text = _FENCE.sub("", text)
    text = _CODE_SPAN.sub("", text)
    found: list[tuple[int, dict]] = []

    def take(m, tex, display):
        found.append((m.start(), {"where": where, "tex": tex.strip(), "display": display}))
        return " " * (m.end() - m.start())

    text = _DISPLAY.sub(lambda m: take(m, m.group(1), True), text)
    text = _ENV.sub(lambda m: take(m, m.group(0), True), text)
    text = _INLINE.sub(lambda m: take(m, m.group(1), False), text)
    return [item for _, item in sorted(found, key=lambda t: t[0])]


def chapter_maths(nb, name: str) -> list[dict]:
    """Every expression in the markdown cells of notebook ``nb`` (nbformat), labelled by cell."""
    items: list[dict] = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            items += text_maths(cell.source, f"{name} cell {i}")
    return items


def render(items: list[dict]) -> list[dict]:
    """Errors from rendering ``items`` in order under KaTeX and MathJax (empty list: none).

    Raises FileNotFoundError when ``node`` or tools/browser/node_modules is missing.
    """
    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("`node` is not on PATH (Node.js runs the KaTeX and MathJax check)")
    if not (HERE / "node_modules" / "katex").is_dir() or not (HERE / "node_modules" / "mathjax").is_dir():
        raise FileNotFoundError(f"no katex/mathjax in {HERE / 'node_modules'}: run `npm ci` in {HERE}")
    run = subprocess.run([node, str(SCRIPT)], input=json.dumps(items), capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"check_maths.js failed ({run.returncode}): {run.stderr[-2000:]}")
    return json.loads(run.stdout)


def main() -> int:
    import nbformat

    items = []
    for ipynb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        items += chapter_maths(nbformat.read(ipynb, as_version=4), ipynb.stem)
    errors = render(items)
    for e in errors:
        print(f"{e['where']} [{e['renderer']}] {e['error'][:160]}\n    {e['tex'][:160]}")
    print(f"{len(errors)} error(s) in {len(items)} expressions")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
