"""The auditor's desk (issue 42): the HTML report names who and where and where it came from, a filtered
report says so and covers the selected rounds only, the workbook is one to file (read back cell by cell
with its types), and the summary names only files that were written. The pages are drawn by headless
Chromium with the network off (screenshots in tests/artifacts/)."""

from __future__ import annotations

import datetime
import hashlib
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from python_calamine import CalamineWorkbook

from auditkit import __version__
from auditkit.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
LOGS = SAMPLE / "logs"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
STORIES = ("D705", "BAC-24", "BJ-02", "D3105", "D4003")


def _first_screen(text: str) -> str:
    """What the page shows before its coverage: the scope, the totals, who and where."""
    return text.split("<h2>What was checked</h2>", 1)[0]


def _sheet(book: CalamineWorkbook, name: str) -> list[list]:
    return book.get_sheet_by_name(name).to_python()


@pytest.fixture(scope="module")
def sample_page(tmp_path_factory) -> tuple[Path, str]:
    """validate of the whole sample data with --html: (the folder, what it printed)."""
    folder = tmp_path_factory.mktemp("sample")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["validate", str(LOGS), "--config", str(SAMPLE / "casino.toml"), "--out", str(folder / "f.csv"),
                     "--html", str(folder / "report.html"), "--xlsx", str(folder / "f.xlsx"),
                     "--no-progress"]) == 1
    return folder, out.getvalue()


@pytest.fixture(scope="module")
def job_store(tmp_path_factory) -> Path:
    """A job run over the baccarat story (D705, BAC-24) and blackjack (BJ-02): its job file."""
    folder = tmp_path_factory.mktemp("job")
    (folder / "logs").mkdir()
    for name in ("story_baccarat.jsonl.gz", "blackjack.jsonl.gz"):
        shutil.copy(LOGS / name, folder / "logs" / name)
    shutil.copy(SAMPLE / "casino.toml", folder / "casino.toml")
    job = folder / "job.toml"
    job.write_text('name = "desk"\ninputs = ["logs"]\nstore = "store"\noutput = "reports"\nconfig = "casino.toml"\n'
                   "notebooks = false\n", "utf-8")
    assert main(["-q", "run", str(job)]) == 1
    return job


def test_the_first_screen_names_the_sample_stories_and_the_foot_its_provenance(sample_page):
    folder, _ = sample_page
    text = (folder / "report.html").read_text("utf-8")
    first = _first_screen(text)
    assert "<h2>Who and where, per game</h2>" in first
    for name in STORIES:
        assert name in first, name
    who = first.split("<h2>Who and where, per game</h2>", 1)[1]
    head = re.findall(r"<th>([^<]*)</th>", who)
    assert {"findings with money", "procedure findings (no money)", "worst tables", "worst dealers",
            "improbable outcome frequencies", "overpaid USD", "underpaid USD"} <= set(head)
    f = pd.read_csv(folder / "f.csv")
    pgp = f[f["game"] == "pai_gow_poker"]
    no_money = int((pgp["discrepancy"].fillna(0) == 0).sum())
    assert no_money > 0  # D4003's house-way findings carry no money, and are counted
    row = re.search(r"<tr><td>pai_gow_poker</td><td class='n'>([\d,]+)</td><td class='n'>(\d+)</td>"
                    r"<td class='n'>(\d+)</td>", who)
    assert row and int(row.group(3)) == no_money and int(row.group(2)) == len(pgp) - no_money
    assert re.search(r"D705: [\d.]+ \(148 of 1,261 rounds; overpaid 1,478\.21\)", who)
    assert re.search(r"table BAC-24: tie 13\.2% against 9\.5% in 2,800 rounds \(adjusted p 5\.9e-09\)", who)
    foot = text.split("<h2>Provenance</h2>", 1)[1]
    from auditkit.paytables import load_config

    assert __version__ in foot and load_config(str(SAMPLE / "casino.toml")).digest() in foot
    from auditkit.ingest.csv import is_companion
    from auditkit.ingest.identity import source_sha256

    sources = [p for p in LOGS.rglob("*") if p.is_file() and not is_companion(p)]
    assert len(sources) == 7
    for log in sources:
        assert source_sha256(log) in foot, log
        if log.suffix != ".csv":  # a CSV's hash covers its companion files too
            assert hashlib.sha256(log.read_bytes()).hexdigest() in foot, log
    assert "auditkit validate " in foot and "--html" in foot
    assert "<h2>Dealers by shift</h2>" in text
    shifts = text.split("<h2>Dealers by shift</h2>", 1)[1].split("<h2>", 1)[0]
    assert re.search(r"<td>three_card_poker</td><td>D3105</td>", shifts)


def test_the_page_without_filters_says_every_round_and_its_period(sample_page):
    folder, _ = sample_page
    first = _first_screen((folder / "report.html").read_text("utf-8"))
    assert "Scope: every round of the inputs" in first and "gaming days 2025-06-01 to 2025-07-05" in first


def test_a_filtered_report_names_its_filter_and_covers_the_selected_rounds_only(job_store, tmp_path, capsys):
    capsys.readouterr()
    assert main(["report", "--job", str(job_store), "--dealer", "D705", "--out", str(tmp_path / "d.csv"),
                 "--html", str(tmp_path / "d.html"), "--xlsx", str(tmp_path / "d.xlsx")]) == 0
    said = capsys.readouterr().out
    assert said.startswith("filtered: --dealer D705")
    text = (tmp_path / "d.html").read_text("utf-8")
    assert "Filtered: --dealer D705" in _first_screen(text)
    checked = text.split("<h2>What was checked</h2>", 1)[1].split("<h2>", 1)[0]
    assert "baccarat" in checked and "blackjack" not in checked  # D705 deals baccarat only
    assert "538 of 1261" in said  # baccarat.a: 538 of D705's 1,261 rounds without announced totals
    book = CalamineWorkbook.from_path(str(tmp_path / "d.xlsx"))
    coverage = _sheet(book, "Coverage")
    rows = [dict(zip(coverage[0], r, strict=True)) for r in coverage[1:]]
    assert {r["game"] for r in rows} == {"baccarat"}
    assert {r["rounds_in_scope"] for r in rows} == {1261.0}
    assert sum(r["findings"] for r in rows) == len(pd.read_csv(tmp_path / "d.csv")) == 148
    summary = {r[0]: r[1] for r in _sheet(book, "Summary") if r[0]}
    assert summary["filters"] == "--dealer D705" and summary["rounds checked"] == 1261.0


def test_a_table_glob_and_a_citation_select_the_coverage_too(job_store, tmp_path, capsys):
    assert main(["-q", "report", "--job", str(job_store), "--table", "BJ-*", "--citation", "paytable",
                 "--out", str(tmp_path / "t.csv"), "--xlsx", str(tmp_path / "t.xlsx")]) == 0
    book = CalamineWorkbook.from_path(str(tmp_path / "t.xlsx"))
    coverage = _sheet(book, "Coverage")
    rows = [dict(zip(coverage[0], r, strict=True)) for r in coverage[1:]]
    assert [(r["game"], r["citation"]) for r in rows] == [("blackjack", "paytable")]
    assert rows[0]["rounds_in_scope"] == 3500.0


def test_the_workbook_is_one_to_file(sample_page):
    folder, _ = sample_page
    book = CalamineWorkbook.from_path(str(folder / "f.xlsx"))
    assert "Coverage" in book.sheet_names
    summary = {r[0]: r[1] for r in _sheet(book, "Summary") if r[0]}
    findings = pd.read_csv(folder / "f.csv")
    d = findings["discrepancy"]
    assert summary["period: first gaming day"] == datetime.date(2025, 6, 1)
    assert summary["period: last gaming day"] == datetime.date(2025, 7, 5)
    assert summary["overpaid (USD)"] == pytest.approx(d[d > 0].sum()) and isinstance(summary["overpaid (USD)"], float)
    assert summary["underpaid (USD)"] == pytest.approx(-d[d < 0].sum())
    assert summary["rounds checked"] == 28175.0 and summary["filters"].startswith("none")
    assert "could not check some" in summary["coverage"]
    assert summary["provenance: auditkit"] == __version__
    rows = _sheet(book, "Findings")
    head = rows[0]
    first = dict(zip(head, rows[1], strict=True))
    assert isinstance(first["date"], datetime.date) and not isinstance(first["date"], datetime.datetime)
    assert isinstance(first["started_at (local time)"], datetime.datetime) and first["utc_offset"] == "UTC-05:00"
    money = [h for h in head if h.split(" ")[0] in ("discrepancy", "expected_amount", "recorded_amount")]
    assert money == ["discrepancy (USD)", "expected_amount (USD)", "recorded_amount (USD)"]
    by_day = _sheet(book, "By day")
    assert isinstance(by_day[1][by_day[0].index("date")], datetime.date) and "overpaid (USD)" in by_day[0]
    with zipfile.ZipFile(folder / "f.xlsx") as z:
        styles = z.read("xl/styles.xml").decode()
        assert '&quot;USD&quot;' in styles  # the money format names the currency
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        for name in sheets:
            xml = z.read(name).decode()
            widths = [float(w) for w in re.findall(r'<col [^>]*width="([\d.]+)"', xml)]
            assert widths and max(widths) <= 52, (name, max(widths))
            assert 'orientation="landscape"' in xml and 'fitToHeight="0"' in xml, name


def test_the_summary_names_coverage_csv_only_when_it_is_written(tmp_path, capsys):
    log = str(LOGS / "baccarat.jsonl")
    assert main(["validate", log, "--out", str(tmp_path / "f.csv"), "--no-progress"]) == 1
    said = capsys.readouterr().out
    assert "not checkable" in said and "coverage.csv" not in said and not (tmp_path / "coverage.csv").exists()
    assert main(["validate", log, "--out", str(tmp_path / "f.csv"), "--summaries", str(tmp_path / "s"),
                 "--no-progress"]) == 1
    said = capsys.readouterr().out
    written = tmp_path / "s" / "coverage.csv"
    assert f"see {written}" in said and written.is_file()
    assert main(["validate", log, "--out", str(tmp_path / "f.csv"), "--xlsx", str(tmp_path / "f.xlsx"),
                 "--no-progress"]) == 1
    said = capsys.readouterr().out
    assert f"see the Coverage sheet of {tmp_path / 'f.xlsx'}" in said
    assert "Coverage" in CalamineWorkbook.from_path(str(tmp_path / "f.xlsx")).sheet_names


def test_report_names_no_coverage_file(job_store, tmp_path, capsys):
    capsys.readouterr()
    assert main(["report", "--job", str(job_store), "--out", str(tmp_path / "r.csv")]) == 0
    said = capsys.readouterr().out
    assert "not checkable (the data does not show it)" in said and "coverage.csv" not in said


def _shot(page: Path, shot: Path, profile: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium here (apt-get install chromium)")
    ARTIFACTS.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--user-data-dir={profile}",
                           "--window-size=1200,1000", f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 50_000, done.stderr[-2000:]


def test_chromium_draws_the_first_screens_offline(sample_page, job_store, tmp_path):
    """The first screen (1200 x 1000) of the sample's page and of a filtered one, for a person to look at."""
    folder, _ = sample_page
    _shot(folder / "report.html", ARTIFACTS / "html_report_sample.png", tmp_path / "p1")
    assert main(["-q", "report", "--job", str(job_store), "--dealer", "D705", "--out", str(tmp_path / "d.csv"),
                 "--html", str(tmp_path / "d.html")]) == 0
    _shot(tmp_path / "d.html", ARTIFACTS / "html_report_filtered.png", tmp_path / "p2")


def test_the_nightly_report_names_who_and_where_and_its_provenance(job_store):
    page, = job_store.parent.glob("reports/*/*/report.html")
    text = page.read_text("utf-8")
    first = _first_screen(text)
    for name in ("D705", "BAC-24", "BJ-02"):
        assert name in first, name
    foot = text.split("<h2>Provenance</h2>", 1)[1]
    from auditkit.ingest.identity import source_sha256

    assert f"auditkit run {job_store}" in foot
    assert all(source_sha256(p) in foot for p in (job_store.parent / "logs").iterdir())


def test_validate_names_its_filters_in_the_summary_page_and_workbook(tmp_path, capsys):
    capsys.readouterr()
    assert main(["validate", str(LOGS / "baccarat.jsonl"), "--citation", "paytable", "--out", str(tmp_path / "v.csv"),
                 "--xlsx", str(tmp_path / "v.xlsx"), "--html", str(tmp_path / "v.html"), "--no-progress"]) == 1
    assert capsys.readouterr().out.startswith("filtered: --citation paytable (findings and coverage of the selected")
    assert "Filtered: --citation paytable" in _first_screen((tmp_path / "v.html").read_text("utf-8"))
    book = CalamineWorkbook.from_path(str(tmp_path / "v.xlsx"))
    assert {r[0]: r[1] for r in _sheet(book, "Summary") if r[0]}["filters"] == "--citation paytable"
    assert [r[:3] for r in _sheet(book, "Coverage")[1:]] == [["baccarat", "paytable", "baccarat.paytable"]]


def test_a_filter_that_selects_no_round_says_so_and_not_that_every_round_was_checked(job_store, tmp_path, capsys):
    capsys.readouterr()
    assert main(["report", "--job", str(job_store), "--dealer", "NOBODY", "--out", str(tmp_path / "n.csv"),
                 "--html", str(tmp_path / "n.html")]) == 0
    said = capsys.readouterr().out
    assert "coverage: no round in scope" in said and "every check could check every round" not in said
    text = (tmp_path / "n.html").read_text("utf-8")
    assert "No round in scope</b>: nothing was checked (no round matches the filters)" in text
    assert "Every check could check every round" not in text


def test_only_the_who_and_where_table_carries_its_class(tmp_path):
    from auditkit.runreport import _table

    frame = pd.DataFrame({"severity": ["high", "low"], "n": [1, 2]})
    assert _table(frame).startswith("<table><tr>") and "<td class='low'>low</td>" in _table(frame)
    assert _table(frame, css="who").startswith("<table class='who'>")


def test_the_provenance_of_a_filed_page_never_shows_a_password_of_a_url():
    """The command and the store a page names are filed with it: a database URL's password or an S3
    URI's secret key in them is hidden (``redact``), the rest of the line kept."""
    from types import SimpleNamespace

    from auditkit.reportcontext import provenance

    store = SimpleNamespace(uri="s3://audit/store?secret_key=hunter2&region=us-east-1", manifest=lambda: [])
    text, _ = provenance(store, command=["validate", "postgresql://auditor:hunter2@db/casino", "--profile",
                                         "pg.toml", "--html", "r.html"])
    assert "hunter2" not in text["command"] + text["store"]
    assert text["command"].startswith("auditkit validate postgresql://auditor:***@db/casino --profile pg.toml")
    assert text["store"] == "s3://audit/store?secret_key=***&region=us-east-1"
