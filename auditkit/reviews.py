"""Auditors' reviews of findings, kept in the store and carried forward from run to run.

A review gives a finding (a round and a rule) a status (``open``, ``explained``, ``confirmed``,
``escalated``) and a note, with who and when. Reviews are append-only: each ``auditkit review``
writes one new file under ``_reviews/`` (never rewriting another), under the store's exclusive
lock; the latest review of a finding wins. A re-run finds the same (round, rule) again, so its
review shows again: reports, workbooks and notebooks join the reviews to the findings.
"""

from __future__ import annotations

import csv
import getpass
import io
import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STATUSES", "REVIEW_COLUMNS", "Review", "add_reviews", "latest", "with_reviews", "read_review_csv"]

STATUSES = ("open", "explained", "confirmed", "escalated")
REVIEW_COLUMNS = ["status", "note", "reviewed_by", "reviewed_at"]
Review = dict[str, Any]


def _who(by: str | None) -> str:
    if by:
        return by
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def add_reviews(store: Any, reviews: Iterable[Review], *, by: str | None = None, lock_timeout: float = 60.0) -> int:
    """Append reviews (``round_id``, ``rule_id``, ``status``, ``note``) to the store, as one new file under
    the store's exclusive lock; returns how many. A status outside :data:`STATUSES` is a ValueError."""
    stamp = datetime.now(UTC)
    now = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    who = _who(by)
    rows = []
    for r in reviews:
        status = str(r.get("status") or "").strip().lower()
        if status not in STATUSES:
            raise ValueError(f"status {r.get('status')!r} of {r.get('round_id')} {r.get('rule_id')}: "
                             f"not one of {', '.join(STATUSES)}")
        rows.append({"round_id": str(r["round_id"]), "rule_id": str(r["rule_id"]), "status": status,
                     "note": str(r.get("note") or ""), "reviewed_by": who, "reviewed_at": now})
    if not rows:
        return 0
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    # microseconds in the name: files sort in the order written, so two reviews in one second keep their order
    name = f"_reviews/{stamp.strftime('%Y-%m-%dT%H%M%S.%fZ')}-{uuid.uuid4().hex[:8]}.jsonl"
    with store.lock(lock_timeout, command="review"):
        store.write_text(name, text)
    return len(rows)


def latest(store: Any) -> pd.DataFrame:
    """The latest review of each finding (``round_id``, ``rule_id`` and :data:`REVIEW_COLUMNS`)."""
    import pandas as pd

    rows = []
    for rel in sorted(store.text_files("_reviews/*.jsonl"), key=str):  # written order (their names)
        for line in (store.read_text(rel) or "").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    frame = pd.DataFrame(rows, columns=["round_id", "rule_id", *REVIEW_COLUMNS])
    if frame.empty:
        return frame
    return (frame.sort_values("reviewed_at", kind="stable")
            .drop_duplicates(["round_id", "rule_id"], keep="last").reset_index(drop=True))


def with_reviews(findings: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
    """The findings with :data:`REVIEW_COLUMNS` at the end: a finding never reviewed is ``open``."""
    out = findings.drop(columns=[c for c in REVIEW_COLUMNS if c in findings.columns])
    if reviews.empty:
        return out.assign(status="open", note="", reviewed_by="", reviewed_at="")
    out = out.merge(reviews, on=["round_id", "rule_id"], how="left")
    out["status"] = out["status"].fillna("open")
    for c in ("note", "reviewed_by", "reviewed_at"):
        out[c] = out[c].fillna("")
    return out


def read_review_csv(path: str | Path) -> tuple[list[Review], list[str]]:
    """The reviews an auditor filled in a findings CSV (a spreadsheet's save: a BOM, cp1252, columns in
    any order, the CSV's formula-escaping quote on cells); rows with a blank status are skipped.
    Returns the reviews and the problems (row and reason) of rows that could not be read."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = {(f or "").strip().lower(): f for f in reader.fieldnames or []}
    missing = [c for c in ("round_id", "rule_id", "status") if c not in fields]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)} (export the findings CSV, fill status and note)")

    def cell(row: dict[str, str], name: str) -> str:
        value = (row.get(fields.get(name, ""), "") or "").strip()
        return value[1:] if value.startswith("'") and value[1:2] in ("=", "+", "-", "@") else value

    reviews, problems = [], []
    for n, row in enumerate(reader, start=2):
        status = cell(row, "status").lower()
        if not status:
            continue
        if status not in STATUSES:
            problems.append(f"row {n}: status {status!r} is not one of {', '.join(STATUSES)}")
            continue
        reviews.append({"round_id": cell(row, "round_id"), "rule_id": cell(row, "rule_id"), "status": status,
                        "note": cell(row, "note")})
    return reviews, problems
