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
