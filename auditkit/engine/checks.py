"""The rules over rounds: round rules batch by batch, shoe rules over a table's rounds grouped by
table and shoe; each gives its findings as one Arrow table (None: no finding), and a round a rule
cannot check (it lacks the evidence) is neither flagged nor passed (:mod:`auditkit.rules.coverage`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import combine, to_numpy
from ..paytables import Config
from ..rules import coverage
from ..rules.integrity import SHOE_VIEW
from ..rules.registry import PREPARERS, Hits, Rule, rules_for
from ..rules.tally import Tally
from .findings import META, Source, findings_table

__all__ = ["SHOE_KEY", "REPORT_ONLY", "report_only", "select_rules", "round_findings", "shoe_findings", "shoe_columns", "read_columns",
           "shoe_order", "order_of_shoes", "shoe_key", "shoe_numbers"]

SHOE_KEY = ["table_id", "shoe_id", "round_seq", "started_at", "round_id"]
"""The columns every shoe rule gets: rounds are grouped by table and shoe, in round_seq order."""
REPORT_ONLY = ["round_id", "dealer_id", "utc_offset", "source_file", "source_line"]
"""The report's metadata that no rule reads unless it declares it (:func:`report_only`): a finding's, read
for the rounds flagged only."""


def select_rules(game: str, scope: str, citations: Sequence[str] | None = None,
                 rule_ids: Sequence[str] | None = None) -> list[Rule]:
    """The rules of a game and scope, optionally only some citations or rule ids."""
    out = rules_for(game, scope)
    if citations:
        out = [r for r in out if r.citation in citations or r.rule_id in citations]
    if rule_ids:
        out = [r for r in out if r.rule_id in rule_ids]
    return out


def round_findings(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None = None,
                   date: str | None = None, tally: Tally | None = None) -> pa.Table | None:
    """Findings of the round rules of ``game`` (by default all) on one batch of its rounds, None when
    none; ``tally`` gets the coverage."""
    rules = select_rules(game, "round") if rules is None else rules
    if table.num_rows == 0 or not rules:
        return None
    ctx = PREPARERS[game](table, config)
    lack = coverage.lacking(table, game)  # a rule neither flags nor passes a round it cannot check
    found = []
    for r in rules:
        hits, cannot = r.func(ctx), coverage.cannot(lack, r.needs)
        if cannot is not None and len(hits):
            hits = hits.subset(~cannot[hits.rows])
        if tally is not None:
            tally.add(game, r, table.num_rows, cannot, lack, hits.rows)
        if len(hits):
            found.append((r, hits))
    return findings_table(table, found, game, date) if found else None


def shoe_findings(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None = None,
                  emit: np.ndarray | None = None, date: str | None = None, tally: Tally | None = None,
                  emitted: set[tuple[str, str]] | None = None, ordered: bool = False,
                  source: Source | None = None) -> pa.Table | None:
    """Findings (None: none) of the shoe rules over rounds grouped by table and shoe, in round_seq order
    (``ordered``: the table is in that order already, :func:`shoe_order`'s). ``source``: where the
    findings read the report's metadata ``table`` lacks (:func:`shoe_columns` without it).

    ``emit`` marks the rounds whose findings are wanted (the others are context
    carried from an earlier day); by default all. Given ``emitted`` (the (round_id, rule_id)
    of findings already reported), the findings wanted are instead those not in it, on any
    round, and it gets them; ``emit`` then marks the rounds counted in ``tally`` only. So
    live mode's open shoes, whose rounds may arrive out of order, report a finding that an
    earlier round arriving late puts on a round already checked.
    """
    rules = select_rules(game, "shoe") if rules is None else rules
    if table.num_rows == 0 or not rules:
        return None
    order = None if ordered else shoe_order(table)
    if order is not None and not (order[1:] > order[:-1]).all():
        table = table.take(pa.array(order))
        source = None if source is None else (source[0], source[1][order])
    keep = None if emit is None else np.asarray(emit) if order is None else np.asarray(emit)[order]
    lack = coverage.lacking(table, game)
    found = []
    for r in rules:
        cannot = coverage.cannot(lack, r.needs)
        hits = r.func(table, config) if cannot is None else _shoe_rule_on(table, config, r, ~cannot)
        if emitted is not None and len(hits):
            ids = table["round_id"].take(pa.array(hits.rows)).to_pylist()
            new = np.array([(i, r.rule_id) not in emitted for i in ids], bool)
            emitted.update((i, r.rule_id) for i in ids)
            hits = hits.subset(new)
        elif keep is not None and len(hits):
            hits = hits.subset(keep[hits.rows])
        if tally is not None:
            tally.add(game, r, table.num_rows if keep is None else int(keep.sum()), cannot, lack, hits.rows, emit=keep)
        if len(hits):
            found.append((r, hits))
    return findings_table(table, found, game, date, source) if found else None


def _shoe_rule_on(table: pa.Table, config: Config, rule: Rule, checkable: np.ndarray) -> Hits:
    """A shoe rule's hits over the rounds it can check only (a round it cannot check is not counted
    in its shoe either: its cards may be invented), as rows of ``table``."""
    rows = np.flatnonzero(checkable)
    if not len(rows):
        return Hits(rows=rows)
    hits = rule.func(table.take(pa.array(rows)), config)
    hits.rows = rows[np.asarray(hits.rows, dtype=np.int64)]
    return hits


def shoe_columns(rules: Sequence[Rule], game: str | None = None, report: bool = True) -> list[str]:
    """The columns the shoe rules read, with the shoe key and the report's metadata (and, given the game,
    those telling which rounds lack the evidence the rules need); without ``report``, only those the
    rules and :func:`shoe_order` read (none of :func:`report_only`)."""
    cols = dict.fromkeys(SHOE_KEY + META + ["house_rules"])  # a round's own house rules (Context.param)
    for r in rules:
        cols.update(dict.fromkeys(r.columns))
        if game is not None:
            cols.update(dict.fromkeys(coverage.columns_for(game, r.needs)))
    if not report:
        return [c for c in cols if c not in report_only(rules, game)]
    return list(cols)


def report_only(rules: Sequence[Rule], game: str | None = None) -> list[str]:
    """The columns of :data:`REPORT_ONLY` that none of ``rules`` reads (declares, or needs to know which
    rounds lack some evidence)."""
    read = {c for r in rules for c in (*r.columns, *(coverage.columns_for(game, r.needs) if game else ()))}
    return [c for c in REPORT_ONLY if c not in read]


def read_columns(round_rules: Sequence[Rule], shoe_rules: Sequence[Rule], game: str | None = None
                 ) -> list[str] | None:
    """The stored columns a validation pass reads: those the selected rules declare, the shoe
    key and the report's metadata (and, given the game, those telling which rounds lack the evidence
    the rules need); None (every column) when a round rule declares none."""
    if any(not r.columns for r in round_rules):
        return None
    cols = dict.fromkeys(["status", *shoe_columns(shoe_rules, game)])
    for r in round_rules:
        cols.update(dict.fromkeys(r.columns))
        if game is not None:
            cols.update(dict.fromkeys(coverage.columns_for(game, r.needs)))
    return list(cols)


def shoe_order(table: pa.Table) -> np.ndarray:
    """Row order that puts each shoe's rounds together, by round_seq, then time, then input order.

    Shoes are numbered by first appearance (integers sort much faster than the strings); in a table of
    several days' views (:data:`~auditkit.rules.integrity.SHOE_VIEW`, each view's rows together, in
    turn), by first appearance in each view, view after view: each view's rows in the order it alone
    would have."""
    return order_of_shoes(shoe_numbers(table), to_numpy(table["round_seq"], 0), to_numpy(table["started_at"].cast(pa.int64()), 0),
                          to_numpy(table[SHOE_VIEW]) if SHOE_VIEW in table.column_names else None)


def order_of_shoes(shoe: np.ndarray, seq: np.ndarray, when: np.ndarray, view: np.ndarray | None = None) -> np.ndarray:
    """:func:`shoe_order` from each round's shoe (numbered by first appearance; with ``view``, any number
    per distinct shoe), round_seq and time (integers)."""
    if view is not None:  # (view, shoe) numbered by first appearance (a hash, not a sort)
        pair = view.astype(np.int64) * (int(shoe.max(initial=0)) + 1) + shoe
        shoe = pc.dictionary_encode(pa.array(pair)).indices.to_numpy(zero_copy_only=False)
    seq = seq.astype(np.int64)
    if len(seq):  # (shoe, round_seq) as one integer, when it fits
        low = int(seq.min())
        span = int(seq.max()) - low + 1
        if int(shoe.max()) < np.iinfo(np.int64).max // span - 1:
            key = shoe.astype(np.int64) * span + (seq - low)
            order = np.argsort(key, kind="stable")
            key = key[order]
            if not (key[1:] == key[:-1]).any():  # no two alike: the time orders none of them
                return order
    return np.lexsort((when, seq, shoe))


def shoe_numbers(table: pa.Table) -> np.ndarray:
    """Each round's shoe (its :func:`shoe_key`) numbered by first appearance (int64)."""
    return pc.dictionary_encode(combine(shoe_key(table))).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def shoe_key(table: pa.Table) -> pa.Array:
    """``table_id`` and ``shoe_id`` joined, per round (null shoe ids join as empty)."""
    return pc.binary_join_element_wise(pc.fill_null(table["table_id"], ""), pc.fill_null(table["shoe_id"], ""),
                                       "\x1f")
