"""The command line forgives the usual slips (issue 42, items 5 and 6): an export named without --profile
says how to read it, a mistyped command names the right one, citations in their short forms, one argument
order for profiles, --out optional beside another report, every output path checked before any work,
messages that are never raw log lines, a job's ``notebooks = []``, every command in the README."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditkit.cli import main
from auditkit.cli.common import UsageError, check_citations

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "sample_data" / "exports"
LOG = ROOT / "sample_data" / "logs" / "mini_baccarat.jsonl"
RAW_LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}|WARNING auditkit|INFO auditkit")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command as cron runs it: no terminal, in a session of its own, stdin from /dev/null."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "auditkit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, start_new_session=True)


# ---- item 5: an export without --profile --------------------------------------------------------
@pytest.mark.parametrize("name, kind", [("blackjack_hands.xlsx", "an Excel workbook"),
                                        ("pai_gow_poker.db", "a SQLite database"),
                                        ("baccarat_rounds.csv", "a CSV whose header lacks round_id, game, table_id or started_at")])
@pytest.mark.parametrize("command", ["validate", "ingest"])
def test_an_export_without_profile_names_profile_and_profile_suggest(tmp_path, capsys, name, kind, command):
    target = ["--out", str(tmp_path / "f.csv")] if command == "validate" else ["--store", str(tmp_path / "s")]
    assert main([command, str(EXPORTS / name), *target]) == 2
    err = capsys.readouterr().err
    assert f"{EXPORTS / name}: not a round log ({kind})" in err
    assert f"auditkit profile suggest {EXPORTS / name} --out PROFILE.toml" in err and "--profile PROFILE.toml" in err
    assert "quarantined" not in err and "UTF-8" not in err and "file(s) ingested" not in err  # refused before reading
    assert not (tmp_path / "f.csv").exists() and not (tmp_path / "s").exists()


def test_a_folder_of_exports_without_profile_names_profile_suggest(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "export.csv").write_bytes((EXPORTS / "baccarat_rounds.csv").read_bytes()[:4000])
    assert main(["validate", str(tmp_path / "in"), "--out", str(tmp_path / "f.csv")]) == 2
    err = capsys.readouterr().err
    assert "no log file" in err and "1 CSV file(s) without the round log's columns" in err
    assert "auditkit profile suggest" in err and "--profile PROFILE.toml" in err


def test_a_watched_export_without_profile_is_refused(tmp_path, capsys):
    assert main(["watch", str(EXPORTS / "blackjack_hands.xlsx"), "--once", "--no-stdout"]) == 2
    assert "not a round log (an Excel workbook)" in capsys.readouterr().err


def test_a_round_log_named_as_it_is_is_read(tmp_path, capsys):
    assert main(["-q", "validate", str(LOG), "--out", str(tmp_path / "f.csv")]) in (0, 1)
    assert capsys.readouterr().err == ""


# ---- item 6: commands, citations ------------------------------------------------------------------
@pytest.mark.parametrize("argv, said", [
    (["valdate", "x"], "unknown command 'valdate'; did you mean validate?"),
    (["reprot", "--store", "s"], "unknown command 'reprot'; did you mean report?"),
    (["profile", "chek", "a"], "auditkit profile: unknown action 'chek'; did you mean check?"),
    (["review", "lst", "--store", "s"], "auditkit review: unknown action 'lst'; did you mean list"),
    (["zzz"], "unknown command 'zzz'; one of ingest, validate"),
])
def test_a_mistyped_command_names_the_closest(capsys, argv, said):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "invalid choice" not in err and "usage:" not in err


EVERY_B = [f"68 IAC 10-10-14(b)({i})" for i in range(1, 12)]


@pytest.mark.parametrize("short", ["68 IAC 10-10-14(b)", "10-10-14(b)", "14(b)", "68 iac 10-10-14 (B)", " 14(b) "])
def test_68_IAC_10_10_14_b_in_its_short_forms(short):
    assert check_citations([short]) == EVERY_B


@pytest.mark.parametrize("short, rule", [("baccarat.b4", "baccarat.b4"), ("b4", "baccarat.b4"),
                                         ("Baccarat.B4", "baccarat.b4"), ("tcp.c2", "tcp.c2")])
def test_a_rule_id_in_its_short_forms(short, rule):
    assert check_citations([short]) == [rule]


def test_short_forms_keep_the_full_names_first():
    assert check_citations(["integrity"]) == ["integrity"]  # the citation, not the four games' integrity rules
    assert check_citations(["68 IAC 10-2-4(a)(1)"]) == ["68 IAC 10-2-4(a)(1)"]
    assert check_citations(["4(a)"]) == ["68 IAC 10-2-4(a)", "68 IAC 10-2-4(a)(1)", "68 IAC 10-2-4(a)(2)",
                                         "68 IAC 10-2-4(a)(3)"]


@pytest.mark.parametrize("value, first", [("10-10-14(bb)", "68 IAC 10-10-14(b)"),
                                          ("10-10-41(b)", "68 IAC 10-10-14(b)"),
                                          ("68 IAC 10-10-14(b)(6", "68 IAC 10-10-14(b)(6)")])
def test_an_unknown_citation_suggests_its_prefixes_too(value, first):
    with pytest.raises(UsageError, match="unknown citation") as err:
        check_citations([value])
    closest = str(err.value).split("the closest:\n", 1)[1].split("\n")
    assert closest[0].strip() == first and len(closest) <= 5


def test_an_ambiguous_short_form_is_refused_listing_what_it_could_be():
    with pytest.raises(UsageError, match="ambiguous citation 'a'") as err:
        check_citations(["a"])
    assert str(err.value).split("it could be:\n", 1)[1].split() == ["baccarat.a", "blackjack.a", "tcp.a", "paigow.a"]
    assert check_citations(["a"], ["blackjack"]) == ["blackjack.a"]  # one game: one rule
    with pytest.raises(UsageError, match="for blackjack"):
        check_citations(["baccarat.b4"], ["blackjack"])


def test_validate_takes_a_short_citation(tmp_path, capsys):
    out = tmp_path / "f.csv"
    assert main(["-q", "validate", str(LOG), "--out", str(out), "--citation", "14(b)"]) in (0, 1)
    assert capsys.readouterr().err == ""


# ---- item 6: profile check FILE --profile P -----------------------------------------------------
def test_profile_check_takes_file_then_profile_and_the_old_order_with_a_note(capsys):
    csv, toml = str(EXPORTS / "baccarat_rounds.csv"), str(EXPORTS / "baccarat_rounds.toml")
    assert main(["profile", "check", csv, "--profile", toml, "--rounds", "1"]) == 0
    new = capsys.readouterr()
    assert "every row maps" in new.out and new.err == ""
    assert main(["profile", "check", toml, csv, "--rounds", "1"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and f"note: the profile goes after --profile now: auditkit profile check {csv} " \
        f"--profile {toml}" in old.err
    assert main(["profile", "check", csv]) == 2
    assert "profile check needs --profile PROFILE" in capsys.readouterr().err
    assert main(["profile", "check", csv, csv, "--profile", toml]) == 2


# ---- item 6: --out optional beside another report ------------------------------------------------
def test_validate_writes_only_the_workbook_when_only_it_is_asked_for(tmp_path, capsys):
    xlsx = tmp_path / "r.xlsx"
    assert main(["validate", str(LOG), "--xlsx", str(xlsx), "--no-progress"]) in (0, 1)
    assert xlsx.is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["r.xlsx"]
    assert f"report: {xlsx}" in capsys.readouterr().out


def test_a_run_writing_nothing_is_refused(tmp_path, capsys):
    assert main(["validate", str(LOG)]) == 2
    assert "nothing to write: give --out, --parquet, --summaries, --xlsx or --html" in capsys.readouterr().err
    assert main(["report", "--store", str(tmp_path)]) == 2
    assert "nothing to write: give --out, --parquet, --xlsx or --html" in capsys.readouterr().err


def test_the_help_of_out_says_what_it_does(capsys):
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--out OUT the violation report CSV (when not given: none; at least one of --out, --parquet" in text
    assert "--out OUT" in text and "[--out OUT]" in text  # not required in the usage line


# ---- item 6: every output path checked before any work --------------------------------------------
@pytest.mark.parametrize("option", ["--out", "--xlsx", "--quarantine-report", "--summaries", "--parquet"])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys, option):
    (tmp_path / "a-file").write_text("x")
    for bad, why in ((Path("/proc/auditkit-x.csv"), "cannot write /proc/auditkit-x"),
                     (tmp_path / "a-file" / "x.csv", "is not a folder")):
        argv = ["validate", str(LOG), option, str(bad)] + (["--out", str(tmp_path / "f.csv")] if option != "--out" else [])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert why in err and ".tmp" not in err and "file(s) ingested" not in err, err
        assert not (tmp_path / "f.csv").exists()


def test_ingest_and_watch_check_their_outputs_first(tmp_path, capsys):
    assert main(["ingest", str(LOG), "--store", str(tmp_path / "s"), "--quarantine-report", "/proc/auditkit-q.csv"]) == 2
    assert "cannot write /proc/auditkit-q.csv" in capsys.readouterr().err and not (tmp_path / "s").exists()
    assert main(["watch", str(LOG), "--once", "--csv", "/proc/auditkit-w.csv"]) == 2
    assert "cannot write /proc/auditkit-w.csv" in capsys.readouterr().err


# ---- item 6: messages, not raw log lines ---------------------------------------------------------
def test_warnings_read_as_messages_never_raw_log_lines_without_a_terminal(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(LOG.read_bytes())
    (tmp_path / "in" / "notes.csv").write_text("when,what\n2025-06-01,a note\n")
    proc = _cli("validate", "in", "--out", "f.csv", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "auditkit: warning: skip in/notes.csv: not a round log" in proc.stderr
    assert not RAW_LOG_LINE.search(proc.stderr), proc.stderr
    loud = _cli("-v", "ingest", "in", "--store", "s", cwd=tmp_path)
    assert "auditkit: ingested in/a.jsonl" in loud.stderr and not RAW_LOG_LINE.search(loud.stderr), loud.stderr
    debug = _cli("-vv", "ingest", "in", "--store", "s2", cwd=tmp_path)  # -vv asks for times and loggers
    assert "INFO auditkit.ingest: ingested in/a.jsonl" in debug.stderr


# ---- item 6: a job's notebooks = [] ----------------------------------------------------------------
def test_a_job_with_no_notebooks_is_accepted(tmp_path):
    from auditkit.job import JobError, load_job

    job = tmp_path / "job.toml"
    job.write_text('inputs = ["logs"]\nstore = "store"\noutput = "out"\nnotebooks = []\n')
    assert not load_job(job).notebooks
    job.write_text('inputs = ["logs"]\nstore = "store"\noutput = "out"\nnotebooks = ["01_overview", "99_nope"]\n')
    with pytest.raises(JobError, match="unknown: '99_nope'"):
        load_job(job)
    job.write_text('inputs = ["logs"]\nstore = "store"\noutput = "out"\nnotebooks = "01_overview"\n')
    with pytest.raises(JobError, match="must be true, false or a list"):
        load_job(job)


# ---- item 6: the README's command list --------------------------------------------------------------
def test_the_readme_lists_every_command():
    from auditkit.cli.main import COMMANDS

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = text.split("## Command line", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    names = {c.__name__.rsplit(".", 1)[-1] for c in COMMANDS}
    assert {n for n in names if f"auditkit {n} " not in listed} == set()
