"""Spreadsheet-safe CSV export and summaries."""

import csv

import pandas as pd
import pytest

from auditkit.report import safe_cell, write_csv
from auditkit.summaries import payout_totals, summarize
from auditkit.validate import empty_findings


@pytest.mark.parametrize("value, out", [
    ("=1+2", "'=1+2"), ("+SUM(A1)", "'+SUM(A1)"), ("-2+3", "'-2+3"), ("@cmd", "'@cmd"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("\nx", "'\nx"),
    ("-5.00", "-5.00"), ("-100", "-100"), ("+3", "+3"), ("1e5", "1e5"),
    ("plain", "plain"), ("", ""), (-5.0, -5.0), (12, 12), (None, None),
])
def test_safe_cell(value, out):
    assert safe_cell(value) == out


def test_csv_export_is_safe_and_numbers_stay_numbers(tmp_path):
    f = empty_findings()
    row = {c: "" for c in f.columns}
    row.update(round_id="=HYPERLINK(\"http://x\")", game="baccarat", table_id="@T1", dealer_id="-D1",
               message="+cmd|' /C calc'!A0", expected="-100.00", recorded="net -50", discrepancy=-50.0,
               source_line=3)
    frame = pd.concat([f, pd.DataFrame([row])], ignore_index=True)
    path = write_csv(frame, tmp_path / "r.csv")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["round_id"].startswith("'=") and rows[0]["table_id"] == "'@T1"
    assert rows[0]["dealer_id"] == "'-D1" and rows[0]["message"].startswith("'+")
    assert rows[0]["expected"] == "-100.00" and rows[0]["discrepancy"] == "-50.00"
    assert rows[0]["recorded"] == "net -50"


def test_clean_run_writes_header_only(tmp_path):
    path = write_csv(empty_findings(), tmp_path / "r.csv")
    assert path.read_text().strip() == ("round_id,game,table_id,dealer_id,started_at,rule_id,citation,severity,"
                                        "message,expected,recorded,discrepancy,expected_amount,recorded_amount,"
                                        "seats,shoe_id,date,source_file,source_line,evidence")


def test_summaries_and_payout_totals():
    f = pd.DataFrame({"round_id": ["a", "a", "b", "c"], "table_id": ["T1", "T1", "T1", "T2"],
                      "rule_id": ["x", "y", "x", "x"], "discrepancy": [10.0, 0.0, -2.5, -1.25]})
    assert payout_totals(f) == {"overpaid": 10.0, "underpaid": 3.75, "net": 6.25, "overpaid_findings": 1,
                                "underpaid_findings": 2}
    s = summarize(f, "table_id").set_index("table_id")
    assert s.loc["T1", "findings"] == 3 and s.loc["T1", "rounds"] == 2
    assert s.loc["T1", "overpaid"] == 10.0 and s.loc["T1", "underpaid"] == 2.5
    assert s.loc["T2", "underpaid"] == 1.25


# ---- the CSV writer's fast path against pandas' writer -------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from auditkit.report import _plain_cells, csv_text, pandas_csv_text  # noqa: E402

_TEXT = st.one_of(st.none(), st.just(float("nan")), st.text(max_size=12),
                  st.sampled_from(["=1+2", "-5.00", "+3", "@x", "\tx", "\rx", "\nx", "-", "a,b", 'say "hi"',
                                   "line\r\nbreak", "", " ", "é€😀", "1e5", "-D1", "=HYPERLINK(\"x\")"]))
_FLOAT = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.sampled_from([0.125, 0.135, -0.005, 2.675, -0.0, 1e20, 5e-324, 1234567.891]))
_EVIDENCE = st.one_of(st.none(), st.lists(st.tuples(st.sampled_from(["net", "wager", "decks"]),
                                                    st.floats(allow_nan=False, allow_infinity=False)), max_size=3))


@st.composite
def _frames(draw):
    n = draw(st.integers(0, 6))
    cols = {
        "round_id": pd.Series(draw(st.lists(_TEXT, min_size=n, max_size=n)), dtype=object),
        "message": pd.Series(draw(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=n, max_size=n)),
                             dtype=draw(st.sampled_from([object, "str"]))),
        "discrepancy": pd.Series(draw(st.lists(_FLOAT, min_size=n, max_size=n)), dtype=float),
        "source_line": pd.Series(draw(st.lists(st.integers(-2**63, 2**63 - 1), min_size=n, max_size=n)),
                                 dtype="int64"),
        "flag": pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        "evidence": pd.Series(draw(st.lists(_EVIDENCE, min_size=n, max_size=n)), dtype=object),
    }
    names = draw(st.lists(st.sampled_from(list(cols)), min_size=1, max_size=6, unique=True))
    return pd.DataFrame({k: cols[k] for k in names})


@settings(max_examples=300, deadline=None)
@given(_frames(), st.booleans())
def test_csv_text_writes_what_pandas_writes(frame, header):
    assert _plain_cells(frame) is not None
    assert csv_text(frame, header=header) == pandas_csv_text(frame, header=header)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"when": pd.to_datetime(["2025-06-02 10:00", None])}),
    pd.DataFrame({"n": pd.array([1, None], dtype="Int64")}),
    pd.DataFrame({"x": pd.Series([1, "a"], dtype=object)}),
    pd.DataFrame({"x": pd.Series([[1, 2], "a"], dtype=object)}),
    pd.DataFrame({0: ["a"]}),
    pd.DataFrame(),
])
def test_csv_text_leaves_other_columns_to_pandas(frame):
    assert _plain_cells(frame) is None
    assert csv_text(frame) == pandas_csv_text(frame)


def test_csv_text_of_real_findings_is_pandas(tmp_path):
    from conftest import example_records

    from auditkit.validate import validate_records

    found = validate_records([r for g in ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")
                              for r in example_records(g)])
    assert len(found) > 5 and _plain_cells(found) is not None
    assert csv_text(found) == pandas_csv_text(found)
