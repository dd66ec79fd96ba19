"""The book's stylesheet (book/_ext/static/assocmem.css): the rules tools/browser/bookcheck.py
cannot see from one page. The browser check itself runs with ``make browser``."""

import re
from pathlib import Path

CSS = (Path(__file__).resolve().parents[1] / "book" / "_ext" / "static" / "assocmem.css").read_text()


def _rules() -> dict[str, str]:
    body = re.sub(r"/\*.*?\*/", "", CSS, flags=re.S)
    return {sel.strip(): decl for sels, decl in re.findall(r"([^{}]+)\{([^}]*)\}", body) for sel in sels.split(",")}


#: The reproduction tables' prose columns (claim, source, verdict): a long token there (a file name
#: in a source note) may break anywhere, or it sets the column's width (chapter 32 at 1280 px).
PROSE_COLUMNS = {f"div.cell_output table.repro-table td:nth-child({i})" for i in (1, 3, 7)}


def test_table_cells_never_break_inside_a_word_or_number():
    # "overflow-wrap: anywhere" let the table shrink every column to one character: "1.0|00"
    rules = _rules()
    for selector, decl in rules.items():
        if re.search(r"\b(td|th)\b", selector) and selector not in PROSE_COLUMNS:
            assert "anywhere" not in decl and "break-all" not in decl, (selector, decl)
    # the prose columns are the only exception, and the number columns (4-6) are not among them
    assert all("anywhere" in rules[s] for s in PROSE_COLUMNS)


def test_a_wide_output_table_scrolls_in_its_own_box():
    assert "overflow-x: auto" in _rules().get("div.cell_output div.output.text_html", "")
