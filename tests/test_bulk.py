"""The bulk JSONL reader reads every line exactly as the per-line reader does.

The bulk path (:func:`auditkit.ingest.blocks.parse_block`: ``pyarrow.json`` over a
block, vectorized field checks, the per-line reader for whatever they do not vouch
for) must give the same stored rows, the same bad lines with the same reasons and
the same blank lines as reading every line with ``json.loads`` and
:func:`parse_record` (``bulk=False``, the reference). Hypothesis writes blocks of
worked-example records of every game, mutated (:func:`test_fuzz.mutate`), written
in several JSON styles, with odd lines between them (blank, NUL, BOM, duplicate
keys, non-objects, broken JSON), and cuts them into blocks of any size.
"""

from __future__ import annotations

import gzip
import json
import random
import struct
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import example_records
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from test_fuzz import GAMES, SHAPED, WILD, _at, _paths, _settings, mutate

from auditkit.ingest.blocks import Parsed, parse_block
from auditkit.ingest.jsonl import read_blocks
from auditkit.ingest.sources import ingest_source
from auditkit.store import Store

BLOCKS = settings(_settings(300), phases=[Phase.explicit, Phase.generate])  # a failure is printed unshrunk:
# shrinking blocks of forty mutated records takes minutes
ODD_LINES = [b"", b"   ", b"\t", b"\x0b", b"\x00\x00\x00", b"\x00", b"null", b"[1, 2]", b"42", b'"text"', b"{",
             b'{"round_id": "x"} {"round_id": "y"}', b"\xef\xbb\xbf{}", b"{}", b"\xff\xfe", b'{"a": 1,}',
             b'{"round_id": "a\x01b"}', b"[" * 3000, b'{"round_id": 1e999}']
EDGES = [-2**31 - 1, -2**31, -1, 0, 1, 2, 5, 6, 7, 8, 9, 10, 52, 53, 54, 2**31 - 1, 2**31, -0.0, 0.5, 10**13,
         10**13 + 1, 1e13, 10000000000000.002, -10**13, -10**13 - 1]
"""Numbers at the edges of the ranges the readers check (integers and amounts)."""


def _edge(data: st.DataObject, rec: dict) -> dict:
    """``rec`` with one number (at any depth) set to a value at the edge of a range."""
    numbers = [p for p in _paths(rec) if p and isinstance(_at(rec, p), int | float) and not isinstance(_at(rec, p), bool)]
    if numbers:
        path = data.draw(st.sampled_from(numbers), label="edge at")
        _at(rec, path[:-1])[path[-1]] = data.draw(st.sampled_from(EDGES), label="edge")
    return rec


def _styles(rec: dict, rng: random.Random) -> bytes | None:
    """The record as one JSON line in one of several styles (None when Python cannot write it)."""
    style = rng.randrange(6)  # 0-3, 5: styles of the same content; 4: keys named twice
    try:
        if style == 0:
            text = json.dumps(rec)
        elif style == 1:
            text = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
        elif style == 2:
            text = json.dumps(dict(sorted(rec.items(), reverse=True)), indent=None)
        elif style == 3:  # whole amounts written with a fraction, as a re-export might
            text = json.dumps(rec).replace(": 0,", ": 0.0,").replace(": 5,", ": 5.0,")
        elif style == 5:  # zero written as -0 (an integer: json.loads reads 0, not -0.0)
            text = json.dumps(rec).replace(": 0,", ": -0,").replace(": 0}", ": -0}").replace("[0,", "[-0,")
        elif rng.random() < 0.5:  # a key named twice, first with another value
            key = rng.choice(sorted(rec) or ["x"])
            text = "{" + json.dumps(key) + ': "other", ' + json.dumps(rec)[1:]
        else:  # a field auditkit does not read, named twice (at the top or in a wager), or once
            twice = rng.choice(['"note": 1, "note": 2, ', '"note": [{"a": 1, "a": 1}], ', '"note": {"k": 1}, ',
                                '"note": [null, 1], ', '"note": [null, {"a": [null, null, 2]}], '])
            text = json.dumps(rec)
            text = text.replace('"seat": ', twice + '"seat": ', 1) if rng.random() < 0.5 else "{" + twice + text[1:]
    except ValueError:  # an integer of more than 4,300 digits
        return None
    return text.encode("utf-8", errors="surrogatepass")


def _lines(data: st.DataObject) -> list[bytes]:
    rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
    lines: list[bytes] = []
    for _ in range(data.draw(st.integers(1, 40), label="lines")):
        kind = data.draw(st.sampled_from(["example", "mutant", "shaped", "shaped", "edge", "odd", "copy"]), label="kind")
        if kind == "odd":
            lines.append(data.draw(st.sampled_from(ODD_LINES)))
            continue
        if kind == "copy" and lines:
            lines.append(rng.choice(lines))
            continue
        game = data.draw(st.sampled_from(GAMES + ("baccarat", "baccarat")), label="game")
        rec = data.draw(st.sampled_from(example_records(game)), label="example")
        if kind != "example":
            rec = mutate(data, rec, game, WILD if kind == "mutant" else SHAPED)
        if kind == "edge":
            rec = _edge(data, rec)
        line = _styles(rec, rng)
        if line is not None:
            lines.append(line)
    return lines


def _same(bulk: Parsed, plain: Parsed) -> None:
    assert bulk.blank == plain.blank
    bad, ref = {b[0]: b for b in bulk.bad}, {b[0]: b for b in plain.bad}
    assert bad.keys() == ref.keys(), [ref.get(n) or bad.get(n) for n in bad.keys() ^ ref.keys()]
    assert bad == ref, [(bad[n], ref[n]) for n in ref if bad[n] != ref[n]]
    assert sorted(bulk.renamed) == sorted(plain.renamed)
    assert set(bulk.tables) == set(plain.tables)
    for game, table in plain.tables.items():
        other = bulk.tables[game]
        assert other.schema == table.schema
        assert _exact(other.to_pylist()) == _exact(table.to_pylist()), game


def _exact(value: object) -> object:
    """A stored value with each float as its repr (``-0.0 == 0.0`` in Python; not in the store)."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return [_exact(v) for v in value]
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    return value


def _blocks_of(path: Path, block_bytes: int, bulk: bool) -> list[Parsed]:
    return [parse_block(b, bulk=bulk) for b in read_blocks(path, block_bytes=block_bytes)]


@BLOCKS
@given(data=st.data())
def test_bulk_reader_reads_every_line_as_the_per_line_reader(data: st.DataObject) -> None:
    lines = _lines(data)
    block_bytes = data.draw(st.sampled_from([1, 200, 2000, 1 << 24]), label="block bytes")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        body = b"\n".join(lines) + data.draw(st.sampled_from([b"", b"\n", b"\r\n"]))
        path.write_bytes(gzip.compress(body) if data.draw(st.booleans(), label="gzip") else body)
        bulk, plain = _blocks_of(path, block_bytes, True), _blocks_of(path, block_bytes, False)
        assert len(bulk) == len(plain)
        for b, p in zip(bulk, plain, strict=True):
            _same(b, p)


@pytest.mark.parametrize("game", GAMES)
def test_the_bulk_path_reads_plain_records_without_the_per_line_reader(game, tmp_path, monkeypatch):
    """Clean lines of a game with a bulk reader are vouched for by the vectorized checks (the
    property above would also hold if every line fell back to the per-line reader)."""
    from auditkit.ingest import blocks

    records = [r for r in example_records(game) if r["game"] in (game, "mini_baccarat")]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    calls: list[int] = []
    real = blocks.line_by_line
    monkeypatch.setattr(blocks, "line_by_line", lambda parsed, items, decoded: (calls.append(len(items)),
                                                                               real(parsed, items, decoded)))
    plain = _blocks_of(path, 1 << 24, False)
    calls.clear()
    (bulk,) = _blocks_of(path, 1 << 24, True)
    _same(bulk, plain[0])
    assert sum(calls) <= sum(1 for r in records if not str(r.get("round_id", "")).isascii()), calls
    assert sum(t.num_rows for t in bulk.tables.values()) > 0


@pytest.mark.parametrize("game", GAMES)
def test_a_block_of_one_game_is_parsed_with_that_games_schema_only(game, tmp_path, monkeypatch):
    """The parser makes no columns of other games' fields for a block of one game; a block of
    several is parsed again with every game's schema (and read as the per-line reader does)."""
    from auditkit.ingest import blocks

    records = [r for r in example_records(game) if r["game"] in (game, "mini_baccarat")]
    other = example_records("blackjack" if game != "blackjack" else "baccarat")[0]
    schemas: list[str | None] = []
    real = blocks._read_json
    monkeypatch.setattr(blocks, "_read_json", lambda data, g: (schemas.append(g), real(data, g))[1])
    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    _blocks_of(path, 1 << 24, True)
    assert schemas == [game]
    schemas.clear()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r) + "\n" for r in [*records, other]))
    (bulk,), (plain,) = _blocks_of(mixed, 1 << 24, True), _blocks_of(mixed, 1 << 24, False)
    assert schemas == [game, None]
    _same(bulk, plain)
    assert blocks.json_schema(game) != blocks.json_schema()


@pytest.mark.parametrize("game", GAMES)
def test_ingest_stores_the_same_with_and_without_the_bulk_reader(game, tmp_path):
    """Whole sources, duplicates and the index included."""
    records = example_records(game)
    lines = [json.dumps(r) for r in records] + [json.dumps(records[0]).replace("}", ', "x": 1}', 1), "", "{"]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines * 2) + "\n")
    stores = {}
    for bulk in (True, False):
        store = Store(tmp_path / f"store-{bulk}")
        rec, new = ingest_source(path, store, bulk=bulk)
        assert new and rec.balanced
        rounds = {g: pa.concat_tables([store.read(g, d) for d in store.dates(g)]).sort_by("source_line").to_pylist()
                  for g in store.games()}
        index = store.index().sort_by("source_line").to_pylist()
        quarantine = store.quarantine().sort_values("line").drop(columns="sha256").to_dict("records")
        stores[bulk] = (rec.stored, rec.already_stored, rec.quarantined, rec.blank, rounds, index, quarantine)
    assert stores[True] == stores[False]


def test_fields_auditkit_does_not_read_leave_the_parsed_block_valid(tmp_path):
    """Unknown lists whose first items are null, at the top, in a wager and in an event: the
    parser infers them as arrays that are not valid Arrow (apache/arrow#51305), so taking a game's
    rows of a block of several games read past their buffers (a crash, or garbage)."""
    from auditkit.ingest import blocks

    lines = []
    for i in range(60):
        for game in GAMES:
            rec = dict(example_records(game)[0], round_id=f"{game}-{i}", note=[None] * (i % 4) + [1.5])
            rec["wagers"] = [dict(w, extra=[None, {"a": [None, 2]}]) for w in rec.get("wagers", [])]
            rec["events"] = [dict(e, extra=[None] * 3 + [[None, 1]]) for e in rec.get("events", [])]
            lines.append(json.dumps(rec))
    data = ("\n".join(lines) + "\n").encode()
    for schema_of in (None, *GAMES):  # every game's fields, or one game's (the others' then inferred)
        table = blocks._read_json(data, schema_of)
        assert table is not None and table.num_rows == len(lines)
        table.validate(full=True)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    (bulk,), (plain,) = _blocks_of(path, 1 << 24, True), _blocks_of(path, 1 << 24, False)
    _same(bulk, plain)
    assert {g: t.num_rows for g, t in bulk.tables.items()} == dict.fromkeys(GAMES, 60)


def test_round_ids_are_stored_in_nfc_whatever_the_reader(tmp_path):
    """An id with a combining accent inside (not at an edge) is composed by both readers."""
    rec = dict(example_records("baccarat")[0], round_id="Re\u0301union-1")
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    for bulk in (True, False):
        (parsed,) = _blocks_of(path, 1 << 24, bulk)
        (table,) = parsed.tables.values()
        assert table["round_id"].to_pylist() == ["R\u00e9union-1"]
        assert parsed.renamed == [("Re\u0301union-1", "R\u00e9union-1")]


def _edited(records: list[dict]) -> list[dict]:
    """Copies of records, each with one field (at any depth) edited: every number set to every
    :data:`EDGES` value, every node dropped or set to null, every bool flipped, every text and
    list emptied or changed."""
    out = []
    for rec in records:
        for path in _paths(rec):
            if not path:
                continue
            value = _at(rec, path)
            edits = [None, "drop"]
            if isinstance(value, bool):
                edits.append(not value)
            elif isinstance(value, int | float):
                edits += EDGES
            elif isinstance(value, str):
                edits += ["", " ", "X", value.lower(), value + " "]
            elif isinstance(value, list):
                edits += [[], value[:1] * 3]
            for edit in edits:
                copy = json.loads(json.dumps(rec))
                parent = _at(copy, path[:-1])
                if edit == "drop":
                    del parent[path[-1]]
                else:
                    parent[path[-1]] = edit
                out.append(copy)
    return out


@pytest.mark.parametrize("game", GAMES)
def test_bulk_reader_reads_every_edge_of_every_field_as_the_per_line_reader(game, tmp_path):
    """Every field of a few worked examples, at every depth, dropped, null or at the edge of a
    range, read by both readers (the property above draws such edits, but rarely each one)."""
    records = _edited(example_records(game)[:2])
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (bulk,), (plain,) = _blocks_of(path, 1 << 24, True), _blocks_of(path, 1 << 24, False)
    _same(bulk, plain)
    assert len(plain.bad) > len(records) // 10 and sum(t.num_rows for t in plain.tables.values()) > len(records) // 10


# ---- the hashes of the index, by their definition ----------------------------------------------------
_M = 2**64 - 1
_K, _NULL = 0x9E3779B97F4A7C15, 0x5BD1E9955BD1E995


def _mix(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _M
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _M
    return x ^ (x >> 31)


def _items(hashes: list[int]) -> int:
    return _mix((sum(hashes) & _M) ^ len(hashes))


def _value_hash(value: object, t: pa.DataType) -> int:
    """A stored value's hash, one value at a time in Python (what hashing.py vectorizes)."""
    if value is None:
        return _NULL
    if pa.types.is_string(t):
        return _items([_mix((b + (i << 8) + _K) & _M) for i, b in enumerate(value.encode())])
    if pa.types.is_struct(t):
        h = len(t)
        for f in t:
            h = _mix((h * _K + _value_hash(value[f.name], f.type)) & _M)
        return h
    if pa.types.is_list(t):
        return _items([_mix((_value_hash(v, t.value_type) + i * _K) & _M) for i, v in enumerate(value)])
    if pa.types.is_floating(t):
        return _mix(int.from_bytes(struct.pack("<d", value + 0.0), "little"))
    if pa.types.is_timestamp(t):
        return _mix(pa.scalar(value, t).cast(pa.int64()).as_py() & _M)
    return _mix((int(value) + _K) & _M)


@pytest.mark.parametrize("game", GAMES)
def test_row_and_id_hashes_are_their_definition(game):
    """The index's hashes (stored: a change would make every stored round look new) equal their
    definition computed value by value, on stored rows of every game (ids long and short, ASCII
    or not, and nulls)."""
    from auditkit.ingest.hashing import content_columns, id_hashes, row_hashes
    from auditkit.schema import OPTIONAL

    records = example_records(game)
    records += [dict(records[0], round_id="é" * 70 + "-x", dealer_id=None), dict(records[1], round_id="y" * 130)]
    path_lines = [(i + 1, json.dumps(r).encode()) for i, r in enumerate(records)]
    parsed = Parsed()
    from auditkit.ingest.blocks import line_by_line

    line_by_line(parsed, path_lines, decoded=False)
    for table in parsed.tables.values():
        columns = content_columns(table.column_names)
        expected = []
        for row in table.to_pylist():
            h = 0
            for name in columns:
                if name in OPTIONAL and not row[name]:  # a column stores had not: hashes stay as they were
                    continue
                h = _mix((h * _K + _value_hash(row[name], table.schema.field(name).type)) & _M)
            expected.append(h)
        assert row_hashes(table, columns).tolist() == expected
        assert id_hashes(table["round_id"]).tolist() == [_value_hash(r, pa.string()) for r in table["round_id"].to_pylist()]
