"""The HTML report (--html): self-contained (no address but the SVG namespaces), escaped, and drawn by
headless Chromium with every host but 127.0.0.1 unresolvable (a screenshot in tests/artifacts/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from auditkit.cli import main

LOGS = Path(__file__).resolve().parents[1] / "sample_data" / "logs"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def _report(tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    assert main(["-q", "validate", str(LOGS / "baccarat.jsonl"), "--out", str(tmp_path / "f.csv"),
                 "--html", str(page)]) == 1
    return page


def test_the_page_needs_nothing_but_itself(tmp_path):
    text = _report(tmp_path).read_text("utf-8")
    addresses = set(re.findall(r"""(?:https?:)?//[^\s"'<>)]+""", text))
    assert addresses <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, addresses
    assert "<script" not in text and text.count("<svg") == 2
    assert "href='f.csv'" in text and "nan" not in text.lower().replace("announced", "").replace("provenance", "")


def test_text_from_a_log_is_escaped(tmp_path):
    import pandas as pd

    from auditkit.runreport import write_html_report

    row = {"round_id": "<script>alert(1)</script>", "game": "baccarat", "table_id": "T", "dealer_id": "D",
           "started_at": "2025-06-01T04:00:00-05:00", "citation": "paytable", "severity": "high",
           "message": "<b>x</b>", "discrepancy": -1.0, "date": "2025-06-01", "rule_id": "baccarat.paytable"}
    text = write_html_report(tmp_path / "r.html", pd.DataFrame([row])).read_text("utf-8")
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_chromium_draws_it_offline(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("AUDITKIT_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is required (AUDITKIT_REQUIRE_BROWSER=1)")
        pytest.skip("no chromium here (apt-get install chromium)")
    page = _report(tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "html_report.png"
    shot.unlink(missing_ok=True)
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600",
                           f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 50_000, done.stderr[-2000:]


def test_without_vl_convert_html_is_a_clear_usage_error_before_anything_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "vl_convert", None)  # as if not installed
    out, page = tmp_path / "f.csv", tmp_path / "r.html"
    assert main(["validate", str(LOGS / "baccarat.jsonl"), "--out", str(out), "--html", str(page)]) == 2
    err = capsys.readouterr().err
    assert "--html" in err and "auditkit[notebooks]" in err and "Traceback" not in err
    assert not out.exists() and not page.exists()


def test_the_page_links_the_csv_and_the_workbook_beside_it(tmp_path):
    out, book, page = tmp_path / "f.csv", tmp_path / "f.xlsx", tmp_path / "r.html"
    assert main(["-q", "validate", str(LOGS / "baccarat.jsonl"), "--out", str(out), "--xlsx", str(book),
                 "--html", str(page)]) == 1
    text = page.read_text()
    assert "href='f.csv'" in text and "href='f.xlsx'" in text
    assert re.search(r"rounds checked: <b>[0-9]{1,3}(,[0-9]{3})+<", text), "the count with thousands separators"
