"""Tests for assocmem.claims.registry: what a record must hold, and the errors for what it must not.

Every defect the loader refuses is written into a temporary ``seed_000.yml`` (the loader takes the
directory as an argument) and must raise with a message that names the file and the record.
"""

import copy
import textwrap
from types import MappingProxyType

import pytest
import yaml

from assocmem.claims import FIELDS, TEST_KINDS, Claim, Erratum, get_claim, load_claims, load_crosswalk

GOOD = {
    "id": "000.sec7.e-add",
    "source": "000",
    "location": "Sec. 7",
    "claim": "The additive memory's error grows like (n - 1)/d_k.",
    "value": "(n - 1)/d_k",
    "test": "theorem",
    "outside": None,
    "checked_in": ["03-how-much-can-a-matrix-remember"],
}


def _write(tmp_path, records, seed="000", source=None, name=None):
    doc = {"source": seed if source is None else source, "claims": records}
    (tmp_path / (name or f"seed_{seed}.yml")).write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))
    return tmp_path


def _record(**changes):
    out = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is _DROP:
            del out[key]
        else:
            out[key] = value
    return out


_DROP = object()


def test_a_good_record_loads_as_a_claim(tmp_path):
    claims = load_claims(_write(tmp_path, [GOOD, _record(id="000.sec7.e-ls", checked_in=[])]))
    assert list(claims) == ["000.sec7.e-add", "000.sec7.e-ls"]
    claim = claims["000.sec7.e-add"]
    assert isinstance(claim, Claim) and claim.checked and not claims["000.sec7.e-ls"].checked
    assert claim.checked_in == ("03-how-much-can-a-matrix-remember",) and claim.errata == ()
    assert claim.value == "(n - 1)/d_k" and claim.outside is None and claim.test in TEST_KINDS
    assert hash(claim) == hash("000.sec7.e-add")
    with pytest.raises(TypeError):
        claims["000.sec7.new"] = claim  # the mapping is read-only


def test_values_ranges_mappings_and_errata_are_stored_read_only(tmp_path):
    records = [
        _record(id="000.sec7.a", value=[1, 2.5], test="range"),
        _record(id="000.sec7.b", value={"d5": 28.4, "mem": [28, 33], "name": "Θ(F)"}, test="value"),
        _record(id="000.sec7.c", value=0.5, test="value", errata=[{"issue": "x says 1", "evidence": "Sec. 7"}]),
    ]
    claims = load_claims(_write(tmp_path, records))
    assert claims["000.sec7.a"].value == (1, 2.5)
    b = claims["000.sec7.b"].value
    assert isinstance(b, MappingProxyType) and b["mem"] == (28, 33) and b["name"] == "Θ(F)"
    assert claims["000.sec7.c"].errata == (Erratum("x says 1", "Sec. 7"),)


def test_load_claims_is_cached_per_directory(tmp_path):
    directory = _write(tmp_path, [GOOD])
    assert load_claims(directory) is load_claims(str(directory))


# (what is wrong, the records, the message it must raise)
BAD = [
    ("duplicate id", [GOOD, GOOD], r"seed_000\.yml, record '000\.sec7\.e-add': duplicate id"),
    ("capital letters", [_record(id="000.Sec7.e-add")], "malformed id '000.Sec7.e-add'"),
    ("no slug", [_record(id="000.sec7")], "malformed id '000.sec7'"),
    ("underscore", [_record(id="000.sec7.e_add")], "malformed id '000.sec7.e_add'"),
    ("seed not three digits", [_record(id="00.sec7.e-add")], "malformed id"),
    ("not a string", [_record(id=7)], "malformed id 7"),
    ("prefix disagrees", [_record(id="001.sec7.e-add")],
     r"record '001\.sec7\.e-add': the id's seed prefix '001' disagrees with source '000'"),
    ("unknown source", [_record(source="003", id="003.sec7.e-add")], "source must be one of"),
    ("unquoted source", [_record(source=0)], r"source must be one of .* got 0"),
    ("unknown test kind", [_record(test="vibes")], r"record '000\.sec7\.e-add': unknown test kind 'vibes'"),
    ("range lo > hi", [_record(value=[25, 10], test="range")], r"range \[lo, hi\] has lo > hi \(25 > 10\)"),
    ("named range lo > hi", [_record(value={"most": [12, 3]})], r"value 'most': range \[lo, hi\] has lo > hi"),
    ("range of one number", [_record(value=10, test="range")], "not the single number 10"),
    ("list of three", [_record(value=[1, 2, 3])], r"a list value must be a range \[lo, hi\] of two numbers"),
    ("list of strings", [_record(value=["a", "b"])], r"a list value must be a range"),
    ("bad value type", [_record(value=True)], "value must be a number"),
    ("unknown field", [_record(note="x")], r"unknown field\(s\) \['note'\]"),
    ("blank claim", [_record(claim="  ")], "'claim' must be a non-empty string"),
    ("outside not a string", [_record(outside=3)], "'outside' must be a non-empty string"),
    ("checked_in not a list", [_record(checked_in="13-facts")], "'checked_in' must be a list of chapter stems"),
    ("checked_in not a stem", [_record(checked_in=["notebooks/13-x.md"])], "'checked_in' must be a list"),
    ("checked_in twice", [_record(checked_in=["13-x", "13-x"])], "names a chapter twice"),
    ("errata empty", [_record(errata=[])], "'errata' must be a non-empty list"),
    ("erratum without evidence", [_record(errata=[{"issue": "x"}])], "needs a non-empty 'issue' and 'evidence'"),
    ("record not a mapping", ["000.sec7.e-add"], "a record must be a mapping"),
]


@pytest.mark.parametrize("records, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_defects_raise_a_value_error_naming_file_and_record(tmp_path, records, match):
    with pytest.raises(ValueError, match=match) as info:
        load_claims(_write(tmp_path, records))
    assert "seed_000.yml" in str(info.value)


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_is_required(tmp_path, field):
    with pytest.raises(ValueError, match=rf"seed_000\.yml, record .*missing field\(s\) \['{field}'\]"):
        load_claims(_write(tmp_path, [_record(**{field: _DROP})]))


def test_file_level_defects(tmp_path):
    (tmp_path / "a").mkdir()
    _write(tmp_path / "a", [_record(id="001.sec7.e-add", source="001")], seed="000")
    with pytest.raises(ValueError, match=r"seed_000\.yml, record '001\.sec7\.e-add': a record of seed '001' "
                                         "in the file of seed '000'"):
        load_claims(tmp_path / "a")
    (tmp_path / "b").mkdir()
    _write(tmp_path / "b", [GOOD], source="001")
    with pytest.raises(ValueError, match=r"seed_000\.yml: 'source' is '001', the file name says '000'"):
        load_claims(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "seed_000.yml").write_text("source: '000'\nclaims: [\n")
    with pytest.raises(ValueError, match=r"seed_000\.yml: not valid YAML"):
        load_claims(tmp_path / "c")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "seed_000.yml").write_text("- id: x\n")
    with pytest.raises(ValueError, match="a mapping with the keys 'source' and 'claims'"):
        load_claims(tmp_path / "d")
    (tmp_path / "e").mkdir()
    _write(tmp_path / "e", [GOOD], seed="007", source="007")
    with pytest.raises(ValueError, match=r"seed_007\.yml: the file name names no seed"):
        load_claims(tmp_path / "e")
    (tmp_path / "f").mkdir()
    with pytest.raises(FileNotFoundError, match="no seed_"):
        load_claims(tmp_path / "f")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_claims(tmp_path / "nowhere")


def test_get_claim_names_the_closest_ids(tmp_path):
    directory = _write(tmp_path, [GOOD, _record(id="000.sec7.e-ls")])
    assert get_claim("000.sec7.e-ls", directory).id == "000.sec7.e-ls"
    with pytest.raises(KeyError, match=r"no claim with the id '000\.sec7\.e-adds'.*close ids: 000\.sec7\.e-add"):
        get_claim("000.sec7.e-adds", directory)
    with pytest.raises(KeyError, match=r"no claim with the id 'zzz' in the registry") as info:
        get_claim("zzz", directory)
    assert "close ids" not in str(info.value)
    with pytest.raises(TypeError, match="claim_id must be a str"):
        get_claim(7, directory)


def _crosswalk(tmp_path, text):
    _write(tmp_path, [GOOD])
    (tmp_path / "crosswalk.yml").write_text(textwrap.dedent(text))
    return tmp_path


def test_the_crosswalk_maps_rows_to_ids(tmp_path):
    walk = load_crosswalk(_crosswalk(tmp_path, """\
        chapters:
          03-how-much-can-a-matrix-remember:
          - row: e_add(17) = 1
            id: 000.sec7.e-add
          - row: our own count
            id: null
            reason: bookkeeping
        """))
    rows = walk["03-how-much-can-a-matrix-remember"]
    assert [(r.row, r.id, r.reason) for r in rows] == [("e_add(17) = 1", "000.sec7.e-add", None),
                                                        ("our own count", None, "bookkeeping")]


CROSSWALK_BAD = [
    ("unknown id", "- row: a\n  id: 000.sec7.e-adds\n", r"unknown id '000\.sec7\.e-adds' \(close: 000\.sec7\.e-add\)"),
    ("null id without a reason", "- row: a\n  id: null\n", "a row with no id needs a 'reason'"),
    ("id with a reason", "- row: a\n  id: 000.sec7.e-add\n  reason: b\n", "a row with an id takes no 'reason'"),
    ("row twice", "- row: a\n  id: 000.sec7.e-add\n- row: a\n  id: 000.sec7.e-add\n", "the row is listed twice"),
    ("no row text", "- id: 000.sec7.e-add\n", "a row is a mapping of 'row', 'id'"),
]


@pytest.mark.parametrize("rows, match", [b[1:] for b in CROSSWALK_BAD], ids=[b[0] for b in CROSSWALK_BAD])
def test_crosswalk_defects_raise(tmp_path, rows, match):
    text = "chapters:\n  03-how-much-can-a-matrix-remember:\n" + textwrap.indent(rows, "  ")
    with pytest.raises(ValueError, match=match) as info:
        load_crosswalk(_crosswalk(tmp_path, text))
    assert "crosswalk.yml, chapter '03-how-much-can-a-matrix-remember'" in str(info.value)


def test_crosswalk_file_defects(tmp_path):
    with pytest.raises(FileNotFoundError, match="no crosswalk.yml"):
        load_crosswalk(_write(tmp_path, [GOOD]))
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match="the one key 'chapters'"):
        load_crosswalk(_crosswalk(tmp_path / "x", "rows: []\n"))
    (tmp_path / "y").mkdir()
    with pytest.raises(ValueError, match="must be a chapter stem with a list of rows"):
        load_crosswalk(_crosswalk(tmp_path / "y", "chapters:\n  chapter three: []\n"))
