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
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import example_records
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from test_fuzz import GAMES, SHAPED, WILD, _settings, mutate

from auditkit.ingest.blocks import Parsed, parse_block
from auditkit.ingest.jsonl import read_blocks
from auditkit.ingest.sources import ingest_source
from auditkit.store import Store

BLOCKS = settings(_settings(300), phases=[Phase.explicit, Phase.generate])  # a failure is printed unshrunk:
# shrinking blocks of forty mutated records takes minutes
ODD_LINES = [b"", b"   ", b"\t", b"\x0b", b"\x00\x00\x00", b"\x00", b"null", b"[1, 2]", b"42", b'"text"', b"{",
             b'{"round_id": "x"} {"round_id": "y"}', b"\xef\xbb\xbf{}", b"{}", b"\xff\xfe", b'{"a": 1,}',
             b'{"round_id": "a\x01b"}', b"[" * 3000, b'{"round_id": 1e999}']


def _styles(rec: dict, rng: random.Random) -> bytes | None:
    """The record as one JSON line in one of several styles (None when Python cannot write it)."""
    style = rng.randrange(5)  # 0-3: styles of the same content; 4: keys named twice
    try:
        if style == 0:
            text = json.dumps(rec)
        elif style == 1:
            text = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
        elif style == 2:
            text = json.dumps(dict(sorted(rec.items(), reverse=True)), indent=None)
        elif style == 3:  # whole amounts written with a fraction, as a re-export might
            text = json.dumps(rec).replace(": 0,", ": 0.0,").replace(": 5,", ": 5.0,")
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
        kind = data.draw(st.sampled_from(["example", "mutant", "shaped", "shaped", "odd", "copy"]), label="kind")
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
        assert other.to_pylist() == table.to_pylist(), game


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


@pytest.mark.parametrize("game", ["baccarat", "three_card_poker"])
def test_the_bulk_path_reads_plain_records_without_the_per_line_reader(game, tmp_path, monkeypatch):
    """Clean lines of a game with a bulk reader are vouched for by the vectorized checks (the
    property above would also hold if every line fell back to the per-line reader)."""
    from auditkit.ingest import blocks

    records = [r for r in example_records(game) if r["game"] in (game, "mini_baccarat")]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    calls: list[int] = []
    real = blocks._line_by_line
    monkeypatch.setattr(blocks, "_line_by_line", lambda parsed, items, decoded: (calls.append(len(items)),
                                                                               real(parsed, items, decoded)))
    plain = _blocks_of(path, 1 << 24, False)
    calls.clear()
    (bulk,) = _blocks_of(path, 1 << 24, True)
    _same(bulk, plain[0])
    assert sum(calls) <= sum(1 for r in records if not str(r.get("round_id", "")).isascii()), calls
    assert sum(t.num_rows for t in bulk.tables.values()) > 0


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
        for game in ("baccarat", "three_card_poker", "blackjack"):
            rec = dict(example_records(game)[0], round_id=f"{game}-{i}", note=[None] * (i % 4) + [1.5])
            rec["wagers"] = [dict(w, extra=[None, {"a": [None, 2]}]) for w in rec.get("wagers", [])]
            rec["events"] = [dict(e, extra=[None] * 3 + [[None, 1]]) for e in rec.get("events", [])]
            lines.append(json.dumps(rec))
    data = ("\n".join(lines) + "\n").encode()
    table = blocks._read_json(data)
    assert table is not None and table.num_rows == len(lines)
    table.validate(full=True)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    (bulk,), (plain,) = _blocks_of(path, 1 << 24, True), _blocks_of(path, 1 << 24, False)
    _same(bulk, plain)
    assert {g: t.num_rows for g, t in bulk.tables.items()} == {"baccarat": 60, "three_card_poker": 60, "blackjack": 60}


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
