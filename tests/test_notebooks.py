"""Every auditor notebook runs headless on a small simulated store, with no error and modest output."""

from __future__ import annotations

import html
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pandas as pd
import pytest

pytest.importorskip("papermill")
pytest.importorskip("altair")
pytest.importorskip("scipy")

from sample_store import BIASED_TABLE, bundled_store, has_simulator, sample_store  # noqa: E402

from auditkit import charts as C  # noqa: E402
from auditkit import notebooks as N  # noqa: E402

GAME_OF = {"10_baccarat": "baccarat", "11_blackjack": "blackjack", "12_three_card_poker": "three_card_poker",
           "13_pai_gow_poker": "pai_gow_poker"}
HTML_NOTEBOOK = "13_pai_gow_poker"
MAX_BYTES = 1_500_000


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, object]:
    """Each notebook executed once (two kernels at a time); the pai gow notebook is also rendered to HTML."""
    store = str(sample_store())
    out = tmp_path_factory.mktemp("notebooks")
    names = [n for n in N.NOTEBOOKS if n not in GAME_OF or has_simulator(GAME_OF[n])]

    def run(name: str) -> object:
        path, own = N.source_of(name)
        try:
            if name == HTML_NOTEBOOK:
                N.render(path, {"store": store, **own}, out / f"{name}.html", executed_out=out / f"{name}.ipynb")
            else:
                N.execute(path, {"store": store, **own}, out / f"{name}.ipynb")
            return nbformat.read(out / f"{name}.ipynb", as_version=4)
        except Exception as exc:  # reported by the notebook's own test
            return exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(names, pool.map(run, names), strict=True))
    results["_dir"] = out
    return results


def _outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _chart_specs(nb) -> list[dict]:
    """Vega-Lite specs in the outputs (the offline renderer writes a v5 mime bundle beside a static SVG)."""
    out = []
    for o in _outputs(nb):
        data = o.get("data", {})
        if C.VEGALITE_V5_MIME in data:
            assert data["image/svg+xml"].lstrip().startswith("<svg")  # nbconvert and other front ends show it
            out.append(data[C.VEGALITE_V5_MIME])
    return out


@pytest.mark.parametrize("name", N.NOTEBOOKS)
def test_notebook_runs(executed, name):
    if name in GAME_OF and not has_simulator(GAME_OF[name]):
        pytest.skip(f"no simulator for {GAME_OF[name]} yet")
    nb = executed[name]
    if isinstance(nb, Exception):
        pytest.fail(f"{name} failed: {nb}")
    assert not [o for o in _outputs(nb) if o.get("output_type") == "error"]
    assert not [o for o in _outputs(nb) if o.get("name") == "stderr" and "Warning" in o.get("text", "")]
    charts = _chart_specs(nb)
    assert len(charts) >= 3, f"{name}: {len(charts)} charts"
    size = (executed["_dir"] / f"{name}.ipynb").stat().st_size
    assert size < MAX_BYTES, f"{name}: executed notebook of {size} bytes"


def test_notebooks_committed_clean():
    """Notebooks are committed without outputs, with a papermill parameters cell naming the store and range
    (and the games, or for the game notebook the game); one game notebook, no copy per game."""
    assert sorted(p.stem for p in N.NOTEBOOK_DIR.glob("*.ipynb")) == sorted(N.FILES)
    for name in N.FILES:
        nb = nbformat.read(N.NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
        assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")
        params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(params) == 1, name
        games = "game =" if name == N.GAME_NOTEBOOK else "games ="
        for key in ("store =", "start =", "end =", games, "tables =", "dealers =", "config =", "renderer ="):
            assert key in params[0].source, (name, key)
        assert nb.metadata["kernelspec"]["name"] == "python3"


def test_overview_shows_the_biased_table(executed):
    nb = executed["01_overview"]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    text = json.dumps([c.get("outputs", []) for c in nb.cells if c.cell_type == "code"])
    assert BIASED_TABLE in text and "Findings by citation" in text and "Findings over time" in text


def test_expected_vs_observed_notebook_flags_biased_table(executed):
    nb = executed["03_expected_vs_observed"]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    flagged = next(o for c in nb.cells if c.cell_type == "code" and "C.outcomes_table(A.flagged_groups" in c.source
                   for o in c.outputs if o.get("output_type") == "execute_result")
    table = flagged["data"]["text/html"]
    assert BIASED_TABLE in table and "BAC-01" not in table and "TCP-" not in table and "BJ-" not in table


@pytest.mark.parametrize("name", N.NOTEBOOKS)
def test_notebook_opens_with_a_summary(executed, name):
    """The first cell after the parameters is a one-screen summary: rounds, severities, money, worst, flagged."""
    if name in GAME_OF and not has_simulator(GAME_OF[name]):
        pytest.skip(f"no simulator for {GAME_OF[name]} yet")
    nb = executed[name]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    code = [c for c in nb.cells if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])]
    assert "summary" in code[1].metadata.get("tags", []), name
    text = "".join(o["data"].get("text/markdown", "") for o in code[1].outputs if "data" in o)
    assert "rounds checked" in text and ("findings" in text or "No findings" in text), text
    if "No findings" not in text:
        assert "high" in text and "overpaid" in text and "Worst tables" in text and "Worst dealers" in text, text
    assert "Improbable outcome frequencies" in text or "Expected versus observed" in text, text
    if name in ("01_overview", "10_baccarat"):
        assert BIASED_TABLE.replace("-", "-") in text.replace("\\", "")  # the biased table is named on screen one


def test_tables_are_readable(executed):
    """No raw records in a table: wagers and hands written out, money to the cent, local times."""
    nb = executed["02_payout_discrepancies"]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in _outputs(nb)])
    assert "{'seat'" not in html and "'amount':" not in html and "[{" not in html
    assert "→" in html or "\\u2192" in html  # seat 2 banker 25.00 → +23.75
    assert "(UTC-05:00)" in html


BAD_CELL = re.compile(r"\bNaN\b|\bnan\b|<NA>|\bNone\b|-0\.00\b|\.\.\.$|^/|\s/(tmp|home|root|work|Users)/")
"""What no cell of a table shown to people holds: a missing value as NaN, <NA> or None, a negative zero,
text cut short, an absolute path."""


@pytest.mark.parametrize("name", N.NOTEBOOKS)
def test_no_table_shows_nan_na_cut_text_or_an_absolute_path(executed, name):
    """Every table each notebook shows, read cell by cell as the browser shows it: none holds
    :data:`BAD_CELL`; the drill-downs show cards with suit symbols and a hand per line."""
    if name in GAME_OF and not has_simulator(GAME_OF[name]):
        pytest.skip(f"no simulator for {GAME_OF[name]} yet")
    nb = executed[name]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    tables = [o["data"]["text/html"] for o in _outputs(nb) if "<table" in o.get("data", {}).get("text/html", "")]
    assert tables, name
    cells = [html.unescape(c).strip() for t in tables for c in re.findall(r"<td[^>]*>(.*?)</td>", t, re.S)]
    assert len(cells) > 20, name
    bad = [c for c in cells if BAD_CELL.search(c)]
    assert not bad, (name, bad[:5])
    if name in GAME_OF and name != "10_baccarat":  # rounds behind the findings: hands, one per line
        hands = [c for c in cells if c.startswith("seat ") and ("→" in c)]
        assert hands and any("\n" in c for c in hands) and any(s in "".join(hands) for s in "♠♥♦♣"), name


def test_render_html_offline(executed):
    if isinstance(executed.get(HTML_NOTEBOOK), Exception):
        pytest.fail(str(executed[HTML_NOTEBOOK]))
    html = Path(executed["_dir"] / f"{HTML_NOTEBOOK}.html").read_text("utf-8")
    assert html.count("vegaEmbed(\"#auditkit-chart-") >= 3  # the charts, drawn by the inlined bundle
    assert "cdn.jsdelivr.net" not in html and 'data-mime-type="image/svg+xml"' not in html  # no network; interactive, not static
    assert "Pai gow poker: findings by citation" in html
    assert "from auditkit import" not in html  # code cells hidden


def test_plain_nbconvert_html_offline(executed):
    """What `jupyter nbconvert --execute --to html` writes: the static SVG of each chart, nothing from a CDN."""
    from nbconvert import HTMLExporter

    nb = executed["01_overview"]
    if isinstance(nb, Exception):
        pytest.fail(str(nb))
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    assert html.count('data-mime-type="image/svg+xml"') >= len(_chart_specs(nb)) >= 3
    assert "cdn.jsdelivr.net" not in html and "Error loading script" not in html


@pytest.mark.parametrize("name", N.FILES)
def test_committed_notebook_is_as_jupyterlab_saves_it(name):
    """Opening and saving a notebook in JupyterLab leaves `git status` clean: what is committed is what
    JupyterLab writes (its kernelspec, the kernel's language_info, nbformat's layout, no outputs).
    tests/test_browser.py::test_saving_leaves_a_notebook_as_committed does it in a real JupyterLab."""
    path = N.NOTEBOOK_DIR / f"{name}.ipynb"
    assert path.read_text("utf-8") == N.as_saved(path), "run: python -m auditkit.notebooks"


N_MIN = 100
"""The least rounds for a table or dealer to be ranked by rate (A.MIN_ROUNDS), stated on the page."""
STORY_OF = {"10_baccarat": ("dealer_id", "D705"), "11_blackjack": ("table_id", "BJ-02"),
            "12_three_card_poker": ("dealer_id", "D3105"), "13_pai_gow_poker": ("dealer_id", "D4003")}


@pytest.fixture(scope="module")
def stories(tmp_path_factory) -> dict[str, object]:
    """The game notebooks executed with their defaults over the bundled sample data (ingested, validated)."""
    root = Path(__file__).resolve().parents[1]
    tmp = tmp_path_factory.mktemp("stories")
    story = json.loads((root / "sample_data" / "truth" / "story.json").read_text())
    assert story["drifting_dealer"]["dealer_id"] == STORY_OF["10_baccarat"][1]
    for name, game in GAME_OF.items():
        if game != "baccarat":
            told = story["games"][game]
            assert told[STORY_OF[name][0]] == STORY_OF[name][1], name
    store = bundled_store()
    # an auditor's review of one of D705's findings, as `auditkit review import` of an edited CSV writes it
    from auditkit import analysis as A
    from auditkit.reviews import add_reviews, latest

    if latest(A.open_store(store)).empty:
        first = A.load_findings(store, games="baccarat", dealers="D705").iloc[0]
        add_reviews(A.open_store(store), [{"round_id": first["round_id"], "rule_id": first["rule_id"],
                                           "status": "confirmed", "note": "commission skipped"}], by="test")

    def run(name: str) -> object:
        path, own = N.source_of(name)
        return N.execute(path, {"store": str(store), **own}, tmp / f"{name}.ipynb")

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(STORY_OF, pool.map(run, STORY_OF), strict=True))


def _rates(nb, field: str) -> list[dict]:
    """The rows of the chart of findings per 1,000 rounds by ``field`` (a table or a dealer)."""
    for spec in _chart_specs(nb):
        for rows in spec.get("datasets", {}).values():
            if rows and field in rows[0] and "per_1000" in rows[0]:
                return rows
    raise AssertionError(f"no chart of findings per 1,000 rounds by {field}")


@pytest.mark.parametrize("name", STORY_OF)
def test_game_notebook_shows_its_story_by_default(stories, name):
    """Each game's planted dealer or table is the top one of its chart by rate, and the summary names it
    first among the worst (the same threshold of rounds, stated on the page)."""
    field, who = STORY_OF[name]
    rows = sorted(_rates(stories[name], field), key=lambda r: -r["per_1000"])
    assert rows[0][field] == who and rows[0]["per_1000"] > 2 * rows[1]["per_1000"], rows[:3]
    code = [c for c in stories[name].cells if "summary" in c.metadata.get("tags", [])]
    text = "".join(o["data"].get("text/markdown", "") for o in code[0].outputs if "data" in o).replace("\\", "")
    label = "Worst dealers" if field == "dealer_id" else "Worst tables"
    line = next(ln for ln in text.splitlines() if label in ln)
    assert line.split(": ", 1)[1].startswith(who) and f"{N_MIN:,} rounds or more" in line, line



def _cumulative(nb) -> pd.DataFrame:
    """The rows of the notebook's cumulative over- and underpayment chart (day, direction, amount, cumulative)."""
    for spec in _chart_specs(nb):
        for rows in spec.get("datasets", {}).values():
            if rows and {"cumulative", "direction", "day"} <= set(rows[0]):
                return pd.DataFrame(rows)
    raise AssertionError("no cumulative payout chart")


def test_the_cumulative_curve_rises_after_the_planted_day(stories):
    """Blackjack's story (truth/story.json): BJ-02 pays naturals 6:5 from 2025-06-15. The underpaid curve of the
    game notebook's default view climbs at least three times as fast a day after that day as before it (the
    background faults of every table climb it slowly from the first day)."""
    root = Path(__file__).resolve().parents[1]
    story = json.loads((root / "sample_data" / "truth" / "story.json").read_text())
    start = story["games"]["blackjack"]["from"]
    bj = _cumulative(stories["11_blackjack"])
    under = bj[bj["direction"] == "underpaid"].sort_values("day")
    first_day, last_day = story["days"]
    before = under.loc[under["day"] < start, "amount"].sum() / (pd.Timestamp(start) - pd.Timestamp(first_day)).days
    after = under.loc[under["day"] >= start, "amount"].sum() / ((pd.Timestamp(last_day) - pd.Timestamp(start)).days + 1)
    assert after > 3 * before, (before, after)  # underpaid per calendar day
    assert under["cumulative"].is_monotonic_increasing


def test_a_review_shows_on_the_next_run_of_the_notebook(stories):
    """A finding reviewed in the store (here confirmed) is counted on the game page's first screen."""
    code = [c for c in stories["10_baccarat"].cells if "summary" in c.metadata.get("tags", [])]
    text = "".join(o["data"].get("text/markdown", "") for o in code[0].outputs if "data" in o)
    line = next(ln for ln in text.splitlines() if ln.startswith("**Reviews**"))
    assert line.endswith("open; 1 confirmed."), line
