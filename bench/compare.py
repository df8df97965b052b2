"""Benchmark: from a baccarat log to a findings CSV, auditkit beside what a user would pick instead.

    pip install -e '.[bench]'            # DuckDB
    python bench/compare.py --rounds 200000 [--rounds 1000000] [--keep DIR]
    python bench/compare.py --store-only --rounds 10000000 --keep DIR   # the store routes alone
    python bench/compare.py --ingest-games [--rounds 200000] [--keep DIR]   # ingest of every game

``--ingest-games`` times ``auditkit ingest --workers 1`` of a log of each game, as JSON Lines
beside a bare ``pyarrow.json.read_json`` with the same schema (and DuckDB's JSON reader into
Arrow with it), and in the CSV layout (written from the same records) beside a bare
``pyarrow.csv.read_csv`` of its files, every cell as text.

Simulates one baccarat log (JSON Lines, 1% of rounds with a planted fault),
then runs each route in its own process, on the same file, in one run:

- ``auditkit validate LOG --out F``: the one-shot route, log in, CSV out (the default workers,
  then ``--workers 1``);
- ``auditkit ingest LOG --store S`` (the default workers, then ``--workers 1``), then
  ``auditkit validate S --out F``;
- the same draw, outcome and payout checks written as one DuckDB SQL query
  over the JSONL (``read_json`` with a column list), on 1 and on 2 threads,
  and over the Parquet store auditkit wrote;
- a row-by-row Python checker (``json.loads`` per line, dict checks);
- the floors: a bare ``pyarrow.json.read_json`` of the file with the bulk
  reader's explicit schema, and a bare pyarrow read of the store's columns
  that the checks need; beside them DuckDB's JSON reader as a parser (the
  file into Arrow with the same schema, 1 thread).

For each it prints CPU seconds (user + system of that process), wall
seconds, peak RSS and the ratio of CPU time to auditkit's one-shot route;
then checks that every route finds the same (round_id, citation) pairs on
the citations they all check ((b)(1)-(b)(11), outcome, paytable). Run by
hand, never as a timed test.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SECTION = "68 IAC 10-10-14"
COMPARED = {f"{SECTION}(b)({k})" for k in range(1, 12)} | {"outcome", "paytable"}
"""The citations every route checks."""

# ---- the checks in SQL ---------------------------------------------------------------------------
_POINTS = """(CASE WHEN upper({c}) = 'JK' THEN 0
      WHEN substr(upper({c}), 1, 1) IN ('T', 'J', 'Q', 'K') OR {c} LIKE '10%' THEN 0
      WHEN substr(upper({c}), 1, 1) = 'A' THEN 1
      ELSE CAST(substr({c}, 1, 1) AS INTEGER) END)"""


def _pts(c: str) -> str:
    return _POINTS.format(c=c)


CHECKS_SQL = f"""
WITH r AS (
  SELECT round_id, coalesce(nullif(status, ''), 'completed') AS status, outcome, wagers,
         len(player_cards) AS pn, len(banker_cards) AS bn,
         ({_pts('player_cards[1]')} + {_pts('player_cards[2]')}) % 10 AS p2,
         ({_pts('banker_cards[1]')} + {_pts('banker_cards[2]')}) % 10 AS b2,
         CASE WHEN len(player_cards) >= 3 THEN {_pts('player_cards[3]')} ELSE 0 END AS p3,
         list_sum(list_transform(player_cards, lambda x: {_pts('x')})) % 10 AS pf,
         list_sum(list_transform(banker_cards, lambda x: {_pts('x')})) % 10 AS bf
  FROM rounds WHERE game IN ('baccarat', 'mini_baccarat')
), f AS (
  SELECT *, pn >= 2 AND bn >= 2 AS complete, pn >= 3 AS pd, bn >= 3 AS bd,
         p2 >= 8 OR b2 >= 8 AS nat,
         CASE WHEN pf > bf THEN 'player' WHEN bf > pf THEN 'banker' ELSE 'tie' END AS dealt
  FROM r
), t AS (
  SELECT *, complete AND NOT nat AS applies, p2 <= 5 AS p_should,
         CASE WHEN NOT pd THEN b2 <= 5
              WHEN b2 <= 2 THEN true WHEN b2 = 3 THEN p3 <> 8 WHEN b2 = 4 THEN p3 BETWEEN 2 AND 7
              WHEN b2 = 5 THEN p3 BETWEEN 4 AND 7 WHEN b2 = 6 THEN p3 BETWEEN 6 AND 7 ELSE false END AS b_should
  FROM f
)
SELECT round_id, '{SECTION}(b)(1)' AS citation FROM t WHERE applies AND p_should AND NOT pd
UNION ALL SELECT round_id, '{SECTION}(b)(2)' FROM t WHERE applies AND NOT p_should AND pd
UNION ALL SELECT round_id, '{SECTION}(b)(3)' FROM t WHERE complete AND nat AND (pd OR bd)
UNION ALL SELECT round_id, '{SECTION}(b)(' ||
    CASE WHEN NOT pd THEN (CASE WHEN b2 <= 5 THEN '9' ELSE '10' END)
         WHEN b2 <= 2 THEN '11' WHEN b2 = 3 THEN '5' WHEN b2 = 4 THEN '6' WHEN b2 = 5 THEN '7'
         WHEN b2 = 6 THEN '8' ELSE '4' END || ')'
  FROM t WHERE applies AND bd <> b_should
UNION ALL SELECT round_id, 'outcome' FROM t WHERE status = 'completed' AND complete AND outcome IS DISTINCT FROM dealt
UNION ALL SELECT DISTINCT round_id, 'paytable' FROM (
  SELECT round_id, w.bet AS bet, w.amount AS amount, w.net AS net,
         CASE WHEN w.bet = dealt THEN (CASE w.bet WHEN 'player' THEN 1.0 WHEN 'banker' THEN 0.95 ELSE 8.0 END)
              WHEN dealt = 'tie' AND w.bet <> 'tie' THEN 0.0 ELSE -1.0 END * w.amount AS expected
  FROM (SELECT round_id, dealt, unnest(wagers) AS w FROM t WHERE status = 'completed' AND complete)
  WHERE w.bet IN ('player', 'banker', 'tie')
) WHERE abs(net - expected) >= 0.01 - 1e-9
"""

JSON_COLUMNS = ("{round_id: 'VARCHAR', game: 'VARCHAR', status: 'VARCHAR', player_cards: 'VARCHAR[]', "
                "banker_cards: 'VARCHAR[]', outcome: 'VARCHAR', "
                "wagers: 'STRUCT(seat INTEGER, bet VARCHAR, amount DOUBLE, net DOUBLE)[]'}")


def duckdb_route(source: str, out: str, threads: int, store: bool) -> None:
    """The checks as one DuckDB query over the JSONL (or the store's Parquet), to a CSV."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    if store:
        # card codes back to names are not needed: the store keeps codes, so read points directly
        con.execute(f"""CREATE VIEW rounds AS SELECT round_id, 'baccarat' AS game, status, outcome, wagers,
            list_transform(player_cards, lambda c: CASE WHEN c >= 52 THEN 'JK' ELSE
                substr('23456789TJQKA', c // 4 + 1, 1) || 'c' END) AS player_cards,
            list_transform(banker_cards, lambda c: CASE WHEN c >= 52 THEN 'JK' ELSE
                substr('23456789TJQKA', c // 4 + 1, 1) || 'c' END) AS banker_cards
            FROM read_parquet('{source}/rounds/game=*/date=*/*.parquet')""")
    else:
        con.execute(f"CREATE VIEW rounds AS SELECT * FROM read_json('{source}', format='newline_delimited', "
                    f"columns={JSON_COLUMNS}, maximum_object_size=1048576)")
    con.execute(f"COPY ({CHECKS_SQL}) TO '{out}' (HEADER, DELIMITER ',')")


# ---- the checks row by row ------------------------------------------------------------------------
def _points(card: str) -> int:
    c = card.upper()
    if c == "JK" or c[0] in "TJQK" or c.startswith("10"):
        return 0
    return 1 if c[0] == "A" else int(c[0])


def row_checks(rec: dict) -> list[str]:
    """The citations one baccarat record breaks (the same checks as the SQL)."""
    found = []
    player, banker = rec["player_cards"], rec["banker_cards"]
    if len(player) < 2 or len(banker) < 2:
        return found
    p2 = (_points(player[0]) + _points(player[1])) % 10
    b2 = (_points(banker[0]) + _points(banker[1])) % 10
    pd, bd = len(player) >= 3, len(banker) >= 3
    p3 = _points(player[2]) if pd else 0
    if p2 >= 8 or b2 >= 8:
        if pd or bd:
            found.append(f"{SECTION}(b)(3)")
    else:
        if (p2 <= 5) != pd:
            found.append(f"{SECTION}(b)(1)" if p2 <= 5 else f"{SECTION}(b)(2)")
        if not pd:
            should, sub = b2 <= 5, (9 if b2 <= 5 else 10)
        else:
            should = {0: True, 1: True, 2: True, 3: p3 != 8, 4: 2 <= p3 <= 7, 5: 4 <= p3 <= 7,
                      6: 6 <= p3 <= 7}.get(b2, False)
            sub = {0: 11, 1: 11, 2: 11, 3: 5, 4: 6, 5: 7, 6: 8}.get(b2, 4)
        if bd != should:
            found.append(f"{SECTION}(b)({sub})")
    if (rec.get("status") or "completed") != "completed":
        return found
    pf, bf = sum(map(_points, player)) % 10, sum(map(_points, banker)) % 10
    dealt = "player" if pf > bf else "banker" if bf > pf else "tie"
    if rec.get("outcome") != dealt:
        found.append("outcome")
    for w in rec.get("wagers") or ():
        bet = w["bet"]
        if bet not in ("player", "banker", "tie"):
            continue
        win = {"player": 1.0, "banker": 0.95, "tie": 8.0}[bet]
        per_unit = win if bet == dealt else 0.0 if dealt == "tie" and bet != "tie" else -1.0
        if abs(w["net"] - per_unit * w["amount"]) >= 0.01 - 1e-9:
            found.append("paytable")
            break
    return found


def row_route(source: str, out: str) -> None:
    """json.loads per line, checks on dicts, a CSV row per finding."""
    with open(source, encoding="utf-8") as fh, open(out, "w", newline="") as dst:
        writer = csv.writer(dst)
        writer.writerow(["round_id", "citation"])
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("game") in ("baccarat", "mini_baccarat"):
                for citation in row_checks(rec):
                    writer.writerow([rec["round_id"], citation])


# ---- floors ---------------------------------------------------------------------------------------
def arrow_json_route(source: str, schema: str) -> None:
    """A bare pyarrow.json.read_json of the file with an explicit schema (read from the file
    ``schema``, written by :func:`_schema_file`: this process imports pyarrow only)."""
    import pyarrow as pa
    import pyarrow.json as pj

    with open(schema, "rb") as fh:
        explicit = pa.ipc.read_schema(pa.py_buffer(fh.read()))
    with open(source, "rb") as fh:
        pj.read_json(fh, read_options=pj.ReadOptions(use_threads=False, block_size=16 << 20),
                     parse_options=pj.ParseOptions(explicit_schema=explicit, unexpected_field_behavior="ignore"))


def _duckdb_type(t: Any) -> str:
    """The DuckDB column type of an Arrow type of the bulk reader's schema."""
    import pyarrow as pa

    if pa.types.is_list(t):
        return _duckdb_type(t.value_type) + "[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f'"{f.name}" {_duckdb_type(f.type)}' for f in t) + ")"
    return {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN"}[t]


def duckdb_json_route(source: str, schema: str) -> None:
    """DuckDB's JSON reader as a parser: the file read into an Arrow table with the same schema as
    :func:`arrow_json_route`, on 1 thread. Not a route auditkit could take as it is: DuckDB casts a
    value of another type to the column's instead of refusing it (``"5"``, ``true`` and ``1.5`` read
    as a DOUBLE 5.0, 1.0 and as a BIGINT 2), where the log format makes such a line a bad record."""
    import duckdb
    import pyarrow as pa

    with open(schema, "rb") as fh:
        explicit = pa.ipc.read_schema(pa.py_buffer(fh.read()))
    columns = "{" + ", ".join(f"'{f.name}': '{_duckdb_type(f.type)}'" for f in explicit) + "}"
    con = duckdb.connect(config={"threads": 1})
    con.sql(f"SELECT * FROM read_json('{source}', format='newline_delimited', columns={columns}, "
            f"maximum_object_size=1048576)").to_arrow_table()


def arrow_csv_route(main: str) -> None:
    """A bare pyarrow.csv read of a CSV layout's main file and its companions, every cell as text."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    for path in [main, *(main[:-4] + f".{kind}.csv" for kind in ("hands", "wagers", "events"))]:
        if Path(path).exists():
            with open(path, "rb") as fh:
                names = fh.readline().decode().strip().split(",")
            pcsv.read_csv(path, read_options=pcsv.ReadOptions(use_threads=False),
                          convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string())))


def csv_layout_route(log: str, main: str) -> None:
    """Write the CSV layout of a JSONL log (in a process of its own: a child forked from a
    process that grew reports that size as its own peak RSS)."""
    from auditkit.ingest.csv import write_csv_rounds

    with open(log, encoding="utf-8") as fh:
        write_csv_rounds([json.loads(line) for line in fh], Path(main))


def _csv_layout(log: Path, folder: Path) -> Path:
    """The CSV layout of a JSONL log (written once)."""
    main = folder / (log.name.removesuffix(".jsonl") + ".csv")
    if not main.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--route", "csv-layout", str(log), str(main)],
                       check=True)
    return main


def _schema_file(work: Path, game: str | None) -> str:
    """The bulk reader's explicit schema for a block of ``game`` (None: of several games), in a file."""
    from auditkit.ingest.blocks import json_schema

    path = work / f"schema-{game or 'every-game'}.arrow"
    path.write_bytes(json_schema(game).serialize().to_pybytes())
    return str(path)


def arrow_store_route(source: str) -> None:
    """A bare pyarrow read of the stored columns the checks need."""
    import pyarrow.dataset as ds

    ds.dataset(f"{source}/rounds", format="parquet", partitioning="hive").to_table(
        columns=["round_id", "status", "player_cards", "banker_cards", "outcome", "wagers"], use_threads=False)


# ---- running and measuring ------------------------------------------------------------------------
_LAUNCHER = """
import json, os, subprocess, sys
proc = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps([usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status),
                  err[-2000:].decode(errors="replace")]))
"""
"""Runs a route and reports its rusage: Linux counts the memory a process had before its exec in its
peak RSS, so a route started straight from this process (which may hold a simulated store's rows)
reported this process's peak as its own (667 MiB for every route of a 2M-round store)."""


def _measure(argv: list[str], ok: tuple[int, ...]) -> tuple[float, float, float, int]:
    """(CPU seconds, wall seconds, peak RSS MiB, exit code) of one child process, started by a small
    launcher (:data:`_LAUNCHER`); an exit code not in ``ok`` stops the benchmark."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, json.dumps(argv)], capture_output=True, check=True)
    wall = time.perf_counter() - t0
    cpu, maxrss, code, err = json.loads(out.stdout)
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err}")
    return cpu, wall, maxrss / 1024, code


def _pairs(path: Path) -> set[tuple[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {(r["round_id"], r["citation"]) for r in csv.DictReader(fh) if r["citation"] in COMPARED}


def run(rounds: int, work: Path) -> None:
    py, auditkit = sys.executable, [sys.executable, "-m", "auditkit", "-q"]
    log = work / "rounds.jsonl"
    if not log.exists():
        subprocess.run([*auditkit, "simulate", "baccarat", "--rounds", str(rounds), "--fault-rate", "0.01",
                        "--seed", "7", "--out", str(log)], check=True)
    size = log.stat().st_size
    print(f"\n{rounds:,} baccarat rounds, {size / 2**20:,.0f} MiB of JSONL ({size / rounds:,.0f} bytes a line); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    store = work / "store"
    subprocess.run(["rm", "-rf", str(store), str(work / "store1")], check=True)
    me = [py, str(Path(__file__).resolve()), "--route"]
    routes = [
        ("auditkit validate LOG --out (one-shot)", [*auditkit, "validate", str(log), "--out", str(work / "a.csv")],
         work / "a.csv"),
        ("auditkit validate LOG --out --workers 1", [*auditkit, "validate", str(log), "--out", str(work / "a1.csv"),
                                                     "--workers", "1"], work / "a1.csv"),
        ("auditkit ingest LOG", [*auditkit, "ingest", str(log), "--store", str(store)], None),
        ("auditkit ingest LOG --workers 1", [*auditkit, "ingest", str(log), "--store", str(work / "store1"),
                                             "--workers", "1"], None),
        ("auditkit validate STORE --out", [*auditkit, "validate", str(store), "--out", str(work / "s.csv")],
         work / "s.csv"),
        ("DuckDB SQL over the JSONL, 1 thread", [*me, "duckdb", str(log), str(work / "d1.csv"), "1"], work / "d1.csv"),
        ("DuckDB SQL over the JSONL, 2 threads", [*me, "duckdb", str(log), str(work / "d2.csv"), "2"], work / "d2.csv"),
        ("DuckDB SQL over the store, 1 thread", [*me, "duckdb-store", str(store), str(work / "ds1.csv"), "1"],
         work / "ds1.csv"),
        ("DuckDB SQL over the store, 2 threads", [*me, "duckdb-store", str(store), str(work / "ds2.csv"), "2"],
         work / "ds2.csv"),
        ("row-by-row Python checker", [*me, "rows", str(log), str(work / "r.csv")], work / "r.csv"),
        ("floor: pyarrow.json.read_json, explicit schema", [*me, "arrow-json", str(log), _schema_file(work, "baccarat")],
         None),
        ("floor: pyarrow read of the needed store columns", [*me, "arrow-store", str(store)], None),
        ("parser: DuckDB read_json into Arrow, 1 thread",
         [*me, "duckdb-json", str(log), _schema_file(work, "baccarat")], None),
    ]
    results = []
    for name, argv, out in routes:
        cpu, wall, rss, _ = _measure(argv, (0, 1) if argv[:3] == auditkit[:3] else (0,))  # 1: findings
        results.append((name, cpu, wall, rss, out))
    _report(rounds, results)


def store_run(rounds: int, work: Path) -> None:
    """The store routes alone, on a store of ``rounds`` simulated straight into it (no log): for
    stores too big to write as JSONL first (10M rounds)."""
    from auditkit.simulate import simulate_into_store
    from auditkit.store import Store

    auditkit, me = [sys.executable, "-m", "auditkit", "-q"], [sys.executable, str(Path(__file__).resolve()), "--route"]
    store = Store(work / "store")
    if store.count() != rounds:
        subprocess.run(["rm", "-rf", str(work / "store")], check=True)
        store = Store(work / "store")
        simulate_into_store(store, "baccarat", rounds, seed=7, fault_rate=0.001)
    size = sum(f.stat().st_size for f in (work / "store" / "rounds").rglob("*.parquet"))
    print(f"\nstore of {store.count():,} baccarat rounds, {size / 2**20:,.0f} MiB of Parquet; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    root = str(work / "store")
    routes = [
        ("auditkit validate STORE --workers 1", [*auditkit, "validate", root, "--workers", "1", "--out",
                                                 str(work / "s1.csv")], work / "s1.csv"),
        ("auditkit validate STORE --workers 2", [*auditkit, "validate", root, "--workers", "2", "--out",
                                                 str(work / "s2.csv")], work / "s2.csv"),
        ("DuckDB SQL over the store, 1 thread", [*me, "duckdb-store", root, str(work / "ds1.csv"), "1"],
         work / "ds1.csv"),
        ("DuckDB SQL over the store, 2 threads", [*me, "duckdb-store", root, str(work / "ds2.csv"), "2"],
         work / "ds2.csv"),
        ("floor: pyarrow read of the needed store columns", [*me, "arrow-store", root], None),
    ]
    _report(rounds, [(name, *_measure(argv, (0, 1))[:3], out) for name, argv, out in routes])
    print(f"load average at the end {os.getloadavg()[0]:.1f} (a wall clock is worth quoting only with the load of its run)")


def _report(rounds: int, results: list[tuple[str, float, float, float, Path | None]]) -> None:
    """Print the routes' figures against the first, and whether their findings agree."""
    base = results[0][1]
    print(f"{'route':52} {'CPU s':>7} {'wall s':>7} {'peak MiB':>9} {'CPU / first':>12} {'rounds/s/core':>14}")
    for name, cpu, wall, rss, _ in results:
        print(f"{name:52} {cpu:7.2f} {wall:7.2f} {rss:9.0f} {cpu / base:12.2f} {rounds / cpu:14,.0f}")
    sets = {name: _pairs(out) for name, *_, out in results if out is not None}
    if not sets:
        return
    reference = sets[results[0][0]]
    print(f"findings compared on (b)(1)-(b)(11), outcome, paytable: {len(reference):,} (round, citation) pairs")
    for name, found in sets.items():
        same = found == reference
        print(f"  {'same' if same else 'DIFFERENT'}: {name}" + ("" if same else
              f" ({len(found - reference)} extra, {len(reference - found)} missing, e.g. "
              f"{sorted(found ^ reference)[:3]})"))


def ingest_games(rounds: int, work: Path) -> None:
    """``auditkit ingest`` of a log of each game beside the parsing floor, in one run."""
    py, auditkit = sys.executable, [sys.executable, "-m", "auditkit", "-q"]
    me = [py, str(Path(__file__).resolve()), "--route"]
    print(f"\n{rounds:,} rounds a game; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'game':18} {'ingest CPU s':>12} {'floor CPU s':>12} {'ratio':>6} {'every game':>11} {'DuckDB':>7} "
          f"{'rounds/s/core':>14} {'peak MiB':>9} {'CSV layout: ingest':>19} {'floor':>6} {'ratio':>6} {'peak MiB':>9}")
    from auditkit import games

    for g in games.games():
        log = work / f"{g.name}.jsonl"
        if not log.exists():
            subprocess.run([*auditkit, "simulate", g.name, "--rounds", str(rounds), "--fault-rate", "0.01",
                            "--seed", "7", "--out", str(log)], check=True)
        store = work / f"store-{g.name}"
        subprocess.run(["rm", "-rf", str(store)], check=True)
        cpu, _, rss, _ = _measure([*auditkit, "ingest", str(log), "--store", str(store), "--workers", "1"], (0,))
        floor, *_ = _measure([*me, "arrow-json", str(log), _schema_file(work, g.name)], (0,))
        every, *_ = _measure([*me, "arrow-json", str(log), _schema_file(work, None)], (0,))
        duck, *_ = _measure([*me, "duckdb-json", str(log), _schema_file(work, g.name)], (0,))
        main = _csv_layout(log, work / f"csv-{g.name}")
        subprocess.run(["rm", "-rf", str(store)], check=True)
        csv_cpu, _, csv_rss, _ = _measure([*auditkit, "ingest", str(main), "--store", str(store), "--workers", "1"], (0,))
        csv_floor, *_ = _measure([*me, "arrow-csv", str(main)], (0,))
        print(f"{g.name:18} {cpu:12.2f} {floor:12.2f} {cpu / floor:6.2f} {every:11.2f} {duck:7.2f} {rounds / cpu:14,.0f} "
              f"{rss:9.0f} {csv_cpu:19.2f} {csv_floor:6.2f} {csv_cpu / csv_floor:6.2f} {csv_rss:9.0f}")


def source_route(export: str, profile: str) -> None:
    """The raw source read alone: the export's rows as string columns (no mapping)."""
    from auditkit.ingest.profiles import load_profile
    from auditkit.ingest.profiles.source import open_source

    for _ in open_source(load_profile(Path(profile)).source, export).batches():
        pass


def profile_run(rounds: int, work: Path) -> None:
    """A one-row-per-round baccarat CSV (sample_data/exports' shape, read by its profile) ingested
    through the profile, beside the JSONL bulk reader ingesting the same rounds (issue 26's target:
    at least half its rounds per second)."""
    from auditkit.simulate.exports import baccarat_csv

    py, auditkit = sys.executable, [sys.executable, "-m", "auditkit", "-q"]
    log = work / "rounds.jsonl"
    if not log.exists():
        subprocess.run([*auditkit, "simulate", "baccarat", "--rounds", str(rounds), "--fault-rate", "0.01",
                        "--seed", "7", "--out", str(log)], check=True)
    export, profile = work / "rounds.csv", work / "rounds.toml"
    if not export.exists():
        baccarat_csv(log, export)
    shutil.copyfile(Path(__file__).resolve().parents[1] / "sample_data/exports/baccarat_rounds.toml", profile)
    subprocess.run(["rm", "-rf", str(work / "store-jsonl"), str(work / "store-profile")], check=True)
    print(f"\n{rounds:,} baccarat rounds: JSONL {log.stat().st_size / 2**20:,.0f} MiB, one-row-per-round CSV "
          f"{export.stat().st_size / 2**20:,.0f} MiB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    me = [py, str(Path(__file__).resolve()), "--route"]
    routes = [
        ("auditkit ingest LOG --workers 1 (JSONL bulk reader)",
         [*auditkit, "ingest", str(log), "--store", str(work / "store-jsonl"), "--workers", "1"], None),
        ("auditkit ingest EXPORT --profile P --workers 1",
         [*auditkit, "ingest", str(export), "--profile", str(profile), "--store", str(work / "store-profile"),
          "--workers", "1"], None),
        ("floor: the profile's raw CSV source alone", [*me, "profile-source", str(export), str(profile)], None),
    ]
    _report(rounds, [(name, *_measure(argv, (0, 1))[:3], out) for name, argv, out in routes])


def byte_compiled() -> None:
    """auditkit's modules compiled to ``__pycache__`` before any route runs, as an installed package's are:
    where ``PYTHONDONTWRITEBYTECODE`` is set (as on the shared development machine) and the tree is
    fresh, every auditkit process compiled what it imported (0.3-0.4 CPU s for the whole package, about
    a tenth of a 200k one-shot), and a worktree's first run was timed with it."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("auditkit")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, action="append", help="rounds per run (repeatable; default 200000)")
    ap.add_argument("--keep", type=Path, help="work folder to keep (logs are reused between runs)")
    ap.add_argument("--store-only", action="store_true",
                    help="only the store routes, on a store simulated without a log (for 10M rounds)")
    ap.add_argument("--ingest-games", action="store_true",
                    help="time auditkit ingest of each game's log (JSONL, and in the CSV layout) beside the "
                         "parsing floors instead")
    ap.add_argument("--profile", action="store_true",
                    help="time a one-row-per-round baccarat CSV ingested through its import profile beside "
                         "the JSONL bulk reader instead")
    ap.add_argument("--route", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.route:
        kind, *rest = args.route
        if kind == "duckdb":
            duckdb_route(rest[0], rest[1], int(rest[2]), store=False)
        elif kind == "duckdb-store":
            duckdb_route(rest[0], rest[1], int(rest[2]), store=True)
        elif kind == "rows":
            row_route(rest[0], rest[1])
        elif kind == "arrow-json":
            arrow_json_route(rest[0], rest[1])
        elif kind == "duckdb-json":
            duckdb_json_route(rest[0], rest[1])
        elif kind == "csv-layout":
            csv_layout_route(rest[0], rest[1])
        elif kind == "arrow-csv":
            arrow_csv_route(rest[0])
        elif kind == "arrow-store":
            arrow_store_route(rest[0])
        elif kind == "profile-source":
            source_route(rest[0], rest[1])
        return
    bench = (store_run if args.store_only else ingest_games if args.ingest_games
             else profile_run if args.profile else run)
    byte_compiled()
    for rounds in args.rounds or [200_000]:
        if args.keep:
            work = args.keep / str(rounds)
            work.mkdir(parents=True, exist_ok=True)
            bench(rounds, work)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                bench(rounds, Path(tmp))


if __name__ == "__main__":
    main()
