"""``import auditkit`` stays light, and the command line starts without pandas."""

import subprocess
import sys

import pytest


def _imported(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                          capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in done.stdout.split()}


def test_import_auditkit_imports_no_heavy_library():
    assert not _imported("import auditkit") & {"pandas", "pyarrow", "numpy", "dask", "distributed", "altair"}


@pytest.mark.parametrize("argv", [["--help"], ["validate", "--help"], ["report", "--help"]])
def test_the_command_line_parser_imports_no_pandas(argv):
    code = ("import contextlib, io\nfrom auditkit.cli.main import main\n"
            f"with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main({argv!r})")
    assert not _imported(code) & {"pandas", "dask", "distributed", "altair"}
