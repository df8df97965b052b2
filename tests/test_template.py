"""Finding words from evidence: the formatters, templates with cases, the numbers kept, and the engine's use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auditkit.cards import NO_CARD, parse_card
from auditkit.report import spreadsheet_safe
from auditkit.rules.registry import RULES, Hits
from auditkit.rules.template import KINDS, Template, by_case, evidence_text, numeric_evidence
from auditkit.validate import validate_records


def codes(text: str) -> np.ndarray:
    return np.array([parse_card(c) for c in text.split()] + [NO_CARD], dtype=np.int16)


@pytest.mark.parametrize(("kind", "value", "text"), [
    ("money", 1234.5, "1,234.50"), ("money", float("nan"), "-"),
    ("net", 23.75, "+23.75"), ("net", -150.0, "-150.00"), ("net", -0.001, "+0.00"),
    ("int", 17.0, "17"), ("int", float("nan"), "-"),
    ("odds", 1.5, "3:2"), ("odds", 1.2, "6:5"), ("odds", 2.0, "2:1"),
    ("percent", 0.5, "50%"),
    ("bets", [("ante", 10.0), ("play", -10.0)], "ante +10.00, play -10.00"),
    ("", "banker stands", "banker stands"),
])
def test_each_kind_is_written_one_way(kind, value, text):
    assert KINDS[kind](value) == text


def test_cards_are_written_from_codes_or_names_and_padding_is_skipped():
    assert KINDS["cards"](codes("Ah Td")) == "Ah Td"
    assert KINDS["cards"](["Ah", "JK"]) == "Ah JK"
    assert KINDS["cards"](np.array([NO_CARD])) == "no card"


def test_a_template_fills_each_hit_from_its_evidence():
    t = Template.of("seat {seat:int} {bet} bet {amount:money}: net {net:net}")
    out = t.render(2, {"seat": np.array([3, 5]), "bet": "banker", "amount": np.array([50.0, 1000.0]),
                       "net": np.array([50.0, -2.5])})
    assert out.tolist() == ["seat 3 banker bet 50.00: net +50.00", "seat 5 banker bet 1,000.00: net -2.50"]


def test_a_template_with_cases_picks_a_text_per_hit_and_needs_only_the_evidence_of_the_cases_used():
    t = Template.of({"drew": "player drew {card:cards}", "stood": "player {total:int} stood"})
    out = t.render(2, {"total": np.array([6, 7])}, np.array(["stood", "stood"], dtype=object))
    assert out.tolist() == ["player 6 stood", "player 7 stood"]
    with pytest.raises(KeyError, match="card"):
        t.render(1, {"total": np.array([6])}, np.array(["drew"], dtype=object))


@pytest.mark.parametrize("bad", ["{x:dollars}", "{x!r}", "{0}", "{x.y}"])
def test_a_template_names_a_known_kind_and_a_plain_field(bad):
    with pytest.raises(ValueError, match="template"):
        Template.of(bad)


def test_by_case_gathers_the_words_of_several_checks():
    words = by_case(a={"message": "m{x}", "expected": "e", "recorded": "r"},
                    b={"message": "n", "expected": "f", "recorded": "s"})
    assert words == {"message": {"a": "m{x}", "b": "n"}, "expected": {"a": "e", "b": "f"},
                     "recorded": {"a": "r", "b": "s"}}


def test_the_numbers_kept_are_the_evidence_that_is_a_number():
    shown = Template.of("{cards:cards} {code} {amount:money} {total:int}")
    kept = numeric_evidence(2, {"cards": np.array([[1, 2], [3, 4]]), "code": np.array(["a", "b"], dtype=object),
                                "amount": np.array([5.0, np.nan]), "total": np.array([7, 8]),
                                "limit": 10.0, "card_codes": np.array([9, 9])}, [shown])
    # cards and codes are not numbers; a missing amount is left out; a value for all hits is kept for each
    assert kept == [[("amount", 5.0), ("total", 7.0), ("limit", 10.0), ("card_codes", 9.0)],
                    [("total", 8.0), ("limit", 10.0), ("card_codes", 9.0)]]


def test_numbers_shown_as_a_code_are_not_kept():
    assert numeric_evidence(1, {"seq": np.array([3])}, [Template.of("{seq}")]) == [[]]


def test_evidence_is_written_short_and_exact_for_a_spreadsheet():
    assert evidence_text([("initial_wager", 2090.0), ("table_min", 50.0), ("rate", 1.875)]) == \
        "initial_wager=2090; table_min=50; rate=1.875"
    assert evidence_text([]) == "" and evidence_text(None) == ""
    frame = spreadsheet_safe(pd.DataFrame({"evidence": [[("net", -50.0)], []]}))
    assert frame["evidence"].tolist() == ["net=-50", ""]


def test_hits_at_take_batch_arrays_at_the_rows_and_ask_functions_for_them_only():
    asked = []

    def cards(rows):
        asked.append(rows.tolist())
        return np.array([f"c{r}" for r in rows], dtype=object)

    hits = Hits.where(np.array([False, True, False, True]), evidence={"total": np.arange(4) * 10, "cards": cards,
                                                                      "limit": 5.0})
    assert hits.rows.tolist() == [1, 3] and asked == [[1, 3]]
    assert hits.evidence["total"].tolist() == [10, 30] and hits.evidence["limit"] == 5.0
    on_items = Hits.at(np.array([0, 0]), items=np.array([2, 5]), evidence={"net": np.arange(6.0)})
    assert on_items.evidence["net"].tolist() == [2.0, 5.0]


def test_concat_spreads_the_evidence_of_parts_that_name_different_things():
    a = Hits(rows=np.array([1]), case="x", evidence={"net": np.array([5.0])})
    b = Hits(rows=np.array([2, 3]), case="y", evidence={"rate": np.array([1.5, 2.0])})
    both = Hits.concat([a, b])
    assert both.case.tolist() == ["x", "y", "y"]
    assert np.isnan(both.evidence["net"][1:]).all() and np.isnan(both.evidence["rate"][0])


def _limits_round() -> dict:
    return {"round_id": "BJ-1", "game": "blackjack", "table_id": "BJ-01", "dealer_id": "D1",
            "started_at": "2025-06-02T10:00:00-05:00", "shoe_id": "S1", "round_seq": 1, "status": "completed",
            "table_min": 50, "table_max": 2000, "dealer_cards": ["Th", "7c"],
            "hands": [{"seat": 1, "hand": 0, "cards": ["Ts", "9d"], "wager": 2090, "net": 2090}]}


def test_the_engine_writes_the_words_from_the_rules_templates_and_keeps_the_numbers(tmp_path):
    found = validate_records([_limits_round()])
    limit = found[found["rule_id"] == "blackjack.a"].iloc[0]
    assert limit["message"] == "seat 1 hand 0: initial wager 2,090.00 above the table maximum 2,000.00"
    assert limit["expected"] == "50.00-2,000.00" and limit["recorded"] == "2,090.00"
    kept = dict(limit["evidence"])
    assert kept["initial_wager"] == 2090.0 and kept["table_max"] == 2000.0 and kept["table_min"] == 50.0
    assert RULES["blackjack.a"].message is not None


def test_the_findings_parquet_keeps_evidence_as_numbers(tmp_path):
    from auditkit.report import write_findings_parquet

    found = validate_records([_limits_round()])
    path = write_findings_parquet(found, tmp_path / "f.parquet")
    table = pq.read_table(path)
    kind = table.schema.field("evidence").type
    assert pa.types.is_map(kind) and kind.item_type == pa.float64() and kind.key_type == pa.string()
    row = [r for r in table.to_pylist() if r["rule_id"] == "blackjack.a"][0]
    assert ("table_max", 2000.0) in row["evidence"]


def test_a_rule_declares_its_message():
    from auditkit.rules.registry import rule

    with pytest.raises(ValueError, match="message template is required"):
        rule("test.no_words", games=("baccarat",), citation="x", severity="low", summary="s")(lambda ctx: None)
    with pytest.raises(ValueError, match="template"):
        rule("test.bad_words", games=("baccarat",), citation="x", severity="low", summary="s",
             message="{amount:dollars}")(lambda ctx: None)
    assert "test.no_words" not in RULES and "test.bad_words" not in RULES


# ---- rendering a column at a time against the plain per-hit reading --------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _plain_render(t: Template, n: int, evidence: dict, case=None) -> list[str]:
    """The words of each hit read one hit at a time: the reference of :meth:`Template.render`."""
    def at(value, k):
        return value[k] if isinstance(value, (np.ndarray, list)) and len(value) == n else value

    out = []
    for k in range(n):
        text = t.cases[""] if t.single else t.cases[at(case, k)]
        out.append("".join(literal + ("" if name is None else KINDS[kind](at(evidence[name], k)))
                           for literal, name, kind in text.parts))
    return out


def _plain_numbers(n: int, numeric: dict) -> list:
    return [[(name, float(v[k])) for name, v in numeric.items() if not np.isnan(v[k])] for k in range(n)]


_VALUES = {
    "int": st.one_of(st.integers(-10**6, 10**6), st.just(float("nan"))),
    "money": st.one_of(st.floats(-1e7, 1e7), st.just(float("nan"))),
    "net": st.one_of(st.floats(-1e7, 1e7), st.just(float("nan"))),
    "percent": st.floats(0, 10), "": st.text(max_size=5),
    "cards": st.lists(st.sampled_from(["Ah", "Td", "2c", "JK", "Qs"]), max_size=3).map(lambda c: codes(" ".join(c))[:-1]
                                                                                      if c else codes("")[:0]),
}


@st.composite
def _rendered(draw):
    n = draw(st.integers(0, 6))
    names = draw(st.lists(st.sampled_from(list(_VALUES)), min_size=1, max_size=4))
    evidence, parts = {}, []
    for i, kind in enumerate(names):
        name = f"f{i}"
        if kind in ("int", "money", "net", "percent") and draw(st.booleans()):
            evidence[name] = np.array(draw(st.lists(_VALUES[kind], min_size=n, max_size=n)), dtype=np.float64)
        elif draw(st.booleans()):
            evidence[name] = [draw(_VALUES[kind]) for _ in range(n)]
        else:
            evidence[name] = draw(_VALUES[kind])
        parts.append(f"{draw(st.sampled_from(['', 'x ', ': ', '{{', 'é ']))}{{{name}:{kind}}}")
    text = "".join(parts) + draw(st.sampled_from(["", ".", " end"]))
    if draw(st.booleans()):
        return Template.of(text), n, evidence, None
    cases = {"a": text, "b": "other " + text, "c": "plain"}
    case = draw(st.one_of(st.sampled_from(list(cases)),
                          st.lists(st.sampled_from(list(cases)), min_size=n, max_size=n).map(
                              lambda c: np.array(c, dtype=object))))
    return Template.of(cases), n, evidence, case


@settings(max_examples=300, deadline=None)
@given(_rendered())
def test_render_writes_what_the_per_hit_reading_writes(args):
    t, n, evidence, case = args
    try:
        expected = _plain_render(t, n, evidence, case)
    except TypeError as exc:  # a value both readings take as one per hit that is not one (an int as cards)
        with pytest.raises(type(exc)):
            t.render(n, evidence, case)
        return
    assert t.render(n, evidence, case).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5).flatmap(lambda n: st.tuples(st.just(n), st.dictionaries(
    st.sampled_from(["a", "b", "c"]), st.lists(st.floats(allow_infinity=False), min_size=n, max_size=n)))))
def test_numeric_evidence_keeps_what_the_per_hit_reading_keeps(args):
    n, values = args
    evidence = {k: np.array(v, dtype=np.float64) for k, v in values.items()}
    got = numeric_evidence(n, evidence)
    assert got == _plain_numbers(n, evidence)
    assert all(type(v) is float for pairs in got for _, v in pairs)
