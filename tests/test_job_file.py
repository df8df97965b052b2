"""A job file is checked against its schema (auditkit/job_schema.toml), as a configuration file is
checked against settings_schema.toml: every bad key is exit 2 naming the file, the key, the value and
the reason, before any work."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from auditkit.cli.main import main
from auditkit.job import JobError, load_job

ROOT = Path(__file__).resolve().parents[1]
BASE = 'inputs = ["logs"]\nstore = "s"\noutput = "o"\n'

BAD = {  # name: (the job file after BASE, or whole when it starts with "!"), the message after "job.toml: "
    "unknown_key": ("bogus = 1\n", "unknown key(s) bogus (known: "),
    "unknown_keys_sorted": ("zeta = 1\nalpha = 2\n", "unknown key(s) alpha, zeta (known: "),
    "no_inputs": ('!store = "s"\noutput = "o"\n', "inputs is required (globs, files or folders of logs)"),
    "no_store": ('!inputs = ["logs"]\noutput = "o"\n', "store is required (a folder, or an s3:// URI)"),
    "no_output": ('!inputs = ["logs"]\nstore = "s"\n', "output is required (the folder of the dated run folders)"),
    "name_number": ("name = 5\n", "name = 5: must be a non-empty string"),
    "name_blank": ('name = "  "\n', 'name = "  ": must be a non-empty string'),
    "store_number": ('!inputs = ["logs"]\nstore = 5\noutput = "o"\n', "store = 5: must be a path (a non-empty string)"),
    "output_list": ('!inputs = ["logs"]\nstore = "s"\noutput = []\n', "output = []: must be a path (a non-empty string)"),
    "config_bool": ("config = true\n", "config = true: must be a path (a non-empty string)"),
    "inputs_number": ('!inputs = 5\nstore = "s"\noutput = "o"\n',
                      "inputs = 5: must be a list of non-empty strings or {path, profile} tables"),
    "inputs_item": ('!inputs = ["logs", 1]\nstore = "s"\noutput = "o"\n',
                    "inputs = [\"logs\", 1]: must be a list of non-empty strings or {path, profile} tables"),
    "games_number": ("games = 5\n", "games = 5: must be a list of non-empty strings"),
    "games_unknown": ('games = ["roulette"]\n', 'games = ["roulette"]: unknown game(s) roulette (known: '),
    "citations_item": ("citations = [1]\n", "citations = [1]: must be a list of non-empty strings"),
    "citations_unknown": ('citations = ["68 IAC 10-99"]\n', "citations = [\"68 IAC 10-99\"]: unknown citation(s) "
                                                            "'68 IAC 10-99'; valid: "),
    "fail_on_value": ('fail_on = "sometimes"\n', 'fail_on = "sometimes": must be one of any, low, medium, high, none'),
    "fail_on_type": ("fail_on = 3\n", "fail_on = 3: must be one of any, low, medium, high, none"),
    "lock_timeout_text": ('lock_timeout = "x"\n', 'lock_timeout = "x": must be a finite number >= 0 (seconds)'),
    "max_quarantined_high": ("max_quarantined = 2\n", "max_quarantined = 2: must be a finite number from 0 to 1"),
    "dedup_memory_bool": ("dedup_memory = true\n", "dedup_memory = true: must be a finite number >= 0 (MiB)"),
    "follow_symlinks_text": ('follow_symlinks = "yes"\n', 'follow_symlinks = "yes": must be true or false'),
    "verify_number": ("verify = 1\n", "verify = 1: must be true or false"),
    "notebooks_number": ("notebooks = 5\n", "notebooks = 5: must be true, false or a list (empty: none) of "),
    "notebooks_unknown": ('notebooks = ["99_nope"]\n', "unknown: '99_nope'"),
    "settings_number": ("settings = 3\n", "settings = 3: must be a table"),
    "limits_number": ("limits = 3\n", "limits = 3: must be a table"),
    "engine_text": ('engine = "dask"\n', 'engine = "dask": must be a table'),
    "engine_unknown": ('[engine]\nthreads = 4\n', "unknown key(s) engine.threads (known: engine.kind, engine.scheduler)"),
    "workers_text": ('workers = "2"\n', 'workers = "2": must be an integer >= 1'),
}


def _write(tmp_path: Path, content: str) -> Path:
    job = tmp_path / "job.toml"
    job.write_text(content[1:] if content.startswith("!") else BASE + content)
    return job


@pytest.mark.parametrize("name", BAD)
def test_a_bad_job_file_names_the_file_the_key_and_the_reason(name, tmp_path, capsys):
    content, message = BAD[name]
    job = _write(tmp_path, content)
    with pytest.raises(JobError) as err:
        load_job(job)
    assert str(err.value).startswith(f"{job}: ") and message in str(err.value), str(err.value)
    (tmp_path / "logs").mkdir()
    assert main(["run", str(job)]) == 2  # exit 2 with the message, before any work
    assert message in capsys.readouterr().err
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()


def test_a_good_job_file_gets_the_schema_defaults(tmp_path):
    job = load_job(_write(tmp_path, ""))
    assert (job.name, job.fail_on, job.lock_timeout, job.follow_symlinks, job.notebooks, job.verify) == \
        ("job", "any", 0.0, False, False, False)
    assert (job.workers, job.engine, job.scheduler, job.max_quarantined, job.dedup_memory) == \
        (None, "local", None, None, None)
    assert (job.games, job.citations, job.settings, job.limits) == ([], [], {}, {})
    job = load_job(_write(tmp_path, 'games = "baccarat"\nlock_timeout = 5\nnotebooks = true\n'))
    assert (job.games, job.lock_timeout, job.notebooks) == (["baccarat"], 5.0, True)  # one name is a list of one


def test_the_job_schema_describes_every_key_and_the_docs_show_them():
    schema = tomllib.loads((ROOT / "auditkit" / "job_schema.toml").read_text("utf-8"))
    from auditkit.job import FAIL_ON, Job, job_schema

    assert job_schema() == schema
    assert all(spec.get("meaning") for spec in schema.values())
    assert schema["fail_on"]["choices"] == list(FAIL_ON)  # the thresholds of each choice are in job.py
    fields = {"name", "inputs", "store", "output", "config_path", "settings", "limits", "games", "citations",
              "fail_on", "lock_timeout", "notebooks", "follow_symlinks", "workers", "max_quarantined",
              "dedup_memory", "verify"}
    assert fields <= set(Job.__dataclass_fields__)
    assert set(schema) == {"config" if f == "config_path" else f for f in fields} | {"engine"}
    shown = set(re.findall(r"^\[?(\w+)[\]. =]", (ROOT / "docs" / "batch.md").read_text("utf-8").split("```toml")[1]
                           .split("```")[0], re.M))
    assert set(schema) <= shown, set(schema) - shown
