"""Simulated tables writing their logs in real time, for live-mode demos, tests and benchmarks.

``auditkit simulate GAME --follow --rate 200 --tables 50 --out-dir DIR [--seconds N]``
simulates a pool of rounds once (the game's honest simulator, with its injected
faults), then deals them out to ``tables`` per-table files ``DIR/<table>.jsonl``
at ``rate`` rounds per second in all, one line per round, flushed as written,
each stamped with the time it is written. The pool is replayed with new round and
shoe ids when it runs out, so a run may last as long as wanted.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..store import safe_component

__all__ = ["follow", "follow_command", "table_streams"]

POOL = 4000  # rounds simulated once, replayed with new ids


def table_streams(game: str, tables: int, *, seed: int = 0, fault_rate: float = 0.0, pool: int = POOL
                  ) -> list[tuple[str, list[dict[str, Any]]]]:
    """``tables`` streams of spec records (table id, its rounds in order), from one simulated pool."""
    from ..ingest.jsonl import records_from_table
    from . import simulate

    table, _truth = simulate(game, pool, seed=seed, fault_rate=fault_rate)
    by_table: dict[str, list[dict[str, Any]]] = {}
    for rec in records_from_table(table, game):
        by_table.setdefault(rec["table_id"], []).append(rec)
    sources = list(by_table.values())
    prefix = safe_component(game[:3].upper())
    return [(f"{prefix}-L{k + 1:02d}", sources[k % len(sources)]) for k in range(tables)]


def _stamp(rec: dict[str, Any], table_id: str, cycle: int, now: datetime) -> dict[str, Any]:
    """A pool record as table ``table_id`` deals it in replay ``cycle``, started now (local time)."""
    out = dict(rec)
    out["table_id"] = table_id
    out["round_id"] = f"{table_id}-c{cycle}-{rec['round_id']}"
    if rec.get("shoe_id"):
        out["shoe_id"] = f"{table_id}-c{cycle}-{rec['shoe_id']}"
    offset = datetime.fromisoformat(rec["started_at"]).utcoffset() or timedelta(0)
    out["started_at"] = now.astimezone(timezone(offset)).isoformat(timespec="microseconds")
    return out


def follow(game: str, out_dir: Path, *, rate: float = 200.0, tables: int = 50, seconds: float | None = None,
           seed: int = 0, fault_rate: float = 0.0, on_write: Callable[[str, float], None] | None = None,
           stop: Callable[[], bool] | None = None) -> int:
    """Write rounds to per-table logs at ``rate`` rounds/s for ``seconds`` (or until ``stop()``); returns
    the number written. ``on_write(round_id, time.time())`` is called after each line is flushed."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    streams = table_streams(game, tables, seed=seed, fault_rate=fault_rate)
    handles = [open(out_dir / f"{safe_component(tid)}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
               for tid, _ in streams]
    pos = [0] * len(streams)
    cycle = [0] * len(streams)
    start = time.monotonic()
    written, nxt = 0, 0
    try:
        while True:
            elapsed = time.monotonic() - start
            if (seconds is not None and elapsed >= seconds) or (stop is not None and stop()):
                break
            due = int(rate * elapsed) - written
            for _ in range(max(due, 0)):
                k = nxt
                nxt = (nxt + 1) % len(streams)
                tid, recs = streams[k]
                if pos[k] == len(recs):
                    pos[k], cycle[k] = 0, cycle[k] + 1
                rec = _stamp(recs[pos[k]], tid, cycle[k], datetime.now(UTC))
                pos[k] += 1
                handles[k].write(json.dumps(rec, separators=(",", ":")) + "\n")
                handles[k].flush()
                written += 1
                if on_write is not None:
                    on_write(rec["round_id"], time.time())
            time.sleep(0.005)
    finally:
        for fh in handles:
            fh.close()
    return written


def follow_command(args: Any) -> int:
    """Run ``auditkit simulate GAME --follow``; exit 0 at the end or at SIGINT/SIGTERM."""
    stopped = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.append(True))
    n = follow(args.game, Path(args.out_dir), rate=args.rate, tables=args.tables, seconds=args.seconds,
               seed=args.seed, fault_rate=args.fault_rate, stop=lambda: bool(stopped))
    print(f"{n} {args.game} round(s) written to {args.tables} table log(s) in {args.out_dir}")
    return 0
