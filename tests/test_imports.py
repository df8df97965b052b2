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


# ---- no import cycle at module level (issue 24) ----------------------------------------------
def module_imports(root, package: str) -> dict[str, set[str]]:
    """What each module of ``package`` (under ``root``) imports of the package when it is loaded: the
    imports at module level, not under ``if TYPE_CHECKING:`` nor inside a function (a lazy import runs
    after every module is loaded, so it is no cycle: the rule of DEVELOPERS.md)."""
    import ast

    files = {".".join(p.relative_to(root).with_suffix("").parts[:-1] if p.name == "__init__.py"
                       else p.relative_to(root).with_suffix("").parts): p for p in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for n in ast.walk(node) if isinstance(node, (ast.Import, ast.ImportFrom, ast.If, ast.Try)) else ():
                if isinstance(n, ast.Import):
                    deps |= {a.name for a in n.names if a.name in files}
                elif isinstance(n, ast.ImportFrom):
                    base = (here[:len(here) - n.level + 1] if n.level else []) + ([n.module] if n.module else [])
                    target = ".".join(base)
                    subs = {f"{target}.{a.name}" for a in n.names} & set(files)
                    deps |= subs
                    if target in files and len(subs) < len(n.names):  # names taken from the module itself
                        deps.add(target)
        graph[name] = deps - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each an import cycle)."""
    import itertools

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    counter = itertools.count()

    def visit(v: str) -> None:
        index[v] = low[v] = next(counter)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_of_auditkit_imports_in_a_cycle():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert cycles(module_imports(root, "auditkit")) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import B\n")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nfrom ..a import A\nif TYPE_CHECKING:\n"
                                      "    from .. import c\n")
    (pkg / "c.py").write_text("def f():\n    from .a import A\n")
    assert cycles(module_imports(tmp_path, "pkg")) == [["pkg.a", "pkg.sub.b"]]


# ---- a start-up that costs nothing (issue 44): by the modules imported, never by a timer ----------
HEAVY = {"pandas", "altair", "scipy", "dask", "distributed"}
"""What no command imports to start, nor ``ingest``, ``rules`` and the workers of a pool to work."""

SCRIPT = '''\
import sys

BLOCKED = {blocked!r}


class NotInstalled:
    """Imports of BLOCKED fail as if they were not installed (pyarrow then converts without pandas)."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is not installed here")


if __name__ == "__mp_main__" or {here!r}:  # a worker of a process pool (spawned: it imports this file), or here
    sys.meta_path.insert(0, NotInstalled())

if __name__ == "__main__":
    import contextlib
    import io

    from auditkit.cli.main import main

    out = io.StringIO()
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(out):
        status = main({argv!r})
    print(repr(status), sorted({{m.split(".")[0] for m in sys.modules}} & BLOCKED), out.getvalue().count("\\n"))
'''


def _run(tmp_path, argv: list[str], *, here: bool, workers: bool) -> tuple[str, list[str], int, str]:
    """Run ``auditkit ARGV`` in a fresh process where HEAVY cannot be imported (``here``: in that process;
    ``workers``: in its pool's workers); returns its status, the HEAVY modules it holds, the lines it printed
    and its stderr."""
    import ast

    script = tmp_path / "run_blocked.py"
    script.write_text(SCRIPT.format(blocked=HEAVY if workers or here else set(), here=here, argv=argv))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().rsplit("\n", 1)[-1]
    status, rest = last.split(" ", 1)
    held, lines = rest.rsplit(" ", 1)
    return status, ast.literal_eval(held), int(lines), done.stderr


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["ingest", "--help"], ["watch", "--help"],
                                  ["run", "--help"], ["profile", "--help"]])
def test_the_command_line_starts_without_numpy_pyarrow_or_pandas(argv):
    """(The help of a command with a game option lists the games, and so imports them.)"""
    code = ("import contextlib, io\nimport auditkit\nfrom auditkit.cli.main import main\n"
            f"with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main({argv!r})")
    assert not _imported(code) & (HEAVY | {"numpy", "pyarrow"})


def test_a_game_name_is_still_checked_and_listed():
    """The games are looked up when the parser needs them (a value, a help), not to start."""
    code = ("import contextlib, io\nfrom auditkit.cli.main import main\nerr = io.StringIO()\n"
            "with contextlib.redirect_stderr(err):\n    status = main(['rules', '--game', 'bacarat'])\n"
            "print(status, 'bacarat' in err.getvalue() and 'mini_baccarat' in err.getvalue())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "True"]


def test_rules_needs_no_pandas(tmp_path):
    status, held, lines, err = _run(tmp_path, ["rules"], here=True, workers=False)
    assert (status, held) == ("0", []) and lines > 40, err


def test_ingest_needs_no_pandas_and_its_workers_neither(tmp_path):
    from pathlib import Path

    logs = Path(__file__).resolve().parents[1] / "sample_data" / "logs"
    for here, workers, n in ((True, False, "1"), (False, True, "2")):
        store = tmp_path / f"store{n}"
        status, held, _, err = _run(tmp_path, ["ingest", str(logs), "--store", str(store), "-q", "--workers", n],
                                    here=here, workers=workers)
        assert status == "0" and (held == [] if here else True), err
    assert (tmp_path / "store1" / "rounds").is_dir() and (tmp_path / "store2" / "rounds").is_dir()


@pytest.mark.parametrize("module", ["auditkit.validate", "auditkit.ingest.parallel", "auditkit.store",
                                    "auditkit.paytables", "auditkit.rules.registry", "auditkit.games.pai_gow_poker.rules"])
def test_a_worker_of_validate_or_ingest_starts_without_pandas(module):
    """What a spawned worker imports to start (its task's module) needs no pandas: it imports with pandas
    not installed. (pyarrow imports pandas itself where it is installed: ``pyarrow.dataset`` as it loads,
    ``pa.array``, ``pa.scalar`` at their first call, to ask whether a value is a pandas object.)"""
    code = ("import sys\nclass NotInstalled:\n    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {HEAVY!r}:\n            raise ImportError(name)\n"
            f"sys.meta_path.insert(0, NotInstalled())\nimport auditkit.workers, {module}")
    assert not _imported(code) & HEAVY


def test_the_blocker_of_these_tests_blocks():
    code = ("import sys\nclass NotInstalled:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'pandas':\n            raise ImportError(name)\n"
            "sys.meta_path.insert(0, NotInstalled())\nimport auditkit.report")
    with pytest.raises(subprocess.CalledProcessError):
        _imported(code)
