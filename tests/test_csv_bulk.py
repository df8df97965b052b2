"""The bulk CSV reader reads every line of a CSV source exactly as the per-line reader does.

The bulk path (:func:`auditkit.ingest.csvblocks.read_csv_blocks`: pyarrow's CSV reader over the
plain lines, cells converted column by column, companion rows attached as lists, the JSONL bulk
reader's field checks, the per-line reader for whatever they do not vouch for) must give the same
stored rows, bad lines, companion entries and counts as :func:`auditkit.ingest.csv.read_csv_rounds`
and the record parser line by line (``bulk=False``, the reference). Hypothesis writes worked
examples of every game in the CSV layout, mutated and with numbers at the edges of their ranges,
then breaks the files' text (:func:`test_fuzz._csv_mutations`: quotes, embedded newlines, wrong
cell counts, junk, BOMs, bytes that are not UTF-8).
"""

from __future__ import annotations

import csv
import io
import json
import random
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from conftest import example_records
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from test_bulk import _edge, _edited, _exact
from test_fuzz import GAMES, SHAPED, WILD, _csv_mutations, _settings, mutate

from auditkit.ingest import csvblocks
from auditkit.ingest.csv import write_csv_rounds
from auditkit.ingest.jsonl import MAX_LINE
from auditkit.ingest.readers import read_source
from auditkit.ingest.sources import ingest_source
from auditkit.store import Store

SOURCES = settings(_settings(250), phases=[Phase.explicit, Phase.generate])
SPELLINGS = ["+5", "05", "-0", "1e3", "1.", ".5", "1_0", " 7 ", "nan", "inf", "True", "TRUE", "1.0000000000000002",
             "123456789012345678901", "9" * 19, "0.1", "-0.0", "10000000000000.002",
             '"7"', '""', '"a,b"', 'x"y', '"x"y', ' "x"', '"x" ', '"a""b"', '"Kh Ks"', '"', '"true"']
"""Cells the conversion must leave to the per-line reader, or read as it does (numbers, booleans,
quotes that enclose a cell and quotes that do not)."""


def _read(path: Path, bulk: bool, rows: int) -> dict:
    """Everything the readers give for a source, blocks merged."""
    tables: dict[str, list] = {}
    bad, other, renamed = {}, [], []
    lines = attached = blank = done = 0
    with mock.patch.object(csvblocks, "ROWS", rows):
        for parsed, n, a, o, last in read_source(path, "r.csv", bulk, MAX_LINE):
            for game, t in parsed.tables.items():
                tables.setdefault(game, []).extend(_exact(t.to_pylist()))
            bad.update({b[0]: b for b in parsed.bad})
            other += o
            renamed += parsed.renamed
            lines, attached, blank = lines + n, attached + a, blank + parsed.blank
            done = last
    return {"tables": tables, "bad": bad, "other": other, "renamed": sorted(renamed), "lines": lines,
            "attached": attached, "blank": blank, "done": done}


def _same(path: Path, rows: int = csvblocks.ROWS) -> dict:
    bulk, plain = _read(path, True, rows), _read(path, False, rows)
    for key in plain:
        assert bulk[key] == plain[key], (key, bulk[key], plain[key])
    return bulk


def _writable(records: list[dict], folder: Path) -> list[dict]:
    """The records the CSV writer can write (a mutant may lose its round id or hold junk items)."""
    ok = []
    for rec in records:
        try:
            write_csv_rounds([rec], folder / "probe.csv")
        except (KeyError, TypeError, AttributeError, ValueError):  # ValueError: a lone surrogate
            continue
        ok.append(rec)
    return ok


def _quoted(text: str) -> str:
    """Every cell of every line quoted, as ``csv.QUOTE_ALL`` writes them (lines the csv module
    cannot read are left alone)."""
    out = []
    for line in text.split("\n"):
        try:
            cells = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            out.append(line)
            continue
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(cells)
        out.append(buf.getvalue())
    return "\n".join(out)


def _spelled(data: st.DataObject, text: str) -> str:
    """One cell of a data line respelled as a number or boolean might be written."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[1]:
        cells = lines[1].split(",")
        j = data.draw(st.integers(0, len(cells) - 1), label="respelled cell")
        cells[j] = data.draw(st.sampled_from(SPELLINGS), label="spelling")
        lines[1] = ",".join(cells)
    return "\n".join(lines)


@SOURCES
@given(data=st.data())
def test_bulk_csv_reader_reads_every_line_as_the_per_line_reader(data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
    game = data.draw(st.sampled_from(GAMES), label="game")
    examples = example_records(game) + (example_records(data.draw(st.sampled_from(GAMES))) if rng.random() < 0.3 else [])
    records = []
    for _ in range(data.draw(st.integers(1, 12), label="records")):
        rec = json.loads(json.dumps(rng.choice(examples)))
        kind = data.draw(st.sampled_from(["example", "mutant", "shaped", "edge", "copy"]), label="kind")
        if kind == "copy" and records:
            rec = rng.choice(records)
        elif kind in ("mutant", "shaped"):
            rec = mutate(data, rec, rec.get("game", game), WILD if kind == "mutant" else SHAPED)
        elif kind == "edge":
            rec = _edge(data, rec)
        records.append(rec)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        records = _writable(records, folder) or example_records(game)[:1]
        written = write_csv_rounds(records, folder / "r.csv")
        for path in written.values():
            text = path.read_text(encoding="utf-8")
            if data.draw(st.booleans(), label="respell"):
                text = _spelled(data, text)
            if data.draw(st.booleans(), label="quote every cell"):
                text = _quoted(text)
            if data.draw(st.booleans(), label="break"):
                text = _csv_mutations(data, text)
            raw = text.encode("utf-8", errors="surrogatepass")
            if data.draw(st.integers(0, 5), label="not utf-8") == 0:
                raw += data.draw(st.sampled_from([b"\xff", b"\xe9x", b"\r\n"]))
            path.write_bytes(raw)
        _same(written["rounds"], data.draw(st.sampled_from([1, 2, 5, csvblocks.ROWS]), label="rows"))


@pytest.mark.parametrize("quoted", [False, True])
@pytest.mark.parametrize("game", GAMES)
def test_the_bulk_csv_path_reads_plain_rounds_without_the_per_line_reader(game, quoted, tmp_path):
    """Clean rounds, their cells quoted or not, are vouched for by the bulk path (the property
    above would also hold if every line fell back to the per-line reader)."""
    from auditkit.ingest import blocks

    records = [r for r in example_records(game) if r["game"] in (game, "mini_baccarat")]
    written = write_csv_rounds(records, tmp_path / "r.csv")
    if quoted:
        for path in written.values():
            path.write_text(_quoted(path.read_text()))
    calls: list[int] = []
    real = csvblocks.line_by_line
    with mock.patch.object(csvblocks, "line_by_line", lambda parsed, items, decoded: (calls.append(len(items)),
                                                                                    real(parsed, items, decoded))):
        got = _same(written["rounds"])
    assert sum(calls) <= sum(1 for r in records if not str(r.get("round_id", "")).isascii()), calls
    assert sum(len(t) for t in got["tables"].values()) > 0
    assert blocks.bulk_readers()  # the games' readers are what vouch


@pytest.mark.parametrize("game", GAMES)
def test_bulk_csv_reader_reads_every_edge_of_every_field_as_the_per_line_reader(game, tmp_path):
    """Every field of a few worked examples dropped, null, at the edge of a range, emptied or
    changed, written in the CSV layout and read by both readers."""
    records = [dict(r, round_id=f"E{i}") for i, r in enumerate(_edited(example_records(game)[:2]))]
    records = _writable(records, tmp_path)
    written = write_csv_rounds(records, tmp_path / "r.csv")
    got = _same(written["rounds"], 7)
    assert sum(len(t) for t in got["tables"].values()) > len(records) // 10 and len(got["bad"]) > len(records) // 10


@pytest.mark.parametrize("game", GAMES)
def test_bulk_csv_reader_reads_every_spelling_of_every_cell_as_the_per_line_reader(game, tmp_path):
    """Each cell of the main file and of its companions (round ids aside) written in each of
    :data:`SPELLINGS`, in one file of a round at a time: the conversion reads a spelling as the
    per-line reader does, or leaves its round to it."""
    example = max(example_records(game), key=lambda r: len(json.dumps(r)))  # one with companion rows
    files = 1 + sum(isinstance(example.get(k), list) and bool(example[k]) for k in ("hands", "wagers", "events"))
    records = [dict(example, round_id=f"S{i}") for i in range(files * 16 * len(SPELLINGS))]
    written = write_csv_rounds(records, tmp_path / "r.csv")
    assert len(written) == files
    for f, path in enumerate(written.values()):
        lines = path.read_text().split("\n")
        names = lines[0].split(",")
        for j, line in enumerate(lines[1:], start=1):
            cells = line.split(",")
            i = int(cells[names.index("round_id")][1:]) if line else 0
            at, spelling = (i // files) % len(names), (i // files // len(names)) % len(SPELLINGS)
            if line and i % files == f and names[at] != "round_id":
                cells[at] = SPELLINGS[spelling]
                lines[j] = ",".join(cells)
        path.write_text("\n".join(lines))
    got = _same(written["rounds"], 64)
    assert len(got["tables"][game]) > len(records) // 10 and len(got["bad"]) > len(records) // 10


def test_companion_rows_go_to_the_first_round_of_their_id_and_orphans_are_quarantined(tmp_path):
    main = ("round_id,game,table_id,started_at,shoe_id,round_seq,player_cards,banker_cards,outcome\n"
            "B1,baccarat,T1,2025-06-02T09:21:45-05:00,S1,1,9c Qh,4c 9h,player\n"
            "B1,baccarat,T1,2025-06-02T09:22:45-05:00,S1,2,9c Qh,4c 9h,player\n"
            '"B2",baccarat,T1,2025-06-02T09:23:45-05:00,S1,3,9c Qh,4c 9h,player\n'
            "B3,baccarat,T1,2025-06-02T09:24:45-05:00,S1,+4,9c Qh,4c 9h,player\n")
    wagers = ("round_id,seat,bet,amount,net\nB1,1,player,10,10\nB9,1,player,10,10\nB2,1,player,10,10\n"
              "B1,2,banker,5,-5\n,1,player,1,1\nB3,1,player,1e1,10\n")
    (tmp_path / "r.csv").write_text(main)
    (tmp_path / "r.wagers.csv").write_text(wagers)
    got = _same(tmp_path / "r.csv", 2)
    assert [len(r["wagers"]) for r in got["tables"]["baccarat"]] == [2, 0, 1, 1]
    assert [o[3] for o in got["other"]] == ["wagers row for round_id 'B9', which is not in r.csv", "missing round_id"]
    assert got["attached"] == 4


def test_a_header_that_names_a_column_twice_is_read_line_by_line(tmp_path):
    rec = example_records("baccarat")[0]
    written = write_csv_rounds([rec], tmp_path / "r.csv")
    text = written["rounds"].read_text().split("\n")
    text[0] += ",outcome"
    text[1] += ",banker"
    written["rounds"].write_text("\n".join(text))
    assert csvblocks.read_csv_blocks(written["rounds"], "r.csv") is None
    _same(written["rounds"])


@pytest.mark.parametrize("game", GAMES)
def test_ingest_of_a_csv_source_stores_the_same_with_and_without_the_bulk_reader(game, tmp_path):
    """Whole sources through the store: duplicates, the index and the quarantine included."""
    import pyarrow as pa

    records = example_records(game)
    written = write_csv_rounds(records + records[:2], tmp_path / "in" / "r.csv")
    with written["rounds"].open("a") as fh:
        fh.write("junk,\n")
    stores = {}
    for bulk in (True, False):
        store = Store(tmp_path / f"store-{bulk}")
        rec, new = ingest_source(written["rounds"], store, bulk=bulk)
        assert new and rec.balanced
        rounds = {g: pa.concat_tables([store.read(g, d) for d in store.dates(g)]).sort_by("source_line").to_pylist()
                  for g in store.games()}
        quarantine = store.quarantine().drop(columns="sha256").to_dict("records")
        stores[bulk] = (rec.stored, rec.already_stored, rec.quarantined, rec.blank, rec.attached, rec.lines_read,
                        rounds, store.index().sort_by("source_line").to_pylist(), quarantine)
    assert stores[True] == stores[False]
