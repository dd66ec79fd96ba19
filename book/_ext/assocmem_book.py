"""Local Sphinx extension of the book (loaded through ``sphinx: local_extensions`` in _config.yml).

Three things the stock Jupyter Book 1 stack does not do:

1. **One citation style, author-year, in the text and in the bibliography.** sphinxcontrib-bibtex
   cites author-year in the text (``bibtex_reference_style``) but labels the bibliography with
   numbers, because pybtex's ``plain`` style has a numeric label style. This module registers

   - a pybtex label style ``assocmem_author_year``: "Kohonen, 1972", "Kohonen and Ruohonen, 1973",
     "Nichani et al., 2024" (three or more authors); for an entry without author or editor, its
     BibTeX ``key`` field (a short name, "SDM review, 2026"), else its title; and a letter after
     the year (2021a, 2021b) where two labels would be equal;
   - a pybtex sorting style ``assocmem_author_year``: by that label's author part, year, title;
   - a pybtex formatting style ``assocmem`` (``bibtex_default_style``): pybtex's ``unsrt``
     templates with the two styles above;
   - a sphinxcontrib-bibtex referencing style ``assocmem_author_year``
     (``bibtex_reference_style``): author-year with round brackets, "Kohonen (1972)" and
     "(Kohonen, 1972)", whose parenthetical form is exactly the bibliography's label (an entry
     without author or editor is cited by its ``key`` field too, not by its italic title).

2. **Each inline script once per page.** Sphinx 7.4 adds an inline script that an extension
   registers after ``Builder.init()`` (sphinx-thebe's ``THEBE_JS_URL`` block, sphinx-togglebutton's
   selector) twice: ``Sphinx.add_js_file`` hands it to the live builder with filename ``None``,
   and ``StandaloneHTMLBuilder.prepare_writing`` re-adds every registered script with filename
   ``''``; the two objects compare unequal, so both reach the page, and the second
   ``const THEBE_JS_URL`` is a SyntaxError in the browser console on every page. The handler
   below drops the second copy from the page's script list before the template renders it.

3. **A few layout rules** (static/assocmem.css): code at a size where 88 characters fit the text
   column at 1280 px, printed tables a size below the text, and display equations that scroll in
   their own box instead of being cut off. CONTRIBUTING.md ("How the book must look") gives the reasons.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from dataclasses import dataclass, field

import pybtex.plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle
from pybtex.style.template import field as bib_field
from pybtex.style.template import first_of, node, optional, tag

import sphinxcontrib.bibtex.plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
from sphinxcontrib.bibtex.style.template import names

STYLE = "assocmem"
LABELS = "assocmem_author_year"


def _plain(latex: str) -> str:
    """A BibTeX field or name as plain text (accents decoded, protecting braces dropped)."""
    return Text.from_latex(latex).render_as("text")


def _surname(person) -> str:
    return _plain(" ".join(person.prelast_names + person.last_names))


def author_part(entry) -> str:
    """The author part of an entry's label: one surname, two joined by "and", else "et al.".

    An entry without author or editor is labelled by its BibTeX ``key`` field (a short name for
    an anonymous document), else by its title.
    """
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    surnames = [_surname(p) for p in people]
    if not surnames:
        return _plain(entry.fields.get("key") or entry.fields.get("title", entry.key))
    if len(surnames) == 1:
        return surnames[0]
    if len(surnames) == 2:
        return f"{surnames[0]} and {surnames[1]}"
    return f"{surnames[0]} et al."


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author, Year" (with a, b, ... after the year where two would be equal)."""

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        bases = [f"{author_part(e)}, {e.fields.get('year', 'n.d.')}" for e in entries]
        repeated = {b for b, n in Counter(bases).items() if n > 1}
        seen: Counter = Counter()
        for base in bases:
            if base in repeated:
                yield base + "abcdefghijklmnopqrstuvwxyz"[seen[base]]
                seen[base] += 1
            else:
                yield base


class AuthorYearSortingStyle(BaseSortingStyle):
    """Sort by the label's author part, then year, then title (case-insensitive)."""

    def sorting_key(self, entry):
        return (
            re.sub(r"\W+", " ", author_part(entry)).lower().strip(),
            entry.fields.get("year", ""),
            _plain(entry.fields.get("title", "")).lower(),
        )


class BookStyle(UnsrtStyle):
    """pybtex's unsrt templates, labelled and sorted author-year."""

    default_label_style = LABELS
    default_sorting_style = LABELS


def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@node
def author_or_editor_or_key_or_title(children, data, **kwargs):
    """The author part of a citation: authors, else editors, else the ``key`` field, else the title.

    sphinxcontrib-bibtex's own template skips ``key`` and falls back on the title in italics,
    which for an anonymous document with a long title makes a long italic citation.
    """
    assert not children
    return first_of[
        optional[names("author", **kwargs)],
        optional[names("editor", **kwargs)],
        optional[bib_field("key")],
        tag("em")[bib_field("title")],
    ].format_data(data)


@dataclass
class KeyPersonStyle(PersonStyle):
    """sphinxcontrib-bibtex's person style, citing an entry without authors by its ``key``."""

    def author_or_editor_or_title(self, full: bool):
        return author_or_editor_or_key_or_title(
            sep=self.sep,
            sep2=self.sep2,
            last_sep=self.last_sep,
            other=None if full else self.other,
        )


@dataclass
class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
    """Author-year citations in round brackets: "Kohonen (1972)", "(Kohonen, 1972)"."""

    bracket_parenthetical: BracketStyle = field(default_factory=_round)
    bracket_textual: BracketStyle = field(default_factory=_round)
    bracket_author: BracketStyle = field(default_factory=_round)
    bracket_label: BracketStyle = field(default_factory=_round)
    bracket_year: BracketStyle = field(default_factory=_round)
    person: PersonStyle = field(default_factory=KeyPersonStyle)


pybtex.plugin.register_plugin("pybtex.style.labels", LABELS, AuthorYearLabelStyle)
pybtex.plugin.register_plugin("pybtex.style.sorting", LABELS, AuthorYearSortingStyle)
pybtex.plugin.register_plugin("pybtex.style.formatting", STYLE, BookStyle)
sphinxcontrib.bibtex.plugin.register_plugin(
    "sphinxcontrib.bibtex.style.referencing", LABELS, RoundAuthorYearReferenceStyle
)


def _script_key(js) -> tuple:
    filename = getattr(js, "filename", js) or ""
    attributes = getattr(js, "attributes", {})
    return (filename, getattr(js, "priority", None), tuple(sorted(attributes.items())))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Keep the first of scripts that differ only in ``None`` against ``''`` as filename."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        key = _script_key(js)
        if key not in seen:
            seen.add(key)
            kept.append(js)
    context["script_files"] = kept


STATIC = Path(__file__).resolve().parent / "static"


def add_static(app, config) -> None:
    """Serve static/ (absolute path: the config file may live in another folder) and load the CSS."""
    config.html_static_path = list(config.html_static_path) + [str(STATIC)]


def setup(app):
    app.connect("config-inited", add_static)
    app.add_css_file("assocmem.css")
    # After every other handler (sphinx.ext.mathjax adds its scripts at the default priority).
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
