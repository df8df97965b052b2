"""Pai gow poker house ways: how the dealer sets seven cards into a five-card and a two-card hand.

A house way is data (:class:`HouseWay`), loaded from a built-in name or from a TOML
table of the licensee's configuration; nothing in it is executed. ``DEFAULT`` is the
Bally's Atlantic City house way as published by the Wizard of Odds, completed for the
hands that page does not show (four of a kind, five aces, the full house exception) by
the standard house way of the Gold Star School of Gaming; docs/house_way.md states every
rule and its source.

:func:`set_hands` is vectorized: the seven cards are sorted, their ranks (the joker as
a fourteenth rank) hashed to one of C(20, 7) rank patterns whose house-way front hand is
tabulated once per house way, and only hands holding a straight or flush have their 21
possible settings scored with the five-card tables. No Python loop runs per hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from itertools import combinations_with_replacement
from math import comb
from typing import Any

import numpy as np

from ...cards import RANK, RANKS, SUIT
from .deal import SETTING_HIGH, SETTING_LOW
from .hands import (
    ACE,
    BASE,
    FLUSH,
    JOKER_RANK,
    PLANE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    rank2,
    rank2_from_ranks,
    rank5,
    score_table,
    sort_columns_desc,
)

__all__ = ["HouseWay", "HouseWayError", "DEFAULT", "BUILTIN", "STRUCTURES", "load_house_way", "set_hands",
           "same_setting"]

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
_LOW, _KEEP = SETTING_LOW, SETTING_HIGH  # the 21 settings: positions of the two-card and five-card hands
_RANK16 = RANK.astype(np.int16)
_SUIT16 = SUIT.astype(np.int16)
# Straight windows over rank bits (bit 12 = ace): A-2-3-4-5, then 2-6 .. T-A.
_WINDOWS = np.array([(1 << 12) | 0b1111] + [0b11111 << lo for lo in range(9)], dtype=np.int64)
_R2 = rank2_from_ranks(np.repeat(np.arange(14), 14), np.tile(np.arange(14), 14))
"""Two-card score by ``rank_a * 14 + rank_b`` (joker 13 = ace)."""
_W = (BASE**4, BASE**3, BASE**2, BASE, 1)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


def _front_slot(g: np.ndarray, way: HouseWay) -> tuple[np.ndarray, np.ndarray]:
    """First of the two consecutive group-order slots the house way plays in front, and the structure.

    ``g`` holds ``count << 4 | rank`` of the seven cards in group order (count, then rank,
    high to low; the joker counted as an ace), e.g. two pair ``[p1 p1 p2 p2 s1 s2 s3]``.
    The structure indexes :data:`STRUCTURES`.
    """
    G, R = g >> 4, g & 15
    three_pair = (G[:, 0] == 2) & (G[:, 4] == 2)
    kind = np.select(
        [G[:, 0] == 5, G[:, 0] == 4, (G[:, 0] == 3) & (G[:, 3] == 3), (G[:, 0] == 3) & (G[:, 3] == 2),
         G[:, 0] == 3, three_pair, (G[:, 0] == 2) & (G[:, 2] == 2), G[:, 0] == 2],
        [8, 7, 6, 5, 4, 3, 2, 1], 0)
    low_max, mid_max = _rank(way.low_pair_max, ""), _rank(way.mid_pair_max, "")

    def klass(p: np.ndarray) -> np.ndarray:
        return np.select([p <= low_max, p <= mid_max, p < ACE], [0, 1, 2], 3)
    # two pair [p1 p1 p2 p2 s1 s2 s3]: keep together (s1 s2 in front) or split (p2 in front)
    keep_two = R[:, 4] >= way._two_pair_thresholds()[klass(R[:, 0]), klass(R[:, 2])]
    # trips [t t t s1 s2 s3 s4]: s1 s2 in front, or one ace and s1 when splitting three aces
    split_aces = (R[:, 0] == ACE) & way.split_three_aces
    # full house [t t t p p s1 s2]: the pair in front, or s1 s2 under the keep exception
    fh_with = way.full_house_keep_with
    keep_full = ((G[:, 5] == 1) & (R[:, 3] <= _rank(way.full_house_keep_pair_max, "", True))
                 & (R[:, 5] >= _rank(fh_with[0], "")) & (R[:, 6] >= _rank(fh_with[1], "")))
    # quads [q q q q x y z]: trips' pair, the pair, or s1 s2 in front; split: a pair of the quads
    keep_quads = ((G[:, 4] >= 2) | (R[:, 0] <= _rank(way.quads_keep_max, ""))
                  | ((R[:, 0] <= _rank(way.quads_keep_with_ace_max, "")) & (R[:, 4] == ACE)))
    # five aces [A A A A A x y]: two aces in front, or the pair x y
    keep_five = (G[:, 5] == 2) & (R[:, 5] >= _rank(way.five_aces_keep_with_pair, "", True))
    slot = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3, kind == 4, kind == 5, kind == 6, kind == 7],
        [1, 2, np.where(keep_two, 4, 2), 0, np.where(split_aces, 2, 3), np.where(keep_full, 5, 3), 0,
         np.where(keep_quads, 4, 0)],
        np.where(keep_five, 5, 0))
    return slot, kind


_KEEP_W = np.zeros((7, 21))
_KEEP_W[_KEEP, np.arange(21)[:, None]] = _W
"""Base-14 weight of each sorted position in the five-card hand of each of the 21 settings (0: in front)."""
_LOW_W = np.zeros((7, 21))
_LOW_W[_LOW[:, 0], np.arange(21)] = 14
_LOW_W[_LOW[:, 1], np.arange(21)] += 1
_SETTINGS_W = np.zeros((14, 63), dtype=np.float32)
_SETTINGS_W[:7, :21] = _KEEP_W           # ranks -> base-14 index of the five-card hand
_SETTINGS_W[7:, 21:42] = _KEEP_W > 0     # base-8 suit counts -> those of the five-card hand
_SETTINGS_W[:7, 42:] = _LOW_W            # ranks -> index of the two-card hand in _R2
"""One matrix product gives the indexes of all 21 settings; every value is an integer below 2**20,
exact in float32."""
_POW8 = np.array([1, 8, 64, 512, 0], dtype=np.float32)  # by suit 0..3, -1 (the joker) -> 0
_SUITED = np.array([sum(((k >> (3 * j)) & 7) > 0 for j in range(4)) <= 1 for k in range(8**4)])
"""By base-8 suit counts, whether the real cards share one suit (or there are none)."""


def _candidates(r: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the 21 settings of sorted seven-card rows: five-card [m, 21] and two-card [m, 21]."""
    x = np.empty((len(r), 14), dtype=np.float32)
    x[:, :7] = r
    x[:, 7:] = _POW8.take(s)
    y = np.einsum("ij,jk->ik", x, _SETTINGS_W).astype(np.int32)  # not BLAS: its threads spin on a busy machine
    idx = y[:, :21] + _SUITED.take(y[:, 21:42]).astype(np.int32) * PLANE
    return score_table().take(idx).astype(np.int64), _R2.take(y[:, 42:])


# Perfect hash of seven ranks sorted low to high (a_0 <= .. <= a_6, joker 13): the combination
# b_i = a_i + i of 0..19 indexes C(20, 7) patterns, sum of C(b_i, i + 1) (combinatorial number system).
_CNS = np.array([[comb(v + i, i + 1) for v in range(14)] for i in range(7)], dtype=np.int32)
_N_PATTERNS = comb(20, 7)
_SUIT_COUNT = np.array([[(k >> (3 * j)) & 7 for j in range(4)] for k in range(8**4)]).max(axis=1)
_FLUSH = np.stack([_SUIT_COUNT >= 5, _SUIT_COUNT >= 4])               # [joker?, suit key]: a flush is possible
_PATTERNS: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _pattern_hash(r_desc: np.ndarray) -> np.ndarray:
    """Index in 0..C(20, 7) of rows of seven ranks sorted high to low (joker 13)."""
    return _CNS[np.arange(7)[None, :], r_desc[:, ::-1]].sum(axis=1)


def _pattern_table(way: HouseWay) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """By pattern hash, for every multiset of seven ranks (joker 13): front setting index (-1 for none), structure, straight possible.

    The house way of a hand without a straight or flush depends on its ranks alone; the
    ~50,000 patterns are set once per house way, vectorized.
    """
    key = repr(way)
    if key not in _PATTERNS:
        pats = np.array([p for p in combinations_with_replacement(range(13, -1, -1), 7)
                         if p.count(13) <= 1 and max(p.count(x) for x in range(13)) <= 4], dtype=np.int16)
        r12 = np.minimum(pats, ACE)
        count = (r12[:, :, None] == r12[:, None, :]).sum(axis=2, dtype=np.int16)
        gkey = count * 16 + r12
        order = np.argsort(-gkey, axis=1, kind="stable")
        slot, kind = _front_slot(np.take_along_axis(gkey, order, axis=1), way)
        m = np.arange(len(pats))
        p0, p1 = np.sort(np.stack([order[m, slot], order[m, slot + 1]], axis=1), axis=1).T
        front = _COMBO[p0, p1]
        joker = pats[:, 0] == JOKER_RANK
        real = np.where(pats == JOKER_RANK, 0, np.left_shift(1, r12.astype(np.int64)))
        bits = np.bitwise_or.reduce(real, axis=1)
        need = 5 - joker.astype(np.int64)
        straight = (_popcount(bits[:, None] & _WINDOWS[None, :]) >= need[:, None]).any(axis=1)
        at = _pattern_hash(pats)
        fronts = np.full(_N_PATTERNS, -1, dtype=np.int8)
        kinds = np.zeros(_N_PATTERNS, dtype=np.int8)
        straights = np.zeros(_N_PATTERNS, dtype=bool)
        fronts[at], kinds[at], straights[at] = front, kind, straight
        _PATTERNS[key] = (fronts, kinds, straights)
    return _PATTERNS[key]


_NET7 = ((0, 6), (2, 3), (4, 5), (0, 2), (1, 4), (3, 6), (0, 1), (2, 5), (3, 4), (1, 2), (4, 6), (2, 3), (4, 5),
         (1, 2), (3, 4), (5, 6))
"""A sorting network for seven values (16 compare-exchanges)."""


def _pick(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.where(cond, b, a)`` for int8 arrays, by bit masks (several times faster)."""
    return a ^ ((a ^ b) & -cond.view(np.int8))


def _invalid_rows(c: np.ndarray) -> np.ndarray:
    """Rows of a card matrix (any int dtype, read as int16) holding a code outside 0..52."""
    c16 = c.astype(np.int16)
    return ((c16 < 0) | (c16 > 52)).any(axis=1)


_LOW8 = _LOW.astype(np.int8)
_COMBO = np.full((7, 7), -1, dtype=np.int8)
_COMBO[_LOW[:, 0], _LOW[:, 1]] = np.arange(21)


def set_hands(cards: np.ndarray, way: HouseWay = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    """Set seven cards per row (int8 [n, 7]) the house way: (high int8 [n, 5], low int8 [n, 2]).

    Outputs are sorted high to low by card code. Where suits do not change the value,
    the choice is canonical (the same for any order of the input cards); compare
    settings with :func:`same_setting` to ignore such suits. Rows that are not seven
    valid cards (or hold five of a rank) give -1 rows.
    """
    c = np.asarray(cards)
    if c.ndim != 2 or c.shape[1] != 7:
        raise ValueError(f"set_hands expects an [n, 7] card matrix, got shape {c.shape}")
    way = load_house_way(way)
    fronts, kinds, straights = _pattern_table(way)
    if c.dtype != np.int8:
        bad = _invalid_rows(c)
        c = np.where(bad[:, None], np.int16(-1), c.astype(np.int16)).astype(np.int8)  # found bad again below
    # columns of the codes sorted high to low (joker, aces, kings, ...): rank code >> 2, suit code & 3
    cols = sort_columns_desc(list(np.ascontiguousarray(c.T)), _NET7)
    bad = (cols[0] > 52) | (cols[6] < 0)
    if bad.any():  # rows with an invalid code are set as if they held 2c 2d 2h 2s 3c 3d 3h, then cleared
        cols = [np.where(bad, np.int8(6 - k), x) for k, x in enumerate(cols)]
    r_cols = [x >> 2 for x in cols]

    # The rank pattern gives the house way's front hand (positions in this order).
    idx = _CNS[6].take(r_cols[0]).astype(np.int32)
    for i in range(6):
        idx += _CNS[i].take(r_cols[6 - i])
    front = fronts.take(idx).astype(np.intp)
    bad |= front < 0  # five cards of a rank, or two jokers
    kind = kinds.take(idx)

    # Hands holding a straight or flush: score the 21 settings and choose among them.
    joker = cols[0] == 52
    suit_key = -joker.astype(np.int16)  # base-8 count of each suit among the real cards (a joker is first)
    for x in cols:
        suit_key += np.left_shift(np.int16(1), 3 * (x & 3))
    flush = _FLUSH.ravel().take(joker * _FLUSH.shape[1] + suit_key)
    rows = np.flatnonzero((straights.take(idx) | flush) & ~bad)
    if len(rows):
        r = np.stack([x[rows] for x in r_cols], axis=1)
        s = np.stack([np.where(x[rows] == 52, -1, x[rows] & 3) for x in cols], axis=1)
        rr, ss = r.astype(np.int32), s.astype(np.int32)
        hi, lo = _candidates(rr, ss)
        cat = hi >> 20
        sf = (cat == STRAIGHT) | (cat == FLUSH) | (cat == STRAIGHT_FLUSH)
        if way.ace_joker_high_straight_as_pair:
            # the five-card hand holds the joker (first when present) and an ace (one not in front)
            aces_in_front = (rr[:, _LOW[:, 0]] == ACE).astype(np.int8) + (rr[:, _LOW[:, 1]] == ACE)
            ace_joker = ((rr[:, :1] == JOKER_RANK) & (_LOW[None, :, 0] != 0)
                         & ((rr == ACE).sum(axis=1, dtype=np.int8)[:, None] > aces_in_front))
            sf &= ~((cat == STRAIGHT) & (((hi >> 16) & 0xF) == 13) & ace_joker)
        applies = np.isin(kind[rows], [STRUCTURES.index(x) for x in way.straights_with])
        use_sf = applies & sf.any(axis=1)
        target = lo[np.arange(len(rows)), front[rows]]
        # the pattern's front hand, with the best five-card hand its suits allow ...
        key = np.where(lo == target[:, None], hi, -1)
        # ... or the straight / flush behind with the best front hand (then the best back)
        key = np.where(use_sf[:, None], np.where(sf, (lo << 24) | hi, -1), key)
        front[rows] = key.argmax(axis=1)
    # the front hand is positions p0 < p1 of the sorted cards, the five-card hand the others in order
    p0, p1 = _LOW8[:, 0].take(front), _LOW8[:, 1].take(front)
    at = np.arange(0, 7 * len(front), 7)
    c = np.stack(cols, axis=1).ravel()
    low = np.stack([c.take(at + p0), c.take(at + p1)], axis=1)
    high = np.stack([_pick(p1 <= j + 1, _pick(p0 <= j, cols[j], cols[j + 1]), cols[j + 2]) for j in range(5)], axis=1)
    high[bad] = -1
    low[bad] = -1
    return high, low


def same_setting(high_a: np.ndarray, low_a: np.ndarray, high_b: np.ndarray, low_b: np.ndarray) -> np.ndarray:
    """bool [n]: two settings of the same seven cards have equal value (suits that change nothing ignored)."""
    return (rank5(high_a) == rank5(high_b)) & (rank2(low_a) == rank2(low_b))
