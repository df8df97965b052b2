"""``import auditkit`` stays light, the command line starts without pandas, and no module imports in a cycle
or up the layers of docs/architecture.md."""

import ast
import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

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


# ---- no import cycle, no import up the layers (issues 24, 43) ---------------------------------
ROOT = Path(__file__).resolve().parents[1]


def module_imports(root: Path, package: str) -> dict[str, dict[str, int]]:
    """What each module of ``package`` (under ``root``) imports of the package, with the line of the first
    such import: every ``import`` in the module, at module level or inside a function (a lazy import is a
    dependency all the same), except under ``if TYPE_CHECKING:`` (never run). An import by name
    (``importlib``: a game's modules found by their file names) is not seen: a plug-in, not a dependency."""
    files = {_module_name(root, p): p for p in (root / package).rglob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: dict[str, int] = {}
        for node in _imports(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                targets = [_nearest(a.name, files) for a in node.names]
            else:
                base = (here[:len(here) - node.level + 1] if node.level else []) + ([node.module] if node.module else [])
                target = ".".join(base)
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
                targets = subs + ([_nearest(target, files)] if len(subs) < len(node.names) else [])
            for t in targets:
                if t is not None and t != name:
                    deps.setdefault(t, node.lineno)
        graph[name] = deps
    return graph


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if path.name == "__init__.py" else parts)


def _nearest(dotted: str, files: dict[str, Path]) -> str | None:
    """The module of the package that ``import a.b.c`` (or ``from a.b import c``) loads last."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in files:
        parts.pop()
    return ".".join(parts) or None


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``, at any depth, but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for other in node.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _imports(node)


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each an import cycle)."""
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


def layers(doc: str) -> list[tuple[str, list[str]]]:
    """The layers of docs/architecture.md's "Layers" table, top first: each name with its patterns."""
    section = doc.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [r.split("|") for r in section.splitlines() if r.startswith("|")]
    return [(r[1].strip(), re.findall(r"`([\w/*.]+)`", r[2])) for r in rows
            if re.fullmatch(r"\w+", r[1].strip()) and r[1].strip() != "layer"]


def drawn_layers(doc: str) -> list[str]:
    """The layer names of the section's drawing (its first code block: a line that begins with a name), top first."""
    drawing = doc.split("\n## Layers\n", 1)[1].split("```", 2)[1]
    return [line.split()[0] for line in drawing.splitlines() if line[:1].isalpha()]


def _pattern(pattern: str) -> re.Pattern[str]:
    """``auditkit/ingest``: the module or package and everything in it; ``x.py``: that file; ``*``: one
    name of a path."""
    body = re.escape(pattern).replace(r"\*", "[^/]*")
    return re.compile(body + ("" if pattern.endswith(".py") else r"(\.py|/.+\.py)") + "$")


def layer_of(root: Path, package: str, table: list[tuple[str, list[str]]]) -> tuple[dict[str, int], list[str]]:
    """Each module's layer (0 the bottom) by the longest pattern matching its file, and the problems: a
    module in no layer, a pattern matching no file, a file two patterns of one length put in two layers."""
    compiled = [(len(p), len(table) - 1 - i, _pattern(p), p) for i, (_, ps) in enumerate(table) for p in ps]
    out: dict[str, int] = {}
    used: set[str] = set()
    problems: list[str] = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        matched = sorted((m for m in compiled if m[2].match(rel)), key=lambda m: m[0], reverse=True)
        if not matched:
            problems.append(f"{rel} is in no layer of docs/architecture.md")
            continue
        if len(matched) > 1 and matched[0][0] == matched[1][0] and matched[0][1] != matched[1][1]:
            problems.append(f"{rel}: {matched[0][3]} and {matched[1][3]} put it in two layers")
        out[_module_name(root, path)] = matched[0][1]
        used.add(matched[0][3])
    problems += [f"{p} (docs/architecture.md, layers) decides the layer of no module" for *_, p in compiled
                 if p not in used]
    return out, problems


def upward(graph: Mapping[str, Mapping[str, int]], layer: Mapping[str, int]) -> dict[tuple[str, str], int]:
    """The imports from a module to one of a higher layer, with their lines."""
    return {(a, b): line for a, deps in graph.items() for b, line in deps.items()
            if a in layer and b in layer and layer[a] < layer[b]}


def test_no_module_of_auditkit_imports_in_a_cycle():
    graph = module_imports(ROOT, "auditkit")
    found = cycles(graph)
    assert found == [], "import cycles: " + "; ".join(
        " <-> ".join(c) + " (" + ", ".join(f"{a} -> {b} line {graph[a][b]}" for a in c for b in graph[a] if b in c) + ")"
        for c in found)


def test_no_module_of_auditkit_imports_from_a_higher_layer():
    doc = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    table = layers(doc)
    assert [name for name, _ in table] == drawn_layers(doc), "the drawing and the table of layers differ"
    layer, problems = layer_of(ROOT, "auditkit", table)
    assert not problems, problems
    names = [name for name, _ in reversed(table)]
    up = upward(module_imports(ROOT, "auditkit"), layer)
    new = [f"{a} ({names[layer[a]]}) imports {b} ({names[layer[b]]}) at line {n}"
           for (a, b), n in sorted(up.items())]
    assert not new, "imports up the layers of docs/architecture.md:\n" + "\n".join(new)


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import B\n")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nfrom ..a import A\nif TYPE_CHECKING:\n"
                                      "    from .. import c\nelse:\n    import pkg.d.e\n")
    (pkg / "c.py").write_text("def f():\n    if True:\n        from .a import A\n")
    (pkg / "d.py").write_text("")
    graph = module_imports(tmp_path, "pkg")
    assert graph["pkg.sub.b"] == {"pkg.a": 2, "pkg.d": 6} and graph["pkg.c"] == {"pkg.a": 3}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]
    (pkg / "a.py").write_text("def f():\n    from .c import C\n")
    assert cycles(module_imports(tmp_path, "pkg")) == [["pkg.a", "pkg.c"]]


def test_the_layer_check_finds_an_import_up_the_layers(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "top").mkdir(parents=True)
    for name in ("__init__.py", "low.py", "mid.py", "top/__init__.py", "top/low.py"):
        (pkg / name).write_text("")
    (pkg / "low.py").write_text("def f():\n    from .top import x\n")
    (pkg / "top" / "__init__.py").write_text("from .. import mid\n")
    table = [("top", ["`pkg/top`"]), ("low", ["`pkg/*.py`", "`pkg/top/low.py`"])]
    table = [(name, [p.strip("`") for p in ps]) for name, ps in table]
    layer, problems = layer_of(tmp_path, "pkg", table)
    assert problems == [] and layer == {"pkg": 0, "pkg.low": 0, "pkg.mid": 0, "pkg.top": 1, "pkg.top.low": 0}
    assert upward(module_imports(tmp_path, "pkg"), layer) == {("pkg.low", "pkg.top"): 2}
    (pkg / "more").mkdir()
    (pkg / "more" / "x.py").write_text("")
    assert layer_of(tmp_path, "pkg", [*table, ("gone", ["pkg/gone.py"])])[1] == [
        "pkg/more/x.py is in no layer of docs/architecture.md",
        "pkg/gone.py (docs/architecture.md, layers) decides the layer of no module"]


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


@pytest.mark.parametrize("argv", [["ingest", "log.jsonl", "--store", "s", "--workers", "2"],
                                  ["validate", "s", "--workers", "2", "--lock-timeout", "1.5"]])
def test_the_command_lines_numbers_are_checked_without_numpy_or_pyarrow(argv):
    """The pools' fork server starts once the arguments are parsed: a number checked by importing numpy and
    pyarrow (0.18 CPU s) held it back by as much."""
    code = f"from auditkit.cli.main import build_parser\nassert build_parser().parse_args({argv!r}).workers == 2"
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
