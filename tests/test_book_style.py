"""The book's stylesheet (book/_ext/static/assocmem.css): the rules tools/browser/bookcheck.py
cannot see from one page. The browser check itself runs with ``make browser``."""

import re
from pathlib import Path

CSS = (Path(__file__).resolve().parents[1] / "book" / "_ext" / "static" / "assocmem.css").read_text()


def _rules() -> dict[str, str]:
    body = re.sub(r"/\*.*?\*/", "", CSS, flags=re.S)
    return {sel.strip(): decl for sels, decl in re.findall(r"([^{}]+)\{([^}]*)\}", body) for sel in sels.split(",")}


def test_table_cells_never_break_inside_a_word_or_number():
    # "overflow-wrap: anywhere" let the table shrink every column to one character: "1.0|00"
    for selector, decl in _rules().items():
        if re.search(r"\b(td|th)\b", selector):
            assert "anywhere" not in decl and "break-all" not in decl, (selector, decl)


def test_a_wide_output_table_scrolls_in_its_own_box():
    assert "overflow-x: auto" in _rules().get("div.cell_output div.output.text_html", "")
