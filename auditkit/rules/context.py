"""The context a game's round rules read: derived facts of one batch of rounds, each computed once.

Every game defines one subclass, registered as its preparer::

    @preparer("baccarat", "mini_baccarat")
    class Baccarat(Context):
        section = "baccarat"

        @cached_property
        def player_total(self) -> np.ndarray: ...

so that a rule is a condition over named facts (``ctx.player_total <= 5 &
~ctx.player_drew``) and a fact that no selected rule asks for is never
computed. The wager nets of every round (:class:`Nets`) are what the shared
``void`` check and the money checks read.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import combine, flat_values, lengths, strings, struct_field, to_numpy
from ..paytables import Config

__all__ = ["Context", "Nets", "Rounds", "cached_property", "numbers", "objects"]


@dataclass(frozen=True)
class Nets:
    """Every wager net of a batch, one entry per wager: the round (row) it belongs to, its seat,
    what it is (``banker``, ``hand 2``, ``pair plus``) and its recorded net."""

    round: np.ndarray
    seat: np.ndarray
    what: np.ndarray
    net: np.ndarray

    @classmethod
    def join(cls, *parts: Nets) -> Nets:
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("round", "seat", "what", "net")))


def numbers(col: pa.Array | pa.ChunkedArray, fill: Any, dtype: Any = None) -> np.ndarray:
    """A primitive column as numpy (of ``dtype`` when given), nulls as ``fill`` (read in place when
    there is none)."""
    col = combine(col)
    if dtype is not None and col.null_count:  # the fill in the wanted type (NaN in an integer column, say)
        col = col.cast(pa.from_numpy_dtype(np.dtype(dtype)))
    out = to_numpy(col, fill if col.null_count else None)
    return out if dtype is None else out.astype(dtype, copy=False)


def objects(items: list) -> np.ndarray:
    """A list as a one-dimensional object array: one value per hit (an array of cards, a phrase)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _house_values(table: pa.Table, key: str, base: np.ndarray) -> np.ndarray:
    """``base`` (a setting per round, as configured for its table) with the value of each round that
    records its own house rule ``key`` (the ``house_rules`` column) in its place."""
    if "house_rules" not in table.column_names:
        return base
    col = combine(table["house_rules"])
    if col.null_count == len(col):
        return base
    items = flat_values(col)
    hit = numbers(pc.equal(struct_field(items, "name"), key), False).astype(bool, copy=False)
    if not hit.any():
        return base
    rows = np.repeat(np.arange(len(col), dtype=np.int64), lengths(col))[hit]
    out = np.array(base, copy=True)
    out[rows] = numbers(struct_field(items, "value"), np.nan)[hit]
    return out


class Rounds:
    """Some rounds of a batch (``rows``), whose facts read at those rounds only: ``wrong.banker_total``
    is ``ctx.banker_total[wrong.rows]``, and ``wrong.where(condition)`` the rounds among them where a
    condition over them holds. A rule about a few rounds among many (the banker drew when the tableau
    says stand) then reads its condition on those few."""

    def __init__(self, ctx: Context, rows: np.ndarray):
        self._ctx = ctx
        self.rows = rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)[self.rows]

    def where(self, condition: np.ndarray) -> np.ndarray:
        """The rows of the rounds among these where ``condition`` (one entry per round here) holds."""
        return self.rows[condition]


class Context:
    """Facts of one batch of a game's rounds (``n`` rows of ``table``) under ``config``."""

    section: str = ""
    """The game's configuration section."""

    net_columns: tuple[str, ...] = ()
    """The columns :attr:`nets` reads (and ``status``); empty: any column."""

    def __init__(self, table: pa.Table, config: Config):
        self.table = table
        self.config = config
        self.n = table.num_rows

    def column(self, name: str, fill: Any = None) -> np.ndarray:
        """A stored column as numpy, nulls as ``fill``."""
        return to_numpy(self.table[name], fill)

    @cached_property
    def table_ids(self) -> pa.ChunkedArray:
        """The batch's table ids, one object for every lookup (the configuration caches its encoding)."""
        return self.table["table_id"]

    def among(self, mask: np.ndarray) -> Rounds:
        """The rounds where ``mask`` holds, their facts read at those rounds only (made for one rule: a
        context must not keep one, as it refers back to the context)."""
        return Rounds(self, np.flatnonzero(mask))

    def per_table(self, value_of: Callable[[dict[str, Any]], Any]) -> tuple[list, np.ndarray]:
        """A setting read from each round's table: ``value_of(section)`` of the game's configuration
        section with the table's overrides, asked once per distinct table of the batch. The distinct
        values (by their pickle, which no two different values share; in the order their tables first appear; the section's own value for a batch
        of no rounds) and each round's index into them: a batch whose tables all agree has one value.

        The one way a rule reads a per-table setting: a number per round is :meth:`param`; a paytable
        row, a house way or any other value is this (baccarat's ``paytables``, pai gow's ``house_ways``)."""
        codes, tables = self.config.table_codes(self.table_ids)
        values: list = []
        first: dict[bytes, int] = {}
        of_table = np.empty(len(tables), dtype=np.int64)
        for i, t in enumerate(tables):
            value = value_of(self.config.section(self.section, str(t)))
            of_table[i] = first.setdefault(pickle.dumps(value), len(values))
            if of_table[i] == len(values):
                values.append(value)
        if not values:
            values.append(value_of(self.config.section(self.section)))
        return values, of_table[codes]

    def param(self, key: str, dtype: Any = np.float64) -> np.ndarray:
        """A numeric setting per round (:meth:`per_table`; NaN where not configured, as a table limit),
        except where a round records its own house rule ``key`` (an export's rules per row, e.g. a 6:5
        blackjack payout): that value for that round."""
        values, index = self.per_table(lambda section: section.get(key, np.nan))
        return _house_values(self.table, key, np.array(values, dtype=dtype)[index])

    @cached_property
    def unit(self) -> float:
        """The rounding unit money compares to (a cent by default)."""
        return float(self.config.money["rounding_unit"])

    @cached_property
    def rounding(self) -> str:
        return str(self.config.money["rounding"])

    @cached_property
    def status(self) -> np.ndarray:
        """Each round's status (object array), read through the column's dictionary."""
        return strings(self.table["status"], "completed")

    @cached_property
    def completed(self) -> np.ndarray:
        """Rounds played to the end (not void, not dead)."""
        return numbers(pc.equal(self.table["status"], "completed"), False).astype(bool, copy=False)

    @cached_property
    def void_or_dead(self) -> np.ndarray:
        """Rounds declared void or dead: every wager is returned."""
        return ~self.completed

    # ---- the ``wagers`` list every game records, one element per wager, round after round ------
    @cached_property
    def wagers(self) -> pa.StructArray:
        """Every wager of the batch (``seat``, ``bet``, ``amount``, ``net``), round after round."""
        return flat_values(self.table["wagers"])

    @cached_property
    def wagers_per_round(self) -> np.ndarray:
        return lengths(self.table["wagers"])

    @cached_property
    def wager_round(self) -> np.ndarray:
        """The row of each wager's round."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.wagers_per_round)

    @cached_property
    def wager_offsets(self) -> np.ndarray:
        """Where each round's wagers start in the flattened ``wagers`` (``n + 1`` entries, the last one
        the number of wagers)."""
        out = np.zeros(self.n + 1, np.int64)
        np.cumsum(self.wagers_per_round, out=out[1:])
        return out

    def round_of(self, wagers: np.ndarray) -> np.ndarray:
        """The row of some wagers' round (as ``wager_round[wagers]``, without reading every wager's)."""
        return np.searchsorted(self.wager_offsets, wagers, side="right") - 1

    def wagers_of(self, rows: np.ndarray) -> np.ndarray:
        """The wagers (indices into the flattened ``wagers``) of some rounds, round after round."""
        counts = self.wagers_per_round[rows]
        skip = self.wager_offsets[rows] - (np.cumsum(counts) - counts)  # from a wager's rank to its index
        return np.repeat(skip, counts) + np.arange(int(counts.sum()))

    @cached_property
    def wager_seat(self) -> np.ndarray:
        return numbers(struct_field(self.wagers, "seat"), -1)

    @cached_property
    def wager_bet(self) -> pa.Array:
        """Each wager's bet name (an Arrow string array)."""
        return struct_field(self.wagers, "bet")

    @cached_property
    def wager_amount(self) -> np.ndarray:
        return numbers(struct_field(self.wagers, "amount"), 0.0, np.float64)

    @cached_property
    def wager_net(self) -> np.ndarray:
        """Each wager's recorded net."""
        return numbers(struct_field(self.wagers, "net"), 0.0, np.float64)

    # ---- the ``hands`` list of the games that record patron hands, one element per hand ---------
    @cached_property
    def hands(self) -> pa.StructArray:
        """Every patron hand of the batch, round after round."""
        return flat_values(self.table["hands"])

    @cached_property
    def hands_per_round(self) -> np.ndarray:
        return lengths(self.table["hands"])

    @cached_property
    def hand_round(self) -> np.ndarray:
        """The row of each hand's round."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.hands_per_round)

    def hand_field(self, name: str, fill: Any, dtype: Any = None) -> np.ndarray:
        """A field of every hand as numpy (of ``dtype`` when given), nulls as ``fill``."""
        return numbers(struct_field(self.hands, name), fill, dtype)

    @cached_property
    def hand_seat(self) -> np.ndarray:
        """Each hand's seat (-1 where none is recorded, as for a wager's)."""
        return self.hand_field("seat", -1, np.int64)

    # ---- the ``events`` list (blackjack, pai gow poker), one element per event, in order ----------
    @cached_property
    def events(self) -> pa.StructArray:
        """Every event of the batch, round after round, in the order recorded."""
        return flat_values(self.table["events"])

    @cached_property
    def events_per_round(self) -> np.ndarray:
        return lengths(self.table["events"])

    @cached_property
    def event_round(self) -> np.ndarray:
        """The row of each event's round."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.events_per_round)

    @cached_property
    def nets(self) -> Nets:
        """Every wager net of the batch (the game's hands and its ``wagers`` list)."""
        raise NotImplementedError

    def nets_of(self, rounds: np.ndarray) -> Nets:
        """The wager nets of the rounds where ``rounds`` (a mask) is True, built from those rounds
        alone (the void check asks for the few void and dead rounds of a batch)."""
        rows = np.flatnonzero(rounds)
        if "nets" in self.__dict__ or len(rows) == self.n:  # already built for every wager
            keep = rounds[self.nets.round]
            return Nets(*(getattr(self.nets, f)[keep] for f in ("round", "seat", "what", "net")))
        table = self.table.select(list(self.net_columns)) if self.net_columns else self.table
        part = type(self)(table.take(pa.array(rows)), self.config).nets
        return Nets(rows[part.round], part.seat, part.what, part.net)
