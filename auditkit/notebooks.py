"""Run the auditor notebooks headless and render them to HTML for people without Jupyter.

:func:`render` executes a notebook with papermill (its ``parameters`` cell
replaced by the given values) and exports it with nbconvert. Charts are drawn
by the offline renderer of :mod:`auditkit.charts` (:mod:`auditkit.vega`) (a Vega-Lite mime bundle with a
static SVG beside it); the export turns each into an interactive chart and puts
the Vega bundle once in the page, so the HTML works without a network and keeps
its tooltips.
Needs the ``notebooks`` extra (papermill, nbconvert, ipykernel, altair).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import games
from .store import atomic_path
from .vega import VEGALITE_V5_MIME, bundle, chart_page, embed

__all__ = ["NOTEBOOK_DIR", "NOTEBOOKS", "FILES", "GENERAL", "GAME_NOTEBOOK", "source_of", "execute", "render", "export_html", "render_all", "lab_metadata",
           "as_saved", "chart_page"]

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
"""The notebooks of a source checkout."""
GENERAL = ("01_overview", "02_payout_discrepancies", "03_expected_vs_observed")
"""The notebooks over every game."""
GAME_NOTEBOOK = "10_game"
"""The one game notebook: its ``game`` parameter picks the game."""
FILES = (*GENERAL, GAME_NOTEBOOK)
"""The committed notebooks (``notebooks/<name>.ipynb``)."""
NOTEBOOKS = (*GENERAL, *(g.notebook for g in games.games() if g.notebook))
"""Every page a run renders: the general notebooks, then each game's page of the game notebook
(its ``Game.notebook`` name, e.g. ``11_blackjack``: :func:`source_of`)."""


def source_of(name: str, folder: str | Path = NOTEBOOK_DIR) -> tuple[Path, dict[str, Any]]:
    """The notebook file a page is rendered from, and the parameters that make it that page
    (``11_blackjack``: ``10_game.ipynb`` with ``game = "blackjack"``)."""
    for g in games.games():
        if g.notebook == name:
            return Path(folder) / f"{GAME_NOTEBOOK}.ipynb", {"game": g.name}
    return Path(folder) / f"{name}.ipynb", {}


def execute(notebook: str | Path, params: Mapping[str, Any] | None = None, out: str | Path | None = None, *,
            kernel: str = "python3", timeout: int = 600, cwd: str | Path | None = None) -> Any:
    """Execute a notebook headless with papermill; returns the executed notebook (and writes it to ``out``).

    Runs in the notebook's folder unless ``cwd`` is given, so relative store paths resolve as in Jupyter.
    A failing cell raises ``papermill.PapermillExecutionError`` naming the cell and the error.
    """
    import papermill as pm

    notebook = Path(notebook)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(out) if out else Path(tmp) / notebook.name
        return pm.execute_notebook(str(notebook), str(target), parameters=dict(params or {}), kernel_name=kernel,
                                   cwd=str(cwd or notebook.parent), progress_bar=False, log_output=False,
                                   execution_timeout=timeout, request_save_on_cell_execute=False)


def render(notebook: str | Path, params: Mapping[str, Any] | None, out_html: str | Path, *,
           kernel: str = "python3", timeout: int = 600, hide_code: bool = True,
           cwd: str | Path | None = None, executed_out: str | Path | None = None) -> Path:
    """Execute ``notebook`` with ``params`` and write it as one self-contained HTML file.

    ``hide_code`` leaves the code cells out (auditors read the charts, tables
    and text). Absolute store paths are safest in ``params``. ``executed_out``
    also keeps the executed notebook.
    """
    params = {"renderer": "offline", **(params or {})}
    executed = execute(notebook, params, executed_out, kernel=kernel, timeout=timeout, cwd=cwd)
    return export_html(executed, out_html, hide_code=hide_code)


def export_html(executed: Any, out_html: str | Path, *, hide_code: bool = True) -> Path:
    """Write an executed notebook as HTML: its charts interactive, the Vega bundle inlined once (works offline)."""
    import altair as alt
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.from_dict(executed)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            spec = output.get("data", {}).get(VEGALITE_V5_MIME)
            if spec is not None:  # drawn by the bundle's own Vega-Lite, at the version Altair wrote
                output["data"] = {"text/html": embed({**spec, "$schema": alt.SCHEMA_URL}),
                                  "text/plain": output["data"].get("text/plain", "<chart>")}
    exporter = HTMLExporter(template_name="lab", exclude_input=hide_code, exclude_input_prompt=hide_code,
                            exclude_output_prompt=hide_code)
    body, _resources = exporter.from_notebook_node(nb)
    body = body.replace("</head>", f"{bundle()}\n</head>", 1)
    out_html = Path(out_html)
    with atomic_path(out_html) as tmp:
        tmp.write_text(body, "utf-8")
    return out_html


def render_all(store: str | Path, out_dir: str | Path, *, start: str | None = None, end: str | None = None,
               notebooks: Sequence[str] = NOTEBOOKS, folder: str | Path = NOTEBOOK_DIR,
               kernel: str = "python3") -> list[Path]:
    """Render every notebook over ``store`` and [start, end] into ``out_dir/<name>.html`` (the nightly job's step)."""
    params = {"store": str(Path(store).resolve()), "start": start, "end": end}
    out = []
    for name in notebooks:
        path, own = source_of(name, folder)
        out.append(render(path, {**params, **own}, Path(out_dir) / f"{name}.html", kernel=kernel))
    return out


def lab_metadata() -> dict[str, Any]:
    """The notebook metadata JupyterLab writes when it saves a notebook run by this Python's ipykernel: its
    kernelspec and the kernel's ``language_info`` (which names the Python version)."""
    from ipykernel.ipkernel import IPythonKernel

    return {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": dict(IPythonKernel.language_info)}


def as_saved(path: str | Path) -> str:
    """A notebook's text as JupyterLab saves it (nbformat's layout, :func:`lab_metadata`, no outputs), so
    that opening and saving a committed notebook leaves ``git status`` clean."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    nb.metadata = nbformat.from_dict({**nb.metadata, **lab_metadata()})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nbformat.writes(nb) + "\n"


if __name__ == "__main__":  # python -m auditkit.notebooks: the committed notebooks written as JupyterLab saves them
    for _name in FILES:
        _path = NOTEBOOK_DIR / f"{_name}.ipynb"
        _path.write_text(as_saved(_path), "utf-8")
