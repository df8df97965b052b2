"""Card integrity helpers shared by every game (catalog row ``integrity``).

A card that cannot be in the round: repeated in a one-deck round, the joker
outside pai gow (or twice), or more copies of a card in a shoe than the shoe
holds, reported on the round where the excess copy appears. Each game module
registers its own ``integrity`` rules with these vectorized helpers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cards import JOKER, NO_CARD, cards_str
from ..columns import combine, flat_values, parents, to_numpy

__all__ = ["SHOE_VIEW", "repeated_in_round", "jokers", "shoe_excess", "shoe_groups", "flat_cards"]

SHOE_VIEW = "_shoe_view"
"""A column the engine adds to the rounds of several days' shoes checked at once (each day with the
previous day's rounds of its shoes: :mod:`auditkit.engine.partitions`): the number of the day's view. Shoe
rules keep the views apart (:func:`shoe_groups`), so each day's findings are those of that day alone."""


def repeated_in_round(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a padded card matrix where a card appears twice, and the first repeated code (-1 if none)."""
    if cards.shape[1] < 2:
        return np.zeros(len(cards), dtype=bool), np.full(len(cards), NO_CARD, dtype=np.int8)
    s = np.sort(cards, axis=1)
    dup = (s[:, 1:] == s[:, :-1]) & (s[:, 1:] != NO_CARD)
    has = dup.any(axis=1)
    first = np.where(has, s[np.arange(len(s)), 1 + dup.argmax(axis=1)], NO_CARD).astype(np.int8)
    return has, first


def jokers(cards: np.ndarray) -> np.ndarray:
    """Number of jokers in each row of a padded card matrix."""
    return (cards == JOKER).sum(axis=1)


def shoe_groups(table: pa.Table) -> np.ndarray:
    """A group number per round of a table sorted by shoe: one per run of equal (table_id, shoe_id) (and
    :data:`SHOE_VIEW`, when the table has one)."""
    n = table.num_rows
    new = np.zeros(n, dtype=bool)
    new[:1] = True
    if n > 1:
        for name in ("table_id", "shoe_id"):  # Arrow compares the strings: no Python objects
            col = combine(table[name])
            a, b = col.slice(1), col.slice(0, n - 1)
            diff = pc.fill_null(pc.not_equal(a, b), True)  # one side null
            both_null = pc.and_(pc.is_null(a), pc.is_null(b))
            new[1:] |= to_numpy(pc.and_not(diff, both_null), False).astype(bool)
        if SHOE_VIEW in table.column_names:
            view = to_numpy(table[SHOE_VIEW])
            new[1:] |= view[1:] != view[:-1]
    return np.cumsum(new) - 1


def flat_cards(table: pa.Table, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every card of the given ``list<int8>`` columns (or ``hands.cards``) with its round row, column
    after column (a stable sort by row puts them in dealing order: round by round, columns in turn)."""
    codes, rows = [], []
    for name in columns:
        if "." in name:  # a list of structs: "hands.cards"
            outer, inner = name.split(".", 1)
            hands = flat_values(table[outer])
            hand_rows = parents(table[outer])
            col = hands.field(inner)
            codes.append(flat_values(col).to_numpy(zero_copy_only=False))
            rows.append(hand_rows[parents(col)])
        else:
            codes.append(flat_values(table[name]).to_numpy(zero_copy_only=False))
            rows.append(parents(table[name]))
    code = np.concatenate(codes).astype(np.int16) if codes else np.empty(0, np.int16)
    row = np.concatenate(rows) if rows else np.empty(0, np.int64)
    return code, row


SHOE_EXCESS = "more copies than a {decks:int}-deck shoe holds: {excess}"
"""The message of a card dealt more often than its shoe holds, from :func:`shoe_excess`'s evidence."""


def shoe_excess(table: pa.Table, columns: list[str], decks: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rounds where a card's copy count in its shoe first exceeds ``decks`` (per round), with evidence.

    ``table`` is grouped by table and shoe, in round_seq order; ``decks`` gives each round's
    deck count. Returns the rows and, per row, the evidence of :data:`SHOE_EXCESS`: the round's deck
    count and the excess cards with their copy numbers (``As (copy 9), Kd (copy 9)``).
    """
    code, row = flat_cards(table, columns)
    real = (code >= 0) & (code < JOKER)
    code, row = code[real], row[real]
    if not len(code):
        return _no_excess()
    group = shoe_groups(table)[row]
    key = group.astype(np.int64) * 64 + code
    # only the (shoe, card) pairs dealt more often than the shoe holds need their copies numbered
    copies = np.bincount(key)
    if copies.max() <= decks.min():  # the usual case: no card more often than any shoe holds
        return _no_excess()
    suspect = copies[key] > decks[row]
    if not suspect.any():
        return _no_excess()
    dealt = np.flatnonzero(suspect)[np.argsort(row[suspect], kind="stable")]  # the few suspects in dealing order
    code, row, key = code[dealt], row[dealt], key[dealt]
    order = np.argsort(key, kind="stable")  # stable: keeps dealing order within a (shoe, card)
    k = key[order]
    start = np.ones(len(k), dtype=bool)
    start[1:] = k[1:] != k[:-1]
    first_idx = np.maximum.accumulate(np.where(start, np.arange(len(k)), 0))
    copy_no = np.empty(len(k), dtype=np.int64)
    copy_no[order] = np.arange(len(k)) - first_idx + 1
    over = copy_no > decks[row]
    if not over.any():
        return _no_excess()
    bad_rows, bad_codes, bad_copy = row[over], code[over], copy_no[over]
    uniq = np.unique(bad_rows)
    excess = np.empty(len(uniq), dtype=object)
    pos = np.searchsorted(uniq, bad_rows)
    for i in range(len(uniq)):  # one list per flagged round (rare), not per round
        sel = pos == i
        excess[i] = ", ".join(f"{cards_str([c])} (copy {n})" for c, n in zip(bad_codes[sel], bad_copy[sel], strict=True))
    return uniq, {"decks": decks[uniq], "excess": excess}


def _no_excess() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    return np.empty(0, np.int64), {"decks": np.empty(0), "excess": np.empty(0, object)}
