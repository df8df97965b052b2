"""Pai gow poker house ways: how the dealer sets seven cards into a five-card and a two-card hand.

A house way is data (:class:`HouseWay`), loaded from a built-in name or from a TOML
table of the licensee's configuration; nothing in it is executed. ``DEFAULT`` is the
Bally's Atlantic City house way as published by the Wizard of Odds, completed for the
hands that page does not show (four of a kind, five aces, the full house exception) by
the standard house way of the Gold Star School of Gaming; docs/house_way.md states every
rule and its source.

:func:`set_hands` is vectorized: the seven cards are sorted, the 21 ways of choosing the
two-card hand are scored with the five-card tables (only for hands that hold a straight or
flush), and the rank pattern of the hand (pairs, trips, quads, the joker counted as an
ace) gives the two-card hand the house way wants; no Python loop runs per hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from itertools import combinations
from typing import Any

import numpy as np

from ..cards import RANK, RANKS, SUIT, cards_str
from .five_card import (
    ACE, FLUSH, JOKER_RANK, STRAIGHT, STRAIGHT_FLUSH, _lookup, pattern_index, rank2, rank2_from_ranks, rank5,
)

__all__ = ["HouseWay", "HouseWayError", "DEFAULT", "BUILTIN", "STRUCTURES", "load_house_way", "set_hands",
           "same_setting", "describe"]

STRUCTURES = ("no_pair", "one_pair", "two_pair", "three_pair", "trips", "full_house", "two_trips", "quads",
              "five_aces")
"""Pair structures of seven cards (the joker counted as an ace), for ``straights_with``."""

_TWO_PAIR_KEYS = ("low_low", "low_mid", "low_high", "mid_mid", "mid_high", "high_high", "aces")


class HouseWayError(ValueError):
    """A house way specification that cannot be used, with the reason."""


@dataclass(frozen=True)
class HouseWay:
    """A data-driven house way. Ranks are written as card ranks: ``"2"`` .. ``"9"``, ``"T"``, ``"J"``, ``"Q"``, ``"K"``, ``"A"``.

    Two pair: pairs are *low* up to ``low_pair_max``, *mid* up to ``mid_pair_max``, *high*
    up to kings, and aces are their own class. For each class combination, ``two_pair``
    gives the lowest singleton rank that keeps both pairs in the five-card hand (the two
    highest singletons then play in front), ``"split"`` (always split: the higher pair
    behind, the lower pair in front) or ``"keep"`` (never split).
    """

    name: str = "default"
    source: str = ""
    low_pair_max: str = "6"
    mid_pair_max: str = "T"
    two_pair: dict[str, str] = field(default_factory=lambda: {
        "low_low": "K", "low_mid": "K", "low_high": "A", "mid_mid": "A",
        "mid_high": "split", "high_high": "split", "aces": "split"})
    split_three_aces: bool = True
    """Three aces (two with the joker): a pair of aces behind, one ace and the highest singleton in front."""
    full_house_keep_pair_max: str = "2"
    """A full house whose pair is at most this rank stays together when the singletons are ``full_house_keep_with`` ("none": never)."""
    full_house_keep_with: str = "AK"
    quads_keep_max: str = "6"
    """Four of a kind up to this rank stays together (two highest singletons in front)."""
    quads_keep_with_ace_max: str = "T"
    """Four of a kind up to this rank stays together when an ace (or the joker) can play in front; higher quads split."""
    five_aces_keep_with_pair: str = "K"
    """Five aces stay together when a pair of at least this rank can play in front ("none": always split 3/2)."""
    straights_with: tuple[str, ...] = ("no_pair", "one_pair", "trips")
    """Structures for which a straight, flush or straight flush is kept behind, with the best possible front."""
    ace_joker_high_straight_as_pair: bool = True
    """An ace-high straight (not flush) made with an ace and the joker is played as a pair of aces instead."""

    def __post_init__(self) -> None:
        for name in ("low_pair_max", "mid_pair_max", "quads_keep_max", "quads_keep_with_ace_max"):
            _rank(getattr(self, name), name)
        for name in ("full_house_keep_pair_max", "five_aces_keep_with_pair"):
            _rank(getattr(self, name), name, none_ok=True)
        if _rank(self.low_pair_max, "low_pair_max") >= _rank(self.mid_pair_max, "mid_pair_max"):
            raise HouseWayError("low_pair_max must be below mid_pair_max")
        if _rank(self.mid_pair_max, "mid_pair_max") >= 11:
            raise HouseWayError("mid_pair_max must be below K")
        with_ = self.full_house_keep_with
        if not (isinstance(with_, str) and len(with_) == 2):
            raise HouseWayError(f"full_house_keep_with must be two ranks such as 'AK', not {with_!r}")
        _rank(with_[0], "full_house_keep_with")
        _rank(with_[1], "full_house_keep_with")
        if not isinstance(self.two_pair, dict) or set(self.two_pair) != set(_TWO_PAIR_KEYS):
            raise HouseWayError(f"two_pair must give exactly {', '.join(_TWO_PAIR_KEYS)}")
        for key, value in self.two_pair.items():
            if value not in ("split", "keep"):
                _rank(value, f"two_pair.{key}")
        bad = [s for s in self.straights_with if s not in STRUCTURES]
        if bad or isinstance(self.straights_with, str):
            raise HouseWayError(f"straights_with: unknown structure(s) {bad or self.straights_with!r}; "
                                f"choose among {', '.join(STRUCTURES)}")
        for name in ("split_three_aces", "ace_joker_high_straight_as_pair"):
            if not isinstance(getattr(self, name), bool):
                raise HouseWayError(f"{name} must be true or false")

    # ---- numeric form used by set_hands ------------------------------------------------
    def _two_pair_thresholds(self) -> np.ndarray:
        """[4, 4] lowest singleton rank keeping two pair together, by (higher, lower) pair class."""
        def thr(key: str) -> int:
            v = self.two_pair[key]
            return 99 if v == "split" else (-1 if v == "keep" else _rank(v, key))
        t = np.full((4, 4), 99, dtype=np.int64)
        t[0, 0] = thr("low_low")
        t[1, 0] = thr("low_mid")
        t[2, 0] = thr("low_high")
        t[1, 1] = thr("mid_mid")
        t[2, 1] = thr("mid_high")
        t[2, 2] = thr("high_high")
        t[3, :] = thr("aces")
        return t


def _rank(text: Any, what: str, none_ok: bool = False) -> int:
    if none_ok and text == "none":
        return 99
    if not isinstance(text, str) or text.upper() not in RANKS:
        raise HouseWayError(f"{what} must be a rank ({' '.join(RANKS)}){' or none' if none_ok else ''}, not {text!r}")
    return RANKS.index(text.upper())


DEFAULT = HouseWay(
    name="default",
    source="Bally's Atlantic City house way (wizardofodds.com/games/pai-gow-poker/house-way/ballys-atlantic-city), "
           "quads and five aces per the Gold Star School of Gaming house way (goldstarschool.com/house-ways)",
)
BUILTIN: dict[str, HouseWay] = {
    "default": DEFAULT,
    "ballys_atlantic_city": replace(DEFAULT, name="ballys_atlantic_city"),
}
"""Built-in house ways by name."""


def load_house_way(spec: dict | str | HouseWay) -> HouseWay:
    """A built-in house way by name, or one from a dict (a TOML table).

    A dict may name ``base`` (a built-in, default ``"default"``) and override any field
    of :class:`HouseWay`; ``two_pair`` may give only the combinations it changes.
    """
    if isinstance(spec, HouseWay):
        return spec
    if isinstance(spec, str):
        if spec not in BUILTIN:
            raise HouseWayError(f"unknown house way {spec!r}; built-in: {', '.join(BUILTIN)}")
        return BUILTIN[spec]
    if not isinstance(spec, dict):
        raise HouseWayError(f"a house way is a name or a table, not {type(spec).__name__}")
    body = dict(spec)
    base = load_house_way(body.pop("base", "default"))
    known = {f.name for f in fields(HouseWay)}
    unknown = sorted(set(body) - known)
    if unknown:
        raise HouseWayError(f"unknown house way setting(s): {', '.join(unknown)}")
    if "two_pair" in body:
        tp = body["two_pair"]
        if not isinstance(tp, dict):
            raise HouseWayError("two_pair must be a table")
        extra = sorted(set(tp) - set(_TWO_PAIR_KEYS))
        if extra:
            raise HouseWayError(f"unknown two_pair combination(s): {', '.join(extra)}")
        body["two_pair"] = {**base.two_pair, **tp}
    if "straights_with" in body:
        sw = body["straights_with"]
        if not isinstance(sw, (list, tuple)):
            raise HouseWayError("straights_with must be a list of structures")
        body["straights_with"] = tuple(sw)
    body.setdefault("name", "custom")
    body.setdefault("source", "licensee configuration")
    return replace(base, **body)


# ---- vectorized setting ----------------------------------------------------------------------
_LOW = np.array(list(combinations(range(7), 2)), dtype=np.intp)                  # [21, 2]
_KEEP = np.array([[p for p in range(7) if p not in pair] for pair in _LOW], dtype=np.intp)  # [21, 5]
_RANK32 = RANK.astype(np.int32)
_SUIT32 = SUIT.astype(np.int32)
# Straight windows over ranks (bit 12 = ace): A-2-3-4-5, then 2-6 .. T-A.
_WINDOWS = np.array([(1 << 12) | 0b1111] + [0b11111 << lo for lo in range(9)], dtype=np.int64)


def _nth(mask: np.ndarray, k: int) -> np.ndarray:
    """Rank of the k-th highest (1-based) True column of a [n, 13] mask, -1 where there is none."""
    rev = mask[:, ::-1]
    cs = np.cumsum(rev, axis=1)
    hit = rev & (cs == k)
    return np.where(hit.any(axis=1), 12 - hit.argmax(axis=1), -1)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


def _straight_or_flush_possible(r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """bool [n]: some five of the seven cards make a straight or a flush (joker completing either)."""
    joker = (r == JOKER_RANK).any(axis=1)
    real = (r >= 0) & (r < JOKER_RANK)
    bits = np.bitwise_or.reduce(np.where(real, np.left_shift(1, np.where(real, r, 0)), 0), axis=1).astype(np.int64)
    need = 5 - joker.astype(np.int64)
    straight = (_popcount(bits[:, None] & _WINDOWS[None, :]) >= need[:, None]).any(axis=1)
    suit_counts = np.stack([(s == k).sum(axis=1) for k in range(4)], axis=1)
    flush = suit_counts.max(axis=1) >= need
    return straight | flush


def _structure(cnt: np.ndarray) -> tuple[np.ndarray, ...]:
    n5 = cnt.max(axis=1) == 5
    n4 = (cnt == 4).sum(axis=1)
    n3 = (cnt == 3).sum(axis=1)
    n2 = (cnt == 2).sum(axis=1)
    kind = np.select(
        [n5, n4 >= 1, n3 == 2, (n3 == 1) & (n2 >= 1), n3 == 1, n2 == 3, n2 == 2, n2 == 1],
        [8, 7, 6, 5, 4, 3, 2, 1], 0)
    # kind indexes STRUCTURES: no_pair 0, one_pair 1, two_pair 2, three_pair 3, trips 4,
    # full_house 5, two_trips 6, quads 7, five_aces 8
    return kind, n2


def _target_low(r12: np.ndarray, way: HouseWay) -> tuple[np.ndarray, np.ndarray]:
    """The two-card score the house way plays in front, from the rank pattern alone; and the structure."""
    cnt = (r12[:, :, None] == np.arange(13)[None, None, :]).sum(axis=1)
    kind, n2 = _structure(cnt)
    single, pair, trip = cnt == 1, cnt == 2, cnt == 3
    s1, s2, s3 = _nth(single, 1), _nth(single, 2), _nth(single, 3)
    p1, p2 = _nth(pair, 1), _nth(pair, 2)
    t1 = _nth(trip, 1)
    q = _nth(cnt == 4, 1)
    ace_pair = rank2_from_ranks(np.full_like(s1, ACE), np.full_like(s1, ACE))
    front_singles = rank2_from_ranks(s1, s2)

    # five aces
    five = np.where((n2 == 1) & (p1 >= _rank(way.five_aces_keep_with_pair, "", True)),
                    rank2_from_ranks(p1, p1), ace_pair)
    # four of a kind (with trips, a pair, or three singletons)
    quads_keep = (q <= _rank(way.quads_keep_max, "")) | ((q <= _rank(way.quads_keep_with_ace_max, "")) & (s1 == ACE))
    quads = np.select([t1 >= 0, p1 >= 0, quads_keep], [rank2_from_ranks(t1, t1), rank2_from_ranks(p1, p1),
                                                     front_singles], rank2_from_ranks(q, q))
    # two trips: a pair of the higher trips in front
    two_trips = rank2_from_ranks(t1, t1)
    # full house (with another pair: the highest pair in front)
    fh_with = way.full_house_keep_with
    fh_keep = ((n2 == 1) & (p1 <= _rank(way.full_house_keep_pair_max, "", True))
               & (s1 >= _rank(fh_with[0], "")) & (s2 >= _rank(fh_with[1], "")))
    full_house = np.where(fh_keep, front_singles, rank2_from_ranks(p1, p1))
    # trips
    trips = np.where((t1 == ACE) & way.split_three_aces, rank2_from_ranks(t1, s1), front_singles)
    # two pair
    low_max, mid_max = _rank(way.low_pair_max, ""), _rank(way.mid_pair_max, "")

    def klass(p: np.ndarray) -> np.ndarray:
        return np.select([p <= low_max, p <= mid_max, p < ACE], [0, 1, 2], 3)
    thr = way._two_pair_thresholds()[klass(p1), klass(p2)]
    two_pair = np.where(s1 >= thr, front_singles, rank2_from_ranks(p2, p2))
    by_kind = np.stack([rank2_from_ranks(s2, s3), front_singles, two_pair, rank2_from_ranks(p1, p1), trips,
                        full_house, two_trips, quads, five], axis=1)
    return np.take_along_axis(by_kind, kind[:, None], axis=1)[:, 0], kind


def set_hands(cards: np.ndarray, way: HouseWay = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    """Set seven cards per row (int8 [n, 7]) the house way: (high int8 [n, 5], low int8 [n, 2]).

    Each output is sorted high to low by card code. Among settings of equal value the one
    using the highest card codes in the five-card hand is chosen, whatever the input
    order; compare settings with :func:`same_setting` to ignore suits that do not matter.
    Rows that are not seven valid cards give -1 rows.
    """
    c = np.asarray(cards)
    if c.ndim != 2 or c.shape[1] != 7:
        raise ValueError(f"set_hands expects an [n, 7] card matrix, got shape {c.shape}")
    way = load_house_way(way)
    c = c.astype(np.int32)
    bad = ((c < 0) | (c > 52)).any(axis=1)
    c = np.where(bad[:, None], 0, c)
    c = -np.sort(-c, axis=1)  # high to low: joker, aces, kings, ...
    r = _RANK32[c]
    s = _SUIT32[c]
    r12 = np.minimum(r, ACE)
    n = len(c)

    target, kind = _target_low(r12, way)
    lo = rank2_from_ranks(r12[:, _LOW[:, 0]], r12[:, _LOW[:, 1]])               # [n, 21]
    key = np.where(lo == target[:, None], 0, -1).astype(np.int64)

    # Hands holding a straight or flush: score the 21 five-card hands.
    rows = np.flatnonzero(_straight_or_flush_possible(r, s) & ~bad)
    if len(rows):
        rr, ss = r[rows][:, _KEEP], s[rows][:, _KEEP]                          # [m, 21, 5]
        hi = _lookup(pattern_index(rr, ss))                                       # [m, 21]
        cat = hi >> 20
        sf = (cat == STRAIGHT) | (cat == FLUSH) | (cat == STRAIGHT_FLUSH)
        if way.ace_joker_high_straight_as_pair:
            ace_joker = (rr == JOKER_RANK).any(axis=2) & (rr == ACE).any(axis=2)
            sf &= ~((cat == STRAIGHT) & (((hi >> 16) & 0xF) == 13) & ace_joker)
        applies = np.isin(kind[rows], [STRUCTURES.index(x) for x in way.straights_with])
        use_sf = applies & sf.any(axis=1)
        sub = np.where(lo[rows] == target[rows, None], hi, -1)
        sub = np.where(use_sf[:, None], np.where(sf, (lo[rows] << 24) | hi, -1), sub)
        key[rows] = sub
    choice = key.argmax(axis=1)
    high = np.take_along_axis(c, _KEEP[choice], axis=1).astype(np.int8)
    low = np.take_along_axis(c, _LOW[choice], axis=1).astype(np.int8)
    high[bad] = -1
    low[bad] = -1
    if n and (key.max(axis=1)[~bad] < 0).any():  # pragma: no cover - a gap in the rules above
        raise AssertionError("house way found no setting for some hands")
    return high, low


def same_setting(high_a: np.ndarray, low_a: np.ndarray, high_b: np.ndarray, low_b: np.ndarray) -> np.ndarray:
    """bool [n]: two settings of the same seven cards have equal value (suits that change nothing ignored)."""
    return (rank5(high_a) == rank5(high_b)) & (rank2(low_a) == rank2(low_b))


def describe(high: np.ndarray, low: np.ndarray) -> str:
    """``"Ks 8c 5s 3s 2c / Qh 9c"`` for one setting."""
    return f"{cards_str(high)} / {cards_str(low)}"
