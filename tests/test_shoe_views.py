"""Several days' shoe views in one table (:data:`auditkit.rules.integrity.SHOE_VIEW`): ordered and grouped
as each view alone would be, view after view."""

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.engine.checks import shoe_order
from auditkit.rules.integrity import SHOE_VIEW, shoe_groups

ROUND = st.tuples(st.sampled_from(["T1", "T2"]), st.sampled_from(["S1", "S2", None]), st.integers(1, 3),
                  st.integers(0, 2))


def _table(rows: list[tuple], view: list[int] | None = None) -> pa.Table:
    table = pa.table({"table_id": pa.array([r[0] for r in rows], pa.string()),
                      "shoe_id": pa.array([r[1] for r in rows], pa.string()),
                      "round_seq": pa.array([r[2] for r in rows], pa.int32()),
                      "started_at": pa.array([r[3] for r in rows], pa.timestamp("us", tz="UTC"))})
    return table if view is None else table.append_column(SHOE_VIEW, pa.array(view, pa.int32()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(ROUND, max_size=6), min_size=1, max_size=4))
def test_views_are_ordered_and_grouped_each_as_alone(views):
    """The order and the shoe groups of the views side by side are those of each view alone, in turn."""
    rows = [r for v in views for r in v]
    table = _table(rows, [i for i, v in enumerate(views) for _ in v])
    order, expected, groups, start = shoe_order(table), [], [], 0
    for v in views:
        alone = shoe_order(_table(v)) if v else np.empty(0, np.int64)
        expected.append(alone + start)
        if v:
            g = shoe_groups(_table(v).take(pa.array(alone)))
            groups.append(g + (groups[-1].max() + 1 if groups else 0))
        start += len(v)
    assert order.tolist() == np.concatenate(expected).tolist()
    got = shoe_groups(table.take(pa.array(order)))
    assert got.tolist() == (np.concatenate(groups).tolist() if groups else [])


def _excess_plainly(table: pa.Table, columns: list[str], decks: np.ndarray) -> dict[int, str]:
    """shoe_excess read plainly: each shoe's cards counted round by round, columns in turn."""
    from auditkit.cards import JOKER, cards_str

    groups, seen, out = shoe_groups(table), {}, {}
    lists = {c: table[c].to_pylist() for c in columns}
    for row in range(table.num_rows):
        for c in columns:
            for card in lists[c][row] or []:
                if 0 <= card < JOKER:
                    n = seen[groups[row], card] = seen.get((groups[row], card), 0) + 1
                    if n > decks[row]:
                        out[row] = (out[row] + ", " if row in out else "") + f"{cards_str([card])} (copy {n})"
    return out


CARDS = st.lists(st.integers(-1, 53), max_size=3) | st.none()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ROUND, CARDS, CARDS), max_size=12))
def test_shoe_excess_is_its_plain_reading(rounds):
    """The excess copies of a card in a shoe, found with numpy, are those of a plain count (decks per table,
    as the configuration gives them)."""
    from auditkit.rules.integrity import shoe_excess

    table = _table([r[0] for r in rounds])
    table = table.append_column("player_cards", pa.array([r[1] for r in rounds], pa.list_(pa.int8())))
    table = table.append_column("banker_cards", pa.array([r[2] for r in rounds], pa.list_(pa.int8())))
    order = shoe_order(table)
    table, decks = table.take(pa.array(order)), np.array([1 + (r[0][0] == "T2") for r in rounds], np.float64)[order]
    rows, evidence = shoe_excess(table, ["player_cards", "banker_cards"], decks)
    assert dict(zip(rows.tolist(), evidence["excess"].tolist(), strict=True)) == \
        _excess_plainly(table, ["player_cards", "banker_cards"], decks)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 40), st.integers(0, 3)), max_size=40),
       st.booleans())
def test_order_of_shoes_is_its_plain_reading(rounds, unique):
    """:func:`order_of_shoes` ((shoe, round_seq) sorted as one integer when no two are alike) is the plain
    sort by shoe, round_seq, time and input order, with and without two rounds of one shoe and number."""
    from auditkit.engine.checks import order_of_shoes

    if unique:
        rounds = list({(s, q): (s, q, w) for s, q, w in rounds}.values())
    shoe, seq, when = (np.array([r[i] for r in rounds], np.int64) for i in range(3))
    assert order_of_shoes(shoe, seq.astype(np.int32), when).tolist() == np.lexsort((when, seq, shoe)).tolist()
