"""Honest three card poker simulator with labelled injected faults (68 IAC 10-11-6).

Each round is dealt from its own shuffled 52-card deck (all rounds at once: an
argsort of random keys per round), to 1-6 seats. Patrons play Q-6-4 or better
and fold the rest, some bet pair plus, and every wager is settled under the
default paytable (ante and play 1:1, ante bonus 5/4/1, pair plus 40/30/6/3/1).
A few rounds are void (every net 0).

With ``fault_rate`` > 0, that share of rounds gets exactly one fault, labelled
with the citation a correct auditor reports, and *pure*: it breaks that rule
and no other (a card-changing fault deals new cards first and then settles
them correctly; a settlement fault changes the nets of a correctly settled
round). The labels are ``FAULTS`` below.
"""

from __future__ import annotations

from datetime import date as _date

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...paytables import Config
from ...schema import schema_for, table_of
from .hands import FLUSH, STRAIGHT, evaluate, high_card_score
from .paytable import ante_and_play_nets, ante_bonus_odds, dealer_qualifies, pair_plus_odds
from .schema import HAND as TCP_HAND

__all__ = ["simulate", "FAULTS", "CITATIONS", "PLAY_THRESHOLD"]

GAME = "three_card_poker"
SECTION = "68 IAC 10-11-6"
SUBSECTIONS = ("a", "a1", "a2", "b", "c1", "c2", "c3", "c4", "d1", "d2", "d3", "d")
FAULTS = (*SUBSECTIONS, "paytable", "void", "integrity")
"""Fault labels, one per catalog citation."""
CITATIONS = {**{f: f"{SECTION}({f[0]})" + (f"({f[1]})" if len(f) > 1 else "") for f in SUBSECTIONS},
             "paytable": "paytable", "void": "void", "integrity": "integrity"}

ANTES = np.array([5, 10, 15, 20, 25, 37.5, 50, 100], dtype=np.float64)
PAIR_PLUS_BETS = np.array([5, 10, 25], dtype=np.float64)
PLAY_THRESHOLD = high_card_score(10, 4, 2)
"""Patrons play Q-6-4 or better."""
OPEN_SECONDS = 16 * 3600       # tables deal from 10:00 to 02:00 local
OPEN_AT = 10 * 3600
UTC_OFFSET = -300              # minutes: -05:00
_F = {f: i for i, f in enumerate(FAULTS)}


def _deal(rng: np.random.Generator, n: int, width: int = 21, chunk: int = 100_000) -> np.ndarray:
    """The first ``width`` cards of an independently shuffled deck per round (int8)."""
    out = np.empty((n, width), dtype=np.int8)
    for lo in range(0, n, chunk):  # chunks of rounds, to bound the memory of the sort
        hi = min(n, lo + chunk)
        keys = rng.random((hi - lo, 52), dtype=np.float32)
        out[lo:hi] = np.argpartition(keys, width, axis=1)[:, :width]
    return out


def _pick_per_round(rng: np.random.Generator, hand_round: np.ndarray, eligible: np.ndarray, n: int) -> np.ndarray:
    """One random eligible hand per round (index into the hands), -1 where none is eligible."""
    key = np.where(eligible, rng.random(len(hand_round)) + 1.0, 0.0)
    order = np.lexsort((key, hand_round))
    last = np.full(n, -1, dtype=np.int64)
    last[hand_round[order]] = order  # the last write per round is its largest key
    ok = last >= 0
    ok[ok] = eligible[last[ok]]
    return np.where(ok, last, -1)


def _construct(rng: np.random.Generator, kind: str, used: set[int], dealer: np.ndarray) -> list[int] | None:
    """Three unused cards making the hand ``kind`` wants (d1/d2/d3 or, for c4, a tie with the dealer)."""
    for _ in range(40):
        if kind == "c4":
            shift = int(rng.integers(1, 4))
            cards = [int(c) // 4 * 4 + (int(c) % 4 + shift) % 4 for c in dealer]
        elif kind == "d2":
            rank = int(rng.integers(13))
            suits = rng.permutation(4)[:3]
            cards = [rank * 4 + int(s) for s in suits]
        else:
            low = int(rng.integers(-1, 11))  # -1: A-2-3
            ranks = [12 if low == -1 else low, low + 1, low + 2]
            if kind == "d1":
                s = int(rng.integers(4))
                suits = [s, s, s]
            else:
                suits = [int(x) for x in rng.integers(0, 4, 3)]
                if len(set(suits)) == 1:
                    continue
            cards = [r * 4 + s for r, s in zip(ranks, suits, strict=True)]
        if not used.intersection(cards) and len(set(cards)) == 3:
            return cards
    return None


def _settle(ante: np.ndarray, played: np.ndarray, qual: np.ndarray, cmp: np.ndarray) -> tuple[np.ndarray, ...]:
    """Play bets and the ante and play nets of each hand at 1:1 under (c) (folded hands lose the ante)."""
    play = np.where(played, ante, 0.0)
    net_ante, net_play = ante_and_play_nets(ante, play, qual, cmp > 0, cmp < 0)
    return play, np.where(played, net_ante, -ante), np.where(played, net_play, 0.0)


def simulate(n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, tables: int = 3,
             start: str = "2025-06-01", void_rate: float = 0.002) -> tuple[pa.Table, pd.DataFrame]:
    """``n_rounds`` rounds in the stored schema and the truth frame ``[round_id, citation]`` of injected faults."""
    rng = np.random.default_rng(seed)
    n = int(n_rounds)
    # ---- seats and cards ----------------------------------------------------------------------
    occupied = rng.random((n, 6)) < 0.55
    empty = np.flatnonzero(~occupied.any(axis=1))
    occupied[empty, rng.integers(0, 6, len(empty))] = True
    hand_round, seat_index = np.nonzero(occupied)  # by round, then seat
    per_round = occupied.sum(axis=1)
    starts = np.cumsum(per_round) - per_round
    pos = np.arange(len(hand_round)) - starts[hand_round]
    deck = _deal(rng, n)
    dealer = deck[:, :3].copy()
    cards = deck[hand_round[:, None], 3 + 3 * pos[:, None] + np.arange(3)[None, :]]
    seat = seat_index.astype(np.int32) + 1
    h = len(hand_round)
    ante = rng.choice(ANTES, h)
    has_pp = rng.random(h) < 0.35
    pair_plus = np.where(has_pp, rng.choice(PAIR_PLUS_BETS, h), 0.0)
    void = rng.random(n) < void_rate

    # ---- choose the faults ------------------------------------------------------------------------
    _, score = evaluate(cards)
    _, d_score = evaluate(dealer)
    dq = dealer_qualifies(d_score)
    cmp = np.sign(score.astype(np.int64) - d_score[hand_round])
    faulty = (rng.random(n) < fault_rate) & ~void
    eligible = np.ones((n, len(FAULTS)), dtype=bool)
    eligible[:, _F["c1"]] = ~dq
    eligible[:, _F["c2"]] = dq & (np.bincount(hand_round[cmp < 0], minlength=n) > 0)
    eligible[:, _F["c3"]] = dq & (np.bincount(hand_round[cmp > 0], minlength=n) > 0)
    eligible[:, _F["c4"]] = dq
    # each faulty round draws one of the kinds it is eligible for, the rarer kinds weighted up so that every
    # kind is about as frequent (exponential race: the least key wins, keys scaled by each kind's share)
    share = np.maximum(eligible.mean(axis=0), 1e-9)
    keys = np.where(eligible, rng.exponential(size=(n, len(FAULTS))) * share, np.inf)
    kind = np.where(faulty, np.argmin(keys, axis=1), -1)
    h_kind = kind[hand_round]
    target_ok = np.select([h_kind == _F["c2"], h_kind == _F["c3"]], [cmp < 0, cmp > 0], True)
    target = _pick_per_round(rng, hand_round, target_ok & (h_kind >= 0), n)

    # card-changing faults: new hands dealt from the unused cards, settled correctly afterwards
    for r in np.flatnonzero(np.isin(kind, [_F["d1"], _F["d2"], _F["d3"], _F["c4"]])):  # faulty rounds only
        t = int(target[r])
        others = cards[starts[r]:starts[r] + per_round[r]]
        used = {int(c) for c in dealer[r]} | {int(c) for c in np.delete(others, t - starts[r], axis=0).ravel()}
        new = _construct(rng, FAULTS[kind[r]], used, dealer[r])
        if new is None:
            kind[r] = _F["a"]
        else:
            cards[t] = new
    h_kind = kind[hand_round]
    is_t = np.zeros(h, dtype=bool)
    is_t[target[target >= 0]] = True
    t_kind = np.where(is_t, h_kind, -1)
    integrity_variant = rng.random(h) < 0.8  # duplicate card (else a joker)
    dup = (t_kind == _F["integrity"]) & integrity_variant
    dup_pos = rng.integers(0, 3, h)
    cards[np.flatnonzero(dup), dup_pos[dup]] = dealer[hand_round[dup], rng.integers(0, 3, int(dup.sum()))]

    # ---- play and settle correctly -------------------------------------------------------------------
    category, score = evaluate(cards)
    cmp = np.sign(score.astype(np.int64) - d_score[hand_round])
    played = score >= PLAY_THRESHOLD
    force_play = np.isin(t_kind, [_F[k] for k in ("a2", "b", "c1", "c2", "c3", "c4", "d1", "d2", "d3")])
    bonus_hand = (category >= STRAIGHT) & (category != FLUSH)
    force_fold = (t_kind == _F["a1"]) | ((t_kind == _F["d"]) & bonus_hand)
    pay_variant = rng.integers(0, 2, h)  # paytable: 0 pair plus, 1 ante overpaid
    ante_wins = ~dq[hand_round] | (cmp > 0)
    pay_variant = np.where((pay_variant == 1) & ~ante_wins, 0, pay_variant)
    force_play |= (t_kind == _F["paytable"]) & (pay_variant == 1)
    played = (played | force_play) & ~force_fold
    void_pay = t_kind == _F["void"]  # a lost ante in a void round
    void[hand_round[void_pay]] = True
    h_void = void[hand_round]

    play, net_ante, net_play = _settle(ante, played, dq[hand_round], cmp)
    bonus = np.zeros(h)
    pp_rate = np.zeros(h)
    paytable = Config().section(GAME)
    for cat, rate in ante_bonus_odds(paytable).items():
        bonus[played & (category == cat)] = rate
    for cat, rate in pair_plus_odds(paytable).items():
        pp_rate[category == cat] = rate
    bonus *= ante
    net_pp = np.where(pp_rate > 0, pair_plus * pp_rate, -pair_plus)
    for arr in (net_ante, net_play, bonus, net_pp):
        arr[h_void] = 0.0

    # ---- settlement faults ------------------------------------------------------------------------------
    def at(label: str) -> np.ndarray:
        return t_kind == _F[label]

    m = at("a")
    ante[m], play[m], net_ante[m], net_play[m], bonus[m] = 0.0, 0.0, 0.0, 0.0, 0.0
    m = at("a1") & integrity_variant  # reuse a coin: ante returned, or a play bet on the folded hand
    net_ante[m] = 0.0
    m = at("a1") & ~integrity_variant
    play[m] = ante[m]
    m = at("a2")
    play[m] *= 2
    net_play[m] *= 2
    b_hands = (kind[hand_round] == _F["b"]) & played
    opp_qual = ~dq[hand_round]
    _, opp_ante, opp_play = _settle(ante, played, opp_qual, cmp)
    net_ante[b_hands], net_play[b_hands] = opp_ante[b_hands], opp_play[b_hands]
    m = at("c1")
    net_ante[m] = ante[m] / 2
    m = at("c2")
    net_ante[m], net_play[m] = 0.0, 0.0
    m = at("c3")
    net_ante[m], net_play[m] = ante[m] / 2, play[m] / 2
    m = at("c4")
    net_ante[m], net_play[m] = -ante[m], -play[m]
    m = at("d1") | at("d2") | at("d3")
    bonus[m] = 0.0
    m = at("d")
    bonus[m] = ante[m]
    m = at("paytable") & (pay_variant == 0)
    has_pp |= m
    pair_plus[m & (pair_plus == 0)] = 5.0
    net_pp[m] = np.where(pp_rate[m] > 0, pair_plus[m] * (pp_rate[m] + 1), 0.0)
    m = at("paytable") & (pay_variant == 1)
    net_ante[m] = 2 * ante[m]
    m = void_pay
    net_ante[m] = -ante[m]
    joker = (t_kind == _F["integrity"]) & ~integrity_variant
    cards[np.flatnonzero(joker), dup_pos[joker]] = 52

    table = _table(n, seed, tables, start, void, dealer, hand_round, per_round, seat, cards, played, ante, play,
                   np.where(has_pp, pair_plus, np.nan), net_ante, net_play, bonus,
                   np.where(has_pp, net_pp, np.nan), rng)
    bad = np.flatnonzero(kind >= 0)
    truth = pd.DataFrame({
        "round_id": table["round_id"].to_numpy(zero_copy_only=False)[bad] if len(bad) else np.empty(0, object),
        "citation": [CITATIONS[FAULTS[k]] for k in kind[bad]],
    })
    return table, truth


def _table(n: int, seed: int, tables: int, start: str, void: np.ndarray, dealer: np.ndarray,
           hand_round: np.ndarray, per_round: np.ndarray, seat: np.ndarray, cards: np.ndarray,
           played: np.ndarray, ante: np.ndarray, play: np.ndarray, pair_plus: np.ndarray,
           net_ante: np.ndarray, net_play: np.ndarray, bonus: np.ndarray, net_pp: np.ndarray,
           rng: np.random.Generator) -> pa.Table:
    """The stored Arrow table, built column by column (no loop per round)."""
    # timestamps: tables deal round-robin, 45-110 s a round, from 10:00 to 02:00 local each day
    table_no = np.arange(n) % tables
    gaps = rng.integers(45, 111, n)
    rows = -(-n // tables)
    padded = np.zeros(rows * tables, dtype=np.int64)
    padded[:n] = gaps
    open_s = (np.cumsum(padded.reshape(rows, tables), axis=0) - padded.reshape(rows, tables)).ravel()[:n]
    open_s += table_no * 17  # tables do not start in lockstep
    day = open_s // OPEN_SECONDS
    local_s = day * 86_400 + OPEN_AT + open_s % OPEN_SECONDS
    epoch = (np.datetime64(_date.fromisoformat(start)) - np.datetime64("1970-01-01")).astype("timedelta64[s]")
    utc_us = (epoch.astype(np.int64) + local_s - UTC_OFFSET * 60) * 1_000_000
    started_at = pa.array(utc_us, pa.timestamp("us", tz="UTC"))
    local_day = pc.strftime(pa.array(utc_us + UTC_OFFSET * 60_000_000, pa.timestamp("us")), format="%Y%m%d")
    seq = pc.utf8_lpad(pc.cast(pa.array(np.arange(1, n + 1)), pa.string()), 8, "0")
    round_id = pc.binary_join_element_wise("TCP", local_day, f"s{seed}", seq, "-")
    names = pa.array([f"TCP-{k + 1:02d}" for k in range(tables)])
    shift = (open_s % OPEN_SECONDS) // (4 * 3600)
    dealer_id = pc.binary_join_element_wise(
        "D", pc.cast(pa.array(1000 + 10 * table_no + shift), pa.string()), "")

    def cards_list(matrix: np.ndarray) -> pa.Array:
        offsets = pa.array(np.arange(0, 3 * len(matrix) + 1, 3, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel(), pa.int8()))

    decision = pc.take(pa.array(["fold", "play"]), pa.array(played.astype(np.int8)))
    hands = pa.StructArray.from_arrays(
        [pa.array(seat, pa.int32()), cards_list(cards), decision, pa.array(ante), pa.array(play),
         pa.array(pair_plus, from_pandas=True), pa.array(net_ante), pa.array(net_play), pa.array(bonus),
         pa.array(net_pp, from_pandas=True)],
        fields=list(TCP_HAND))
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(per_round, out=offsets[1:])
    schema = schema_for(GAME)
    columns = {
        "round_id": round_id, "table_id": pc.take(names, pa.array(table_no)), "dealer_id": dealer_id,
        "started_at": started_at, "utc_offset": pa.array(np.full(n, UTC_OFFSET, np.int16)),
        "shoe_id": pa.nulls(n, pa.string()), "round_seq": pa.nulls(n, pa.int32()),
        "status": pc.take(pa.array(["completed", "void"]), pa.array(void.astype(np.int8))),
        "wagers": pa.nulls(n, schema.field("wagers").type), "events": pa.nulls(n, schema.field("events").type),
        "source_file": pa.array(np.full(n, f"<simulated seed={seed}>", dtype=object), pa.string()),
        "source_line": pa.array(np.arange(1, n + 1, dtype=np.int64)),
        "dealer_cards": cards_list(dealer),
        "hands": pa.ListArray.from_arrays(pa.array(offsets), hands),
    }
    return table_of(columns, schema, n)
