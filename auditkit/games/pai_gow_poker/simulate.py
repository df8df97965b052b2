"""Simulated pai gow poker rounds (68 IAC 10-9-17) with labelled, pure faults.

Each round is dealt from a freshly shuffled 53-card deck: three dice give the
position of the first of seven stacks of seven cards (positions 1-7
counterclockwise from the dealer's), four cards are left over. Patrons sit at
some of positions 2-7 (seat = position - 1). The dealer sets the house way;
patrons mostly do too, sometimes another valid, non-fouled setting. Hands are
settled against the dealer (copies to the dealer, 1:1 less commission).

Besides ordinary rounds (sometimes a ``no_roll`` before the roll, sometimes a
single face-up card), every irregularity of the section occurs with its remedy
done right (a clean round) or, in faulty rounds, done wrong: the round then
breaks exactly the labelled rule and no other. Everything is vectorized across
rounds except the rare card moves of ``(e)`` rounds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import NO_CARD
from ...money import money_round
from ...paytables import Config
from ...schema import schema_for, table_of
from .deal import EVENT, EVENT_TYPES, SETTING_HIGH, SETTING_LOW, dice_position
from .hands import fouled_scores, rank2, rank5
from .house_way import DEFAULT, set_hands
from .paytable import exact_net, hands_won

__all__ = ["simulate", "CITATIONS"]

GAME = "pai_gow_poker"
C = "68 IAC 10-9-17"
# scenario kinds: an ordinary round, then one per citation
NORMAL, A, B, C1, C2, C3, D, E, F, G, H, I, VOID, PAYTABLE, INTEGRITY = range(15)
CITATIONS = {A: f"{C}(a)", B: f"{C}(b)", C1: f"{C}(c)(1)", C2: f"{C}(c)(2)", C3: f"{C}(c)(3)",
             D: f"{C}(d)", E: f"{C}(e)", F: f"{C}(f)", G: f"{C}(g)", H: f"{C}(h)", I: f"{C}(i)",
             VOID: "void", PAYTABLE: "paytable", INTEGRITY: "integrity"}
IRREGULAR = (A, B, C1, C2, C3, D, E, F, G, H, I)   # irregularities that occur with the right remedy
WAGERS = np.array([5, 10, 10, 15, 20, 25, 25, 25, 50, 50, 75, 100, 100, 200, 37.5, 500], dtype=np.float64)
PER_DAY = 360          # rounds per table per gaming day (10:00 onwards, about two minutes each)
MAX_EVENTS = 10
CHUNK = 50_000


# ---- settings and settlement ----------------------------------------------------------------
def _split(cards: np.ndarray, choice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (high, low) setting of seven cards that puts pair number ``choice`` in front."""
    rows = np.arange(len(cards))[:, None]
    return cards[rows, SETTING_HIGH[choice]], cards[rows, SETTING_LOW[choice]]


def _other_setting(rng: np.random.Generator, cards: np.ndarray, high: np.ndarray, low: np.ndarray,
                   attempts: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random valid (non-fouled) setting worth other than ``high``/``low``; and where one was found."""
    out_h, out_l = high.copy(), low.copy()
    found = np.zeros(len(cards), dtype=bool)
    ref_hi, ref_lo = rank5(high), rank2(low)
    for _ in range(attempts):  # a few vectorized tries over all rows
        todo = np.flatnonzero(~found)
        if not len(todo):
            break
        h, lo = _split(cards[todo], rng.integers(0, len(SETTING_LOW), len(todo)))
        hi_s, lo_s = rank5(h), rank2(lo)
        ok = ~fouled_scores(hi_s, lo_s) & ((hi_s != ref_hi[todo]) | (lo_s != ref_lo[todo]))
        out_h[todo[ok]], out_l[todo[ok]] = h[ok], lo[ok]
        found[todo[ok]] = True
    return out_h, out_l, found


def _settle(wager: np.ndarray, p_high: np.ndarray, p_low: np.ndarray, d_high: np.ndarray, d_low: np.ndarray
            ) -> np.ndarray:
    """Net of each hand against the dealer's hand in its row, by the default paytable, rounded."""
    p_hi, p_lo = rank5(p_high), rank2(p_low)
    d_hi, d_lo = rank5(d_high), rank2(d_low)
    won = hands_won(p_hi, p_lo, fouled_scores(p_hi, p_lo), d_hi, d_lo, fouled_scores(d_hi, d_lo))
    paytable = Config().section(GAME)
    return money_round(exact_net(won, wager, paytable["win"], paytable["commission"]))


# ---- events ----------------------------------------------------------------------------------
class _Events:
    """Per-round event lists under construction: a padded matrix of kinds plus attributes."""

    def __init__(self, n: int):
        self.kind = np.full((n, MAX_EVENTS), -1, dtype=np.int8)
        self.count = np.zeros((n, MAX_EVENTS), dtype=np.int32)
        self.flag = np.zeros((n, MAX_EVENTS), dtype=bool)
        self.n = np.zeros(n, dtype=np.int64)

    def push(self, rows: np.ndarray, kind: str, count: np.ndarray | int = 0, flag: np.ndarray | bool = False) -> None:
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows
        k = self.n[rows]
        self.kind[rows, k] = EVENT[kind]
        self.count[rows, k] = count
        self.flag[rows, k] = flag
        self.n[rows] += 1

    def arrow(self, dice: np.ndarray, reset_high: np.ndarray, reset_low: np.ndarray) -> pa.Array:
        """The ``events`` list<struct> column."""
        mask = np.arange(MAX_EVENTS)[None, :] < self.n[:, None]
        kind = self.kind[mask].astype(np.int64)
        rnd = np.nonzero(mask)[0]
        m = len(kind)
        types = pc.take(pa.array(EVENT_TYPES), pa.array(kind))
        has_count = (kind == EVENT["face_up_card"]) | (kind == EVENT["stacks_dealt"])
        count = pa.array(self.count[mask], pa.int32(), mask=~has_count)
        flag = self.flag[mask]
        exposed = pa.array(flag, pa.bool_(), mask=kind != EVENT["card_out_of_order"])
        misdeal = pa.array(flag, pa.bool_(), mask=kind != EVENT["supervisor_called"])
        is_roll = kind == EVENT["roll"]
        is_reset = kind == EVENT["dealer_hand_reset"]
        dice_col = _lists(dice[rnd[is_roll]], is_roll, 3)
        high = _lists(reset_high[rnd[is_reset]], is_reset, 5)
        low = _lists(reset_low[rnd[is_reset]], is_reset, 2)
        null_f = pa.nulls(m, pa.float64())
        struct = pa.StructArray.from_arrays(
            [types, pa.nulls(m, pa.int32()), pa.nulls(m, pa.string()), null_f, count, dice_col, exposed,
             misdeal, high, low],
            fields=list(schema_for(GAME).field("events").type.value_type))
        offsets = np.concatenate([[0], np.cumsum(self.n)]).astype(np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), struct)


def _lists(values: np.ndarray, present: np.ndarray, width: int) -> pa.Array:
    """A list<int8> column: ``width`` values for each True of ``present`` (in order), null elsewhere."""
    sizes = np.where(present, width, 0)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    flat = pa.array(np.asarray(values, dtype=np.int8).reshape(-1), pa.int8())
    return pa.ListArray.from_arrays(pa.array(offsets), flat, mask=pa.array(~present))


def _ragged(cards: np.ndarray, length: np.ndarray, present: np.ndarray | None = None) -> pa.Array:
    """A list<int8> column from a padded matrix and lengths (null where ``present`` is False)."""
    if present is not None:
        length = np.where(present, length, 0)
    mask = np.arange(cards.shape[1])[None, :] < length[:, None]
    offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int32)
    flat = pa.array(cards[mask].astype(np.int8), pa.int8())
    return pa.ListArray.from_arrays(pa.array(offsets), flat,
                                    mask=None if present is None else pa.array(~present))


# ---- one chunk of rounds -----------------------------------------------------------------------
def _chunk(rng: np.random.Generator, n: int, first: int, *, seed: int, fault_rate: float, tables: int,
           start: np.datetime64, occupancy: float, irregular_rate: float) -> tuple[pa.Table, pd.DataFrame]:
    idx = np.arange(first, first + n, dtype=np.int64)
    # -- scenarios: faults first, then irregularities remedied right
    faulty = rng.random(n) < fault_rate
    kind = np.where(faulty, rng.integers(A, INTEGRITY + 1, n),
                    np.where(rng.random(n) < irregular_rate, rng.choice(IRREGULAR, n), NORMAL))
    variant = rng.integers(0, 2, n)   # which right / wrong remedy

    # -- deal
    deck = rng.permuted(np.broadcast_to(np.arange(53, dtype=np.int8), (n, 53)), axis=1)
    dice = rng.integers(1, 7, (n, 3)).astype(np.int8)
    dice_pos = dice_position(dice.sum(axis=1, dtype=np.int64))
    first_pos = np.where(kind == C1, (dice_pos - 1 + rng.integers(1, 7, n)) % 7 + 1, dice_pos)
    stacks = deck[:, :49].reshape(n, 7, 7)
    at_position = (np.arange(7)[None, :] - (first_pos[:, None] - 1)) % 7  # stack index per position 1..7
    by_pos = stacks[np.arange(n)[:, None], at_position]                    # [n, 7 positions, 7 cards]
    occupied = rng.random((n, 6)) < occupancy
    none = ~occupied.any(axis=1)
    occupied[none, rng.integers(0, 6, none.sum())] = True
    h_round, h_slot = np.nonzero(occupied)                                 # slot 0..5 = position 2..7
    m = len(h_round)
    h_first = np.concatenate([[True], h_round[1:] != h_round[:-1]])
    first_hand = np.full(n, -1, np.int64)
    first_hand[h_round[h_first]] = np.flatnonzero(h_first)
    hand_cards = np.full((m, 8), NO_CARD, np.int8)
    hand_cards[:, :7] = by_pos[h_round, h_slot + 1]
    hand_len = np.full(m, 7, np.int64)
    dealer = np.full((n, 8), NO_CARD, np.int8)
    dealer[:, :7] = by_pos[:, 0]
    dealer_len = np.full(n, 7, np.int64)
    wager = rng.choice(WAGERS, m)

    # -- (e): one card moves from one holder to another (rare: a loop over those rounds only)
    for r in np.flatnonzero(kind == E):
        hands = np.flatnonzero(h_round == r)
        holders = [("d", r)] + [("h", j) for j in hands]
        a, b = rng.choice(len(holders), 2, replace=False)
        (ka, ia), (kb, ib) = holders[a], holders[b]
        src = dealer if ka == "d" else hand_cards
        dst = dealer if kb == "d" else hand_cards
        src_len = dealer_len if ka == "d" else hand_len
        dst_len = dealer_len if kb == "d" else hand_len
        dst[ib, 7] = src[ia, 6]
        src[ia, 6] = NO_CARD
        src_len[ia], dst_len[ib] = 6, 8
    # -- integrity: a patron's card replaced by one of the dealer's
    integ = np.flatnonzero(kind == INTEGRITY)
    if len(integ):
        hand_cards[first_hand[integ], rng.integers(0, 7, len(integ))] = dealer[integ, rng.integers(0, 7, len(integ))]

    # -- settings: house way for all, some patrons choose another valid setting
    h_high, h_low = set_hands(hand_cards[:, :7], DEFAULT)
    alt = rng.random(m) < 0.1
    if alt.any():
        ah, al, ok = _other_setting(rng, hand_cards[alt, :7], h_high[alt], h_low[alt])
        sel = np.flatnonzero(alt)[ok]
        h_high[sel], h_low[sel] = ah[ok], al[ok]
    d_high, d_low = set_hands(dealer[:, :7], DEFAULT)
    rec_high, rec_low = d_high.copy(), d_low.copy()   # the dealer's setting as recorded
    reset = np.zeros(n, dtype=bool)
    f_rows = np.flatnonzero(kind == F)
    if len(f_rows):
        wh, wl, ok = _other_setting(rng, dealer[f_rows, :7], d_high[f_rows], d_low[f_rows])
        kind[f_rows[~ok]], faulty[f_rows[~ok]] = NORMAL, False   # no other valid setting: an ordinary round
        f_rows, wh, wl = f_rows[ok], wh[ok], wl[ok]
        rec_high[f_rows], rec_low[f_rows] = wh, wl
        right = ~faulty[f_rows]
        reset[f_rows[right]] = True               # reset to the house way
        wrong_reset = faulty[f_rows] & (variant[f_rows] == 1)
        reset[f_rows[wrong_reset]] = True         # a reset that repeats the wrong setting
        d_high[f_rows[~right]], d_low[f_rows[~right]] = wh[~right], wl[~right]
    reset_high, reset_low = d_high, d_low         # a reset event records the final setting

    # -- status and remedies
    status = np.full(n, "completed", dtype=object)
    reshuffle = np.zeros(n, dtype=bool)
    voiding = np.isin(kind, (A, C2, C3, E, G, H))
    ok_rows = ~faulty
    status[voiding & ok_rows] = "void"
    reshuffle[voiding & ok_rows] = True
    wrong_void = voiding & faulty & (variant == 1)          # voided, no reshuffle
    status[wrong_void] = "void"                            # (variant 0: round completed)
    status[(kind == C1) & ok_rows] = np.where(variant[(kind == C1) & ok_rows] == 0, "dead", "void")
    status[(kind == D) & faulty] = "void"                  # voided for an unexposed card
    reshuffle[(kind == D) & faulty & (variant == 1)] = True
    remaining = np.full(n, 4, np.int64)
    i_rows = kind == I
    remaining[i_rows] = rng.choice([3, 5], i_rows.sum())
    remaining[kind == H] = -1                              # not recorded after a short deal
    misdeal = i_rows & (variant == 1)
    supervisor = i_rows & ~(faulty & (variant == 0))
    status[misdeal & ok_rows] = "void"
    reshuffle[misdeal & ok_rows] = True
    # void: a correctly voided round (of any voiding kind) that still pays a hand
    v_rows = np.flatnonzero(kind == VOID)
    base_kind = rng.choice((A, C1, C2, C3, G, H), len(v_rows))
    kind_for_events = kind.copy()
    kind_for_events[v_rows] = base_kind
    status[v_rows] = np.where(base_kind == C1, "dead", "void")
    reshuffle[v_rows] = base_kind != C1
    c1v = v_rows[base_kind == C1]
    first_pos[c1v] = (dice_pos[c1v] - 1 + rng.integers(1, 7, len(c1v))) % 7 + 1
    remaining[v_rows[base_kind == H]] = -1
    # hands in a void or dead round are returned; a (e) round or dealer keeps no setting
    off = status != "completed"
    dealer_set = ~off & (dealer_len == 7)
    hand_set = ~off[h_round] & (hand_len == 7) & dealer_set[h_round]

    # -- settlement
    net = np.zeros(m)
    s = np.flatnonzero(hand_set)
    if len(s):
        net[s] = _settle(wager[s], h_high[s], h_low[s], d_high[h_round[s]], d_low[h_round[s]])
    pay_rows = np.flatnonzero(kind == PAYTABLE)
    if len(pay_rows):
        j = first_hand[pay_rows]
        w = wager[j]
        net[j] = np.where(net[j] > 0, w, np.where(net[j] == 0, -w, 0.0))
    if len(v_rows):
        j = first_hand[v_rows]
        net[j] = np.where(rng.random(len(j)) < 0.5, -wager[j], money_round(wager[j] * 0.95))

    # -- events, in order
    ev = _Events(n)
    k = kind_for_events
    extra_no_roll = (k == NORMAL) & (rng.random(n) < 0.05)
    ev.push((k == B) & ~faulty | extra_no_roll, "no_roll")
    ev.push(np.ones(n, dtype=bool), "roll")
    ev.push((k == B) & faulty, "no_roll")
    ev.push((k == NORMAL) & (rng.random(n) < 0.03), "face_up_card", 1)
    a_rows = np.flatnonzero(k == A)
    two = rng.random(len(a_rows)) < 0.3
    ev.push(a_rows[two], "face_up_card", 1)
    ev.push(a_rows, "face_up_card", np.where(two, 1, rng.integers(2, 4, len(a_rows))))
    ev.push(k == C2, "card_out_of_order", flag=True)
    ev.push(k == D, "card_out_of_order", flag=False)
    ev.push(k == G, "card_exposed_during_stacks")
    h_rows = k == H
    ev.push(~h_rows, "stacks_dealt", 7)
    ev.push(h_rows, "stacks_dealt", rng.choice([6, 8], n)[h_rows])
    ev.push(k == C3, "dealer_card_exposed")
    ev.push(supervisor, "supervisor_called", flag=misdeal[supervisor])
    ev.push(reset, "dealer_hand_reset")
    ev.push(reshuffle, "reshuffle")

    # -- table
    t = idx % tables
    seq = idx // tables
    day = seq // PER_DAY
    local = (start + day.astype("timedelta64[D]") + np.timedelta64(10, "h")
             + ((seq % PER_DAY) * 120 + rng.integers(0, 90, n)).astype("timedelta64[s]"))
    started = (local + np.timedelta64(5, "h")).astype("datetime64[us]")
    round_id = pa.array([f"PGP-{seed}-{i:09d}" for i in idx.tolist()], pa.string())
    table_ids = np.array([f"PGP-{x + 1:02d}" for x in range(tables)], dtype=object)
    dealer_ids = np.array([f"D{2000 + x:04d}" for x in range(64)], dtype=object)
    hand_seat = (h_slot + 1).astype(np.int32)
    hands = pa.StructArray.from_arrays(
        [pa.array(hand_seat), pa.array((h_slot + 2).astype(np.int8)), _ragged(hand_cards, hand_len),
         _ragged(h_high, np.full(m, 5), hand_set), _ragged(h_low, np.full(m, 2), hand_set),
         pa.array(wager), pa.array(net)],
        fields=list(schema_for(GAME).field("hands").type.value_type))
    h_offsets = np.concatenate([[0], np.cumsum(occupied.sum(axis=1))]).astype(np.int32)
    cols = {
        "round_id": round_id,
        "table_id": pa.array(table_ids[t]),
        "dealer_id": pa.array(dealer_ids[(t * 7 + seq // 30) % 64]),
        "started_at": pa.array(started, pa.timestamp("us", tz="UTC")),
        "utc_offset": pa.array(np.full(n, -300, np.int16)),
        "shoe_id": pa.nulls(n, pa.string()),
        "round_seq": pa.nulls(n, pa.int32()),
        "status": pa.array(status, pa.string()),
        "wagers": pa.nulls(n, schema_for(GAME).field("wagers").type),
        "events": ev.arrow(dice, reset_high, reset_low),
        "source_file": pa.array(np.full(n, "<simulated>", dtype=object), pa.string()),
        "source_line": pa.array(idx + 1),
        "dice": _ragged(dice, np.full(n, 3)),
        "first_position": pa.array(first_pos.astype(np.int8)),
        "cards_remaining": pa.array(remaining.astype(np.int16), mask=remaining < 0),
        "dealer_cards": _ragged(dealer, dealer_len),
        "dealer_high": _ragged(rec_high, np.full(n, 5), dealer_set),
        "dealer_low": _ragged(rec_low, np.full(n, 2), dealer_set),
        "hands": pa.ListArray.from_arrays(pa.array(h_offsets), hands),
    }
    schema = schema_for(GAME)
    table = table_of(cols, schema, n)
    bad = np.flatnonzero(faulty)
    truth = pd.DataFrame({"round_id": np.asarray(round_id.to_pylist(), dtype=object)[bad],
                          "citation": [CITATIONS[x] for x in kind[bad]]})
    return table, truth


def simulate(n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, tables: int = 3,
             start: str = "2025-06-01", occupancy: float = 0.7,
             irregular_rate: float = 0.08) -> tuple[pa.Table, pd.DataFrame]:
    """``n_rounds`` pai gow poker rounds in the stored schema, and the faults injected in them.

    ``fault_rate`` is the share of rounds with one injected fault (a citation drawn
    uniformly); ``irregular_rate`` the share of other rounds with an irregularity
    remedied correctly. Rounds are spread over ``tables`` tables from ``start``
    (local time, UTC-05:00), 360 rounds per table and day from 10:00.
    """
    rng = np.random.default_rng(seed)
    day0 = np.datetime64(start, "s")
    tables_out, truths = [], []
    for first in range(0, n_rounds, CHUNK):
        t, tr = _chunk(rng, min(CHUNK, n_rounds - first), first, seed=seed, fault_rate=fault_rate,
                       tables=tables, start=day0, occupancy=occupancy, irregular_rate=irregular_rate)
        tables_out.append(t)
        truths.append(tr)
    if not tables_out:
        return schema_for(GAME).empty_table(), pd.DataFrame({"round_id": [], "citation": []})
    return pa.concat_tables(tables_out), pd.concat(truths, ignore_index=True)
