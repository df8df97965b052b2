"""Adversarial input: bad input gets a clear reason and nothing is lost.

Property tests (hypothesis, derandomized so CI is stable) that

- mutate the spec's worked examples of every game (fields dropped, types
  changed, nulls, huge numbers, NaN, unicode, junk, card lists and dice of any
  length, events with missing fields...): :func:`parse_record` returns or raises
  :class:`BadRecord`, never anything else, and every record it accepts is
  validated without an exception (findings are fine), alone and in shoes of
  several misshapen rounds;
- feed random bytes, truncated lines, gzip garbage and CSV oddities through
  :func:`ingest_paths`: no exception, every line is accounted for, and the
  store route validates whatever was stored; the same through ``auditkit
  validate``, which exits 0 or 1.

Regression tests for the crashes these found are at the end, as plain tests.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import example_records
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from auditkit.cards import NAMES
from auditkit.cli import main
from auditkit.games.blackjack.parse import ACTIONS as BLACKJACK_ACTIONS
from auditkit.games.pai_gow_poker.parse import EVENTS as PAI_GOW_EVENTS
from auditkit.ingest.csv import write_csv_rounds
from auditkit.ingest.records import BadRecord, parse_record
from auditkit.ingest.sources import ingest_paths
from auditkit.schema import FINDINGS
from auditkit.store import Store
from auditkit.validate import collect, validate_records

GAMES = ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")


def _settings(examples: int) -> settings:
    """Derandomized (the same cases on every run, so CI is stable), no deadline, no example database."""
    return settings(max_examples=examples, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


FUZZ, SHOES, FILES, CLI = _settings(200), _settings(80), _settings(150), _settings(40)
# amounts such as 1e300 overflow to inf in the paytable arithmetic: a warning, not an error
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

# ---- values ------------------------------------------------------------------------------
CARDS = sorted(NAMES)  # upper-case names, 10x and JK included
ODD_STRINGS = ["", " ", "NaN", "nan", "Infinity", "-Infinity", "null", "true", "0", "-1", "1e400", "Ac ",
               "Ａｃ", "A♠", "🂡", "1c", "11h", "Tx", "jk", "Jk", "\u0000", "\ud800", "é", "P", "B", "PBX",
               "../../x", "a" * 300]
HUGE = "<10**5000>"
"""Stands for 10**5000 in drawn values (hypothesis cannot print an int past Python's 4,300-digit limit)."""
ODD_NUMBERS = [0, -0.0, -1, 1, 0.5, 0.001, 7, 53, 2**31 - 1, 2**31, -2**31 - 1, 2**53 + 1, 2**63, 10**30,
               10**400, HUGE, 1e15, 1e300, -1e300, float("nan"), float("inf"), float("-inf")]
TIMESTAMPS = ["2025-06-02T09:21:45Z", "2025-06-02T09:21:45+14:00", "2025-06-02T23:59:59-23:59",
              "2025-06-02T09:21:45.123456+05:30", "2025-06-02T09:21:45+05:30:15", "2025-06-02",
              "2025-06-02T09:21:45", "0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00-01:00",
              "9999-12-31T23:59:59-05:00", "9999-12-31T23:59:59+05:00", "2025-02-30T00:00:00+00:00",
              "2025-06-02 09:21:45+00:00", "2025-W23-1T09:00:00+00:00", "20250602T092145+0000"]
WORDS = {
    "game": ["baccarat", "mini_baccarat", "blackjack", "three_card_poker", "pai_gow_poker", "roulette", "BACCARAT"],
    "status": ["completed", "void", "dead", "paused", "VOID"],
    "outcome": ["player", "banker", "tie", "dragon"],
    "decision": ["play", "fold", "raise"],
    "action": list(BLACKJACK_ACTIONS) + ["hit"],
    "type": ["wager", "first_card", "shuffle", *PAI_GOW_EVENTS],
    "bet": ["player", "banker", "tie", "insurance", "even_money", "pair_plus", "dragon", ""],
    "deal_order": ["PBPB", "PBPBP", "PBPBB", "PBPBPB", "pbpb", "P", "BBBBBBBB", "PPPP", "PBPBPBPBPB"],
    "started_at": TIMESTAMPS,
}
CARD_KEYS = {"player_cards", "banker_cards", "dealer_cards", "cards", "high", "low"}
MONEY_KEYS = {"amount", "net", "wager", "initial_wager", "ante", "play", "pair_plus", "net_ante", "net_play",
              "ante_bonus", "net_pair_plus", "table_min", "table_max"}
INT_KEYS = {"seat", "hand", "round_seq", "first_position", "cards_remaining", "count", "position", "player",
            "banker"}
BOOL_KEYS = {"doubled", "split", "surrendered", "cut_card", "exposed", "misdeal"}

scalars = (st.none() | st.booleans() | st.sampled_from(ODD_NUMBERS) | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(ODD_STRINGS) | st.text(max_size=6)
           | st.sampled_from(CARDS))
junk = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
card_lists = st.lists(st.sampled_from(CARDS), max_size=9) | st.sampled_from([[], ["Ac"], ["JK"] * 2, ["Ac"] * 8])
money = (st.sampled_from([0, 0.01, 0.5, 1, 2.5, 5, 10, 25, 100, 1e9, 1e15, 1e300, 10**400, -5, -0.01])
         | st.floats(-1e6, 1e6, allow_nan=False) | st.integers(-10**6, 10**6))
small_ints = st.integers(0, 10) | st.integers(-2, 12) | st.sampled_from([2**31 - 1, 2**31, 10**20])
dice = st.lists(st.integers(1, 6), min_size=3, max_size=3) | st.lists(st.integers(0, 7), max_size=5)


def _event(game: str) -> st.SearchStrategy[dict]:
    """Events of plausible types with some fields present, absent or odd."""
    fields = {"seat": small_ints, "action": st.sampled_from(WORDS["action"]), "amount": money,
              "count": small_ints, "dice": dice, "exposed": st.booleans() | junk, "misdeal": st.booleans() | junk,
              "high": card_lists, "low": card_lists}
    kinds = ["wager", "first_card", "nope"] if game == "blackjack" else list(PAI_GOW_EVENTS) + ["wager"]
    return st.builds(lambda kind, extra: {"type": kind, **extra}, st.sampled_from(kinds),
                     st.fixed_dictionaries({}, optional=fields))


def plausible(key: Any, game: str, item: bool = False) -> st.SearchStrategy:
    """A value of the right shape for a field, or for an ``item`` of a list field (so that many mutants
    still read well and reach the rules)."""
    if item:
        if key in CARD_KEYS:
            return st.sampled_from(CARDS)
        if key == "dice":
            return st.integers(0, 7)
        if key == "events":
            return _event(game)
        return junk
    if key in CARD_KEYS:
        return card_lists
    if key in MONEY_KEYS:
        return money if key.startswith("net") else money.map(abs)
    if key in INT_KEYS:
        return small_ints
    if key in BOOL_KEYS:
        return st.booleans()
    if key == "dice":
        return dice
    if key == "events":
        return st.lists(_event(game), max_size=6)
    if key in WORDS:
        return st.sampled_from(WORDS[key])
    if key in ("round_id", "table_id", "dealer_id", "shoe_id"):
        return st.text(max_size=8) | st.sampled_from(["X", "\ud800", "a\udfff", "../..", "a" * 300, " "])
    return junk


# ---- mutations ---------------------------------------------------------------------------
def _paths(obj: Any, here: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) to a node of a record, the root included."""
    out = [here]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, here + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, here + (i,))
    return out


def _at(obj: Any, path: tuple) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def _key_of(path: tuple) -> Any:
    """The field name a path ends in (the list's name for an item of a list)."""
    named = [p for p in path if isinstance(p, str)]
    return named[-1] if named else None


WILD = ["drop", "junk", "plausible", "plausible", "add", "empty", "grow"]
SHAPED = ["plausible", "plausible", "plausible", "plausible", "grow", "grow", "empty", "drop"]
"""Edits of any kind; and edits that mostly keep each field's type, so the mutant reads well and reaches the rules."""


def _huge(value: Any) -> Any:
    """``value`` with every :data:`HUGE` replaced by 10**5000."""
    if isinstance(value, str):
        return 10**5000 if value == HUGE else value
    if isinstance(value, list):
        return [_huge(v) for v in value]
    if isinstance(value, dict):
        return {k: _huge(v) for k, v in value.items()}
    return value


def mutate(data: st.DataObject, record: dict, game: str, ops: list[str] = WILD) -> dict:
    """One to four random edits of a copy of ``record``."""
    rec = copy.deepcopy(record)

    def draw(strategy: st.SearchStrategy, label: str | None = None) -> Any:
        return _huge(copy.deepcopy(data.draw(strategy, label=label)))  # never share a drawn value (sampled_from)

    for _ in range(draw(st.integers(1, 4), label="edits")):
        paths = _paths(rec)
        fields = [p for p in paths if p and isinstance(p[-1], str)]  # named fields, more often than list items
        path = draw(st.sampled_from(fields) if fields and draw(st.integers(0, 3)) else st.sampled_from(paths),
                    label="path")
        node = _at(rec, path)
        op = draw(st.sampled_from(ops), label="op")
        if not path:  # the record itself
            if op == "drop":
                rec.pop(draw(st.sampled_from(sorted(rec) or ["x"])), None)
            else:
                key = draw(st.sampled_from(["extra", "events", "wagers", "hands", "announced", "dealer",
                                            "status", "deal_order", "cut_card", "cards_remaining"]))
                rec[key] = draw(junk if op == "junk" else plausible(key, game))
            continue
        parent, last = _at(rec, path[:-1]), path[-1]
        if op == "drop":
            del parent[last]
        elif op == "junk":
            parent[last] = draw(junk, label="junk")
        elif op == "add" and isinstance(node, dict):
            node[draw(st.sampled_from(["extra", "type", "seat", "cards", "high", "low", "net", "amount",
                                       "dice", "count", "hand", "split", "doubled", "position"]))] = draw(junk)
        elif op == "empty" and isinstance(node, (list, dict)):
            parent[last] = type(node)()
        elif op == "grow" and isinstance(node, list):
            item = copy.deepcopy(node[draw(st.integers(0, len(node) - 1))]) if node else draw(junk)
            node.insert(draw(st.integers(0, len(node))), item)
        else:  # "plausible", or an edit that does not apply to this node
            parent[last] = draw(plausible(_key_of(path), game, item=isinstance(last, int)))
    return rec


def check_record(rec: dict, others: list[dict]) -> None:
    """parse_record returns or raises BadRecord; an accepted record is validated without error."""
    try:
        parse_record(copy.deepcopy(rec))
    except BadRecord as exc:
        assert str(exc), "a BadRecord must say why"
        event("bad record")
        return
    findings = validate_records([rec])
    event("accepted, with findings" if len(findings) else "accepted, clean")
    assert set(FINDINGS.names) <= set(findings.columns)
    assert set(findings["round_id"]) <= {rec["round_id"]}
    # with the rest of its worked examples, so the shoe rules see it among other rounds
    validate_records([r for r in others if r["round_id"] != rec["round_id"]] + [rec])


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_mutated_records_are_read_or_refused_and_validated(game: str, data: st.DataObject) -> None:
    records = example_records(game)
    original = data.draw(st.sampled_from(records), label="example")
    check_record(mutate(data, original, game), records)


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_misshapen_rounds_that_read_well_are_validated(game: str, data: st.DataObject) -> None:
    """Cards lists and dice of any length, repeated cards, jokers, zero and huge amounts, odd events..."""
    records = example_records(game)
    original = data.draw(st.sampled_from(records), label="example")
    check_record(mutate(data, original, game, SHAPED), records)


@pytest.mark.parametrize("game", GAMES)
@SHOES
@given(data=st.data())
def test_misshapen_shoes_are_validated(game: str, data: st.DataObject) -> None:
    """Several misshapen rounds validated together (shoe rules: repeated or missing round_seq, cut
    cards, odd compositions), with the other games' examples in the same batch."""
    records = example_records(game)
    picked = data.draw(st.lists(st.sampled_from(records), min_size=2, max_size=6), label="examples")
    rounds = []
    for i, original in enumerate(picked):
        rec = mutate(data, original, game, SHAPED)
        rec["round_id"] = f"M{i}"
        try:
            parse_record(copy.deepcopy(rec))
        except BadRecord:
            continue
        rounds.append(rec)
    event(f"{len(rounds)} rounds read well")
    others = [r for g in GAMES if g != game for r in example_records(g)[:3]]
    findings = validate_records(rounds + others)
    assert set(findings["round_id"]) <= {r["round_id"] for r in rounds + others}


# ---- files ---------------------------------------------------------------------------------
def _all_examples() -> list[dict]:
    return [r for g in GAMES for r in example_records(g)]


def _physical_lines(data: bytes) -> int:
    """Lines a reader must account for in an uncompressed JSONL file."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _ingest(folder: Path) -> tuple[Any, Store]:
    store = Store(folder / "store")
    report = ingest_paths([folder / "in"], store)
    for src in report.sources:
        assert src.balanced, src
    assert store.count() == report.total("stored")
    assert len(store.quarantine()) == report.total("quarantined")
    q = store.quarantine()
    assert q["reason"].map(bool).all() and (q["line"] >= 1).all()
    _, checked = collect(store)  # the store route validates whatever was stored
    assert checked == store.count()
    return report, store


def _dumps(value: Any) -> str:
    """JSON text of a value, 10**5000 written out in digits (json.dumps cannot print it)."""
    def mark(v: Any) -> Any:
        if isinstance(v, list):
            return [mark(x) for x in v]
        if isinstance(v, dict):
            return {k: mark(x) for k, x in v.items()}
        return HUGE if isinstance(v, int) and v == 10**5000 else v
    return json.dumps(mark(value)).replace(json.dumps(HUGE), "1" + "0" * 5000)


def _line(data: st.DataObject, examples: list[dict]) -> bytes:
    kind = data.draw(st.sampled_from(["good", "good", "mutant", "cut", "bytes", "blank", "text", "json", "extreme"]))
    rec = data.draw(st.sampled_from(examples))
    if kind == "extreme":  # nested past Python's recursion limit; integers past its 4,300-digit limit
        depth, digits = data.draw(st.sampled_from([10, 900, 5000])), data.draw(st.sampled_from([20, 4300, 4301]))
        return data.draw(st.sampled_from([
            json.dumps(rec)[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}",
            json.dumps(rec)[:-1] + ', "x": ' + "9" * digits + "}",
            json.dumps({**rec, "round_seq": 1}).replace('"round_seq": 1', '"round_seq": -' + "9" * digits),
        ])).encode()
    if kind == "good":
        return json.dumps(rec).encode()
    if kind == "mutant":
        return _dumps(mutate(data, rec, rec["game"])).encode()
    if kind == "cut":
        text = json.dumps(rec).encode()
        return text[: data.draw(st.integers(0, len(text) - 1))]
    if kind == "bytes":
        return data.draw(st.binary(max_size=40)).replace(b"\n", b"")
    if kind == "blank":
        return data.draw(st.sampled_from([b"", b" ", b"\t", b"\r", b" \r"]))
    if kind == "text":
        return data.draw(st.text(max_size=30)).encode().replace(b"\n", b"")
    return _dumps(_huge(data.draw(junk))).encode()


@FILES
@given(data=st.data())
def test_jsonl_garbage_is_accounted_for(data: st.DataObject) -> None:
    """Good, mutated, cut, binary, blank and extreme lines, CRLF, a BOM, plain or gzip (whole, cut,
    bit-flipped, or magic bytes and garbage): every line is accounted for."""
    examples = _all_examples()
    body = [_line(data, examples) for _ in range(data.draw(st.integers(0, 12)))]
    sep = data.draw(st.sampled_from([b"\n", b"\r\n"]))
    raw = sep.join(body) + data.draw(st.sampled_from([b"", b"\n", b"\r\n", b"\n\n"]))
    if data.draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw  # a BOM
    packing = data.draw(st.sampled_from(["plain", "plain", "gzip", "gzip-cut", "gzip-flip", "magic"]))
    if packing == "gzip":
        raw = gzip.compress(raw, mtime=0)
    elif packing == "gzip-cut":
        z = gzip.compress(raw, mtime=0)
        raw = z[: data.draw(st.integers(0, len(z)))]
    elif packing == "gzip-flip":
        z = bytearray(gzip.compress(raw, mtime=0))
        i = data.draw(st.integers(0, len(z) - 1))
        z[i] ^= data.draw(st.integers(1, 255))
        raw = bytes(z)
    elif packing == "magic":
        raw = b"\x1f\x8b" + data.draw(st.binary(max_size=40))
    name = data.draw(st.sampled_from(["log.jsonl", "log.jsonl.gz", "log.ndjson"]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "in").mkdir()
        (folder / "in" / name).write_bytes(raw)
        report, _ = _ingest(folder)
        [src] = report.sources
        if packing == "plain":
            assert src.lines_read == _physical_lines(raw)
        elif packing == "gzip":
            assert src.lines_read == _physical_lines(gzip.decompress(raw))


@CLI
@given(data=st.data())
def test_validate_command_reports_garbage_and_finishes(data: st.DataObject) -> None:
    """The one-shot command on a log of good, mutated and broken lines exits 0 or 1 and writes its
    reports (findings and quarantine), or 2 when every line was quarantined; stderr counts the
    quarantined lines."""
    examples = _all_examples()
    body = b"\n".join(_line(data, examples) for _ in range(data.draw(st.integers(1, 8))))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "log.jsonl").write_bytes(body)
        out, bad = folder / "report.csv", folder / "quarantine.csv"
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = main(["validate", str(folder / "log.jsonl"), "--out", str(out), "--quarantine-report", str(bad)])
        if status == 2:  # every line quarantined: said, the quarantine written, no report (issue 26)
            assert "every line read was quarantined" in err.getvalue() and bad.exists() and not out.exists()
            return
        assert status in (0, 1), err.getvalue()
        assert out.read_text().startswith("round_id,game,table_id,") and bad.exists()
        quarantined = int(re.search(r"quarantined (\d+)", err.getvalue()).group(1))
        assert (f"{quarantined} line(s) quarantined" in err.getvalue()) == (quarantined > 0)


CSV_CELLS = ["", " ", "nan", "NaN", "inf", "-inf", "1e400", "-5", "0", "99999999999999999999", "2.5", "true",
             "FALSE", "Ac Ac Ac Ac Ac Ac Ac Ac", "JK", "Zz", "1 2", "1 2 3 4", "7 7 7", "round_id", "game",
             '"a,b"', '""', "\u2028", "\x0c", "é", "PBPBX"]


def _csv_mutations(data: st.DataObject, text: str) -> str:
    """CSV oddities: quotes, embedded newlines, a BOM, wrong cell counts, junk lines, lost headers."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(0, 4))):
        lines = lines or [""]
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["quote", "newline", "cell+", "cell-", "junk", "drop", "dup", "blank",
                                        "unterminated", "nul", "crlf", "cell", "cell", "cell"]))
        ln = lines[i]
        if op == "cell" and ln:  # one cell of a row (or of the header) replaced
            cells = ln.split(",")
            j = data.draw(st.integers(0, len(cells) - 1))
            cells[j] = data.draw(st.sampled_from(CSV_CELLS) | st.text(max_size=6))
            lines[i] = ",".join(cells)
        elif op == "quote":
            lines[i] = ln.replace(",", ',"', 1) + '"'
        elif op == "newline":
            lines[i] = ln.replace(",", ',"a\nb",', 1)
        elif op == "cell+":
            lines[i] = ln + ",extra"
        elif op == "cell-":
            lines[i] = ln.rsplit(",", 1)[0]
        elif op == "junk":
            lines[i] = data.draw(st.text(max_size=30))
        elif op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, ln)
        elif op == "blank":
            lines.insert(i, "   ")
        elif op == "unterminated":
            lines[i] = '"' + ln
        elif op == "nul":
            lines[i] = ln + "\x00"
        elif op == "crlf":
            lines[i] = ln + "\r"
    out = "\n".join(lines)
    if data.draw(st.booleans()):
        out = "\ufeff" + out
    return out


@FILES
@given(data=st.data())
def test_csv_oddities_are_accounted_for(data: st.DataObject) -> None:
    """A CSV main file and its companions with broken rows, stray quotes, embedded newlines, a BOM,
    bytes that are not UTF-8: every physical line is stored, attached, quarantined or blank."""
    examples = _all_examples()
    records = data.draw(st.lists(st.sampled_from(examples), min_size=1, max_size=6, unique_by=lambda r: r["round_id"]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "in").mkdir()
        written = write_csv_rounds(records, folder / "in" / "r.csv")
        physical = 0
        for path in written.values():
            lines = _csv_mutations(data, path.read_text(encoding="utf-8")).encode().split(b"\n")
            if data.draw(st.integers(0, 4)) == 0:  # a byte that is not UTF-8 somewhere
                i = data.draw(st.integers(0, len(lines) - 1))
                lines[i] += data.draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3"]))
            path.write_bytes(b"\n".join(lines))
            physical += len(path.read_bytes().removeprefix(b"\xef\xbb\xbf").splitlines())
        report, _ = _ingest(folder)
        if report.skipped:  # a header that lost a round column: the file is skipped, with a warning
            assert "not a round log" in report.skipped[0][1] and not report.sources
        else:
            assert report.total("lines_read") == physical  # every line of the main file and its companions


# ---- regressions: crashes these properties found -----------------------------------------------
BACCARAT = {"round_id": "R1", "game": "baccarat", "table_id": "T1", "started_at": "2025-06-02T09:21:45-05:00",
            "shoe_id": "S1", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
            "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}


def _log(tmp_path: Path, name: str, data: bytes) -> tuple[Any, Store]:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "in" / name).write_bytes(data)
    return _ingest(tmp_path)


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-05:00"])
def test_started_at_beyond_utc_range_is_a_bad_record(tmp_path, stamp):
    """Was OverflowError in parse_record: a time that is before year 1 or after 9999 in UTC."""
    with pytest.raises(BadRecord, match="out of range in UTC"):
        parse_record({**BACCARAT, "started_at": stamp})
    report, store = _log(tmp_path, "log.jsonl", (json.dumps({**BACCARAT, "started_at": stamp}) + "\n"
                                                 + json.dumps({**BACCARAT, "round_id": "R2"}) + "\n").encode())
    [src] = report.sources
    assert (src.stored, src.quarantined) == (1, 1)
    assert store.quarantine()["reason"].iloc[0] == f"field started_at {stamp!r} is out of range in UTC"
    assert parse_record({**BACCARAT, "started_at": "0001-01-01T00:00:00-01:00"})[1] == "0001-01-01"  # in range


@pytest.mark.parametrize("field, where", [("round_id", "round_id"), ("table_id", "table_id"),
                                          ("bet", "wagers[0].bet")])
def test_lone_surrogate_in_a_text_field_is_a_bad_record(tmp_path, field, where):
    """Was UnicodeEncodeError (validate_records, and ingest writing the index or quarantine): JSON may
    escape a lone surrogate ("\\ud800"), which UTF-8 text cannot hold."""
    rec = json.loads(json.dumps(BACCARAT))
    (rec["wagers"][0] if field == "bet" else rec)[field] = "A\ud800"
    with pytest.raises(BadRecord, match=rf"field {re.escape(where)} is not valid Unicode text"):
        parse_record(rec)
    with pytest.raises(BadRecord):
        validate_records([rec])
    report, store = _log(tmp_path, "log.jsonl", (json.dumps(rec) + "\n" + json.dumps({**BACCARAT, "round_id": "R2"})
                                                 + "\n").encode())
    assert (report.sources[0].stored, report.sources[0].quarantined) == (1, 1)
    q = store.quarantine()
    assert q["raw"].iloc[0] == json.dumps(rec)  # the line as written, escape included
    assert q["round_id"].isna().iloc[0] if field == "round_id" else q["round_id"].iloc[0] == "R1"


def test_csv_line_that_is_not_utf8_is_quarantined_alone(tmp_path):
    """Was an unbalanced ingest (AssertionError): one bad byte made the whole CSV file, companions
    included, a single quarantine entry at line 0 that no line accounted for."""
    (tmp_path / "in").mkdir()
    main = ("round_id,game,table_id,started_at,shoe_id,round_seq,player_cards,banker_cards,outcome\n"
            "C1,baccarat,T1,2025-06-02T09:00:00-05:00,S1,1,9c Qh,4c 9h,player\n"
            "C2,baccarat,T\xff,2025-06-02T09:01:00-05:00,S1,2,9c Qh,4c 9h,player\n"
            "C3,baccarat,T1,2025-06-02T09:02:00-05:00,S1,3,9c Qh,4c 9h,player\n")
    (tmp_path / "in" / "r.csv").write_bytes(b"\xef\xbb\xbf" + main.encode("latin-1"))
    (tmp_path / "in" / "r.wagers.csv").write_bytes(b"round_id,seat,bet,amount,net\nC1,1,player,10,10\n"
                                                   b"C3,1,pl\xe9yer,10,10\nC3,2,player,10,10\n")
    report, store = _ingest(tmp_path)
    [src] = report.sources
    assert (src.lines_read, src.stored, src.quarantined, src.attached, src.blank) == (8, 2, 2, 2, 2)
    q = store.quarantine().sort_values("line")
    assert list(q["line"]) == [3, 3] and q["reason"].str.startswith("line is not UTF-8").all()
    assert sorted(q["source_file"].map(lambda f: Path(f).name)) == ["r.csv", "r.wagers.csv"]
    rows = {r["round_id"]: r for r in store.read("baccarat", "2025-06-02").to_pylist()}
    assert sorted(rows) == ["C1", "C3"]


def test_reports_keep_a_bare_carriage_return_in_its_cell(tmp_path):
    """A table_id or a quarantined line holding a bare \\r (a JSON "\\r" escape, a log with old Mac line
    ends) stays in its cell of the violation report and of the quarantine report."""
    odd = {**BACCARAT, "table_id": "T\r1", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 20}]}
    (tmp_path / "log.jsonl").write_bytes(json.dumps(odd).encode() + b"\n{\r}\n")
    out, bad = tmp_path / "report.csv", tmp_path / "quarantine.csv"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["validate", str(tmp_path / "log.jsonl"), "--out", str(out), "--quarantine-report", str(bad)]) == 1
    findings, quarantine = pd.read_csv(out), pd.read_csv(bad)
    assert len(findings) >= 1 and set(findings["table_id"]) == {"T\r1"}
    assert list(quarantine["raw"]) == ["{\r}"]


def test_json_too_deep_or_with_a_4301_digit_integer_is_read_or_quarantined(tmp_path):
    """Was RecursionError / ValueError out of json.loads, which stopped the ingest: a line nested
    past Python's recursion limit is a bad record ('nested too deeply'); an integer of more than
    4,300 digits (Python's limit for int) is read as a float: harmless in an extra field, refused
    by the field reader in a spec field."""
    good = json.dumps(BACCARAT)[:-1]
    lines = ["[" * 100_000,
             good + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
             good.replace('"R1"', '"R2"') + ', "x": ' + "9" * 5000 + "}",
             good.replace('"R1"', '"R3"').replace('"round_seq": 1', '"round_seq": ' + "9" * 5000) + "}"]
    report, store = _log(tmp_path, "log.jsonl", "\n".join(lines).encode())
    [src] = report.sources
    assert (src.lines_read, src.stored, src.quarantined) == (4, 1, 3)
    assert store.read("baccarat", "2025-06-02")["round_id"].to_pylist() == ["R2"]
    assert list(store.quarantine().sort_values("line")["reason"]) == [
        "not valid JSON: nested too deeply", "not valid JSON: nested too deeply",
        "field round_seq must be an integer, got inf"]


def test_integers_beyond_float_or_printing_range_are_bad_records(tmp_path):
    """Was OverflowError (an amount of 10**400: math.isfinite) and ValueError (a reason printing
    10**5000 past Python's 4,300-digit limit) out of parse_record; now BadRecord, and a JSON line
    with a 400-digit amount is quarantined."""
    wager = {"seat": 1, "bet": "player", "amount": 10**400, "net": 0}
    with pytest.raises(BadRecord, match=r"field wagers\[0\]\.amount must be a number, got 1000"):
        parse_record({**BACCARAT, "wagers": [wager]})
    for field, value, reason in [
            ("wagers", [{**wager, "amount": 10**5000}], "wagers[0].amount must be a number, got a number of more"),
            ("round_seq", 10**5000, "round_seq = a number of more than 4,300 digits is too large"),
            ("round_seq", [10**5000], "round_seq must be an integer, got a number of more"),
            ("cut_card", 10**5000, "cut_card must be true or false, got a number of more"),
            ("player_cards", ["9c", 10**5000], "player_cards: card a number of more than 4,300 digits is not a string")]:
        with pytest.raises(BadRecord, match=re.escape(reason)):
            parse_record({**BACCARAT, field: value})
    line = json.dumps({**BACCARAT, "wagers": [{**wager, "amount": 1}]}).replace('"amount": 1', '"amount": 1' + "0" * 400)
    report, store = _log(tmp_path, "log.jsonl", line.encode() + b"\n")
    assert report.sources[0].quarantined == 1
    assert store.quarantine()["reason"].iloc[0].startswith("field wagers[0].amount must be a number, got 1000")
