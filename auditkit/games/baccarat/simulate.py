"""Baccarat simulator: correct play from real shuffled shoes, plus labelled injected faults.

Shoes are dealt side by side: the loop runs over the round position within a
shoe, numpy over every shoe still in play. Each shoe is ``decks`` decks
shuffled, a burn (one card, then as many as its value, court cards 10), and a
cutting card 14-16 cards from the end; after the round in which the cutting
card appears, exactly one more round is dealt. The simulator plays the tableau
from its own copy of the regulation's if/else (:func:`_player_draws`,
:func:`_banker_draws` here), never from the tables the rules read, so that a round
trip catches an error in either.

Faults (``fault_rate`` of the rounds, at most one per round) are *pure*: the
round breaks exactly the labelled rule. Dealing faults happen while dealing,
so the cards drawn by mistake come from the shoe in order, and outcome and
payouts follow the cards as dealt:

* ``(b)(1)``/``(b)(2)``: the player stands on 0-5 / draws on 6-7, the banker
  then acts correctly on the cards as dealt; ``(b)(3)``: a hand draws on a
  natural; ``(b)(4)``-``(b)(11)``: the banker does the opposite of the tableau;
* ``(a)`` a wrong announced total; ``(c)`` deal order ``PBPBBP``; ``(d)`` a
  fourth card to a hand that drew; ``(e)`` a shoe deals one more round after
  its last hand (that round is labelled); ``outcome`` a wrong recorded outcome;
  ``paytable`` one wager settled wrongly; ``integrity`` a court card recorded
  as a joker, or a card replaced by a ninth copy (same point value) of a card
  whose eight copies were already dealt in the shoe.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import JOKER
from ...money import money_round
from ...schema import WAGER, schema_for, table_of
from .paytable import BETS
from .tableau import BACCARAT_POINTS, OUTCOMES, outcome_of

__all__ = ["simulate", "CITATIONS"]

SEC = "68 IAC 10-10-14"
CITATIONS = ([f"{SEC}(a)"] + [f"{SEC}(b)({k})" for k in range(1, 12)]
             + [f"{SEC}(c)", f"{SEC}(d)", f"{SEC}(e)", "outcome", "paytable", "integrity"])
"""Every citation the simulator injects; a fault's label is an index into this list."""
A, C, D, E, OUTCOME, PAYTABLE, INTEGRITY = 0, 12, 13, 14, 15, 16, 17

# fault categories chosen per faulty round (uniformly among those that apply)
CAT_A, CAT_PLAYER, CAT_BANKER, CAT_C, CAT_D, CAT_OUT, CAT_PAY, CAT_INT = range(8)
# citation index of a banker mistake: [player drew, banker two-card total 0-7]
CAT_WEIGHT = np.array([1, 1, 2.5, 1, 1, 1, 1, 1])  # banker mistakes split over eight subsections
_BANKER_SUB = np.array([[9] * 6 + [10] * 2, [11] * 3 + [5, 6, 7, 8, 4]], dtype=np.int8)

UTC_OFFSET = -300                     # minutes: local time is UTC-05:00
OPEN_HOUR, HOURS_PER_DAY = 4, 20      # tables deal from 04:00 to 24:00 local
MAIN_AMOUNTS = np.array([10, 20, 25, 37.5, 50, 75, 100, 150, 200, 500, 1000])
MAIN_P = np.array([12, 12, 16, 4, 16, 6, 14, 5, 8, 5, 2], dtype=np.float64)
TIE_AMOUNTS = np.array([5, 10, 12.5, 25, 50])
TIE_P = np.array([35, 30, 5, 20, 10], dtype=np.float64)


def _player_draws(p2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """(b)(1)-(b)(3), written out: no natural (8 or 9 on either hand) and a player 0-5 draws."""
    return (p2 <= 5) & (b2 <= 7)


def _banker_draws(p2: np.ndarray, b2: np.ndarray, player_drew: np.ndarray, p3: np.ndarray) -> np.ndarray:
    """(b)(4)-(b)(11), written out as the regulation's if/else (``p3``: the player's third-card value)."""
    if_player_drew = np.select(
        [b2 <= 2, b2 == 3, b2 == 4, b2 == 5, b2 == 6],
        [True, p3 != 8, (p3 >= 2) & (p3 <= 7), (p3 >= 4) & (p3 <= 7), (p3 >= 6) & (p3 <= 7)],
        False)                                                  # 7 stands
    if_player_stood = b2 <= 5
    no_natural = (p2 <= 7) & (b2 <= 7)
    return no_natural & np.where(player_drew, if_player_drew, if_player_stood)


def _order_strings() -> list[str]:
    """Deal order of code ``pd + 2*bd + 4*player 4th + 8*banker 4th``; code 16 is the (c) fault."""
    out = []
    for code in range(17):
        if code == 16:
            out.append("PBPBBP")
            continue
        s = "PBPB" + "P" * (code & 1) + "B" * ((code >> 1) & 1) + "P" * ((code >> 2) & 1) + "B" * ((code >> 3) & 1)
        out.append(s)
    return out


ORDER_STRINGS = _order_strings()


def _deal(rng: np.random.Generator, n_shoes: int, decks: int, fault_rate: float) -> dict[str, np.ndarray]:
    """Deal ``n_shoes`` shoes to the end; rows in shoe order then round order."""
    n_cards = 52 * decks
    base = np.tile(np.arange(52, dtype=np.int8), decks)
    shoes = rng.permuted(np.broadcast_to(base, (n_shoes, n_cards)), axis=1)
    shoes = np.concatenate([shoes, np.full((n_shoes, 8), -1, np.int8)], axis=1)
    first = BACCARAT_POINTS[shoes[:, 0]]
    pos = 1 + np.where(first == 0, 10, first).astype(np.int64)         # burn card and its count
    cut = n_cards - rng.integers(14, 17, n_shoes)                       # cutting card before this card
    phase = np.zeros(n_shoes, np.int8)   # 0 dealing, 1 cut card seen (next is the last hand), 2 extra round next
    extra_fault = rng.random(n_shoes) < fault_rate * 80 / len(CITATIONS)
    active = np.ones(n_shoes, bool)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("shoe", "seq", "P", "B", "cut", "label", "order", "cat")}
    ar7 = np.arange(7)
    for j in range(n_cards):  # round position within the shoe; numpy across shoes
        s = np.flatnonzero(active)
        if not len(s):
            break
        n = len(s)
        c = shoes[s[:, None], pos[s, None] + ar7]
        v = BACCARAT_POINTS[c].astype(np.int64)
        p2, b2 = (v[:, 0] + v[:, 2]) % 10, (v[:, 1] + v[:, 3]) % 10
        nat = (p2 >= 8) | (b2 >= 8)
        pd_ = _player_draws(p2, b2)
        bd = _banker_draws(p2, b2, pd_, v[:, 4])
        is_extra = phase[s] == 2
        label = np.where(is_extra, E, -1).astype(np.int8)
        cat = np.full(n, -1, np.int8)

        faulty = np.flatnonzero((rng.random(n) < fault_rate) & ~is_extra)
        if len(faulty):
            f = faulty
            cands = np.ones((len(f), 8), bool)
            cands[:, CAT_BANKER] = ~nat[f]
            cands[:, CAT_C] = pd_[f] & bd[f]
            cands[:, CAT_D] = pd_[f] | bd[f]
            cands[:, CAT_INT] = (v[f, :4] == 0).any(axis=1)
            cat[f] = np.argmax(rng.random((len(f), 8)) * cands * CAT_WEIGHT, axis=1)

        pflip = cat == CAT_PLAYER
        bflip = cat == CAT_BANKER
        side_player = rng.random(n) < 0.5                      # on a natural, which hand draws by mistake
        pd2 = pd_.copy()
        pd2[pflip & ~nat] = ~pd_[pflip & ~nat]
        pd2[pflip & nat & side_player] = True
        bd2 = _banker_draws(p2, b2, pd2, v[:, 4])               # the banker acts on the cards as dealt
        bd2[bflip] = ~bd[bflip]
        bd2[pflip & nat & ~side_player] = True
        label[pflip] = np.where(nat, 3, np.where(p2 <= 5, 1, 2))[pflip]
        label[bflip] = _BANKER_SUB[pd_[bflip].astype(np.intp), b2[bflip]]
        label[cat == CAT_A] = A
        label[cat == CAT_C] = C
        label[cat == CAT_D] = D
        label[cat == CAT_OUT] = OUTCOME
        label[cat == CAT_PAY] = PAYTABLE
        label[cat == CAT_INT] = INTEGRITY

        P = np.full((n, 4), -1, np.int8)
        B = np.full((n, 4), -1, np.int8)
        P[:, 0], P[:, 1], B[:, 0], B[:, 1] = c[:, 0], c[:, 2], c[:, 1], c[:, 3]
        P[pd2, 2] = c[pd2, 4]
        rows = np.arange(n)
        B[bd2, 2] = c[rows, 4 + pd2][bd2]
        k = 4 + pd2 + bd2
        d_fault = cat == CAT_D
        d_player = d_fault & pd2
        d_banker = d_fault & ~pd2
        fourth = c[rows, np.minimum(k, 6)]
        P[d_player, 3] = fourth[d_player]
        B[d_banker, 3] = fourth[d_banker]
        k = k + d_fault
        order = (pd2 * 1 + bd2 * 2 + d_player * 4 + d_banker * 8).astype(np.int8)
        order[cat == CAT_C] = 16

        p0 = pos[s]
        cut_in = (p0 <= cut[s]) & (cut[s] < p0 + k)
        pos[s] = p0 + k
        # shoe state: the round after the cut card's round is the last; an (e) fault deals one more
        ph = phase[s]
        done = (ph == 2) | ((ph == 1) & ~(extra_fault[s] & (pos[s] + 7 <= n_cards)))
        new_ph = np.where(ph == 1, 2, np.where(cut_in, 1, ph))
        phase[s] = new_ph
        active[s[done]] = False
        for key, val in (("shoe", s), ("seq", np.full(n, j + 1, np.int32)), ("P", P), ("B", B),
                         ("cut", cut_in), ("label", label), ("order", order), ("cat", cat)):
            out[key].append(val)
    res = {k: np.concatenate(v) for k, v in out.items()}
    order = np.argsort(res["shoe"], kind="stable")  # shoe-major; within a shoe already by round
    return {k: v[order] for k, v in res.items()}


def _wagers(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """Wagers of ``n`` rounds: (row, seat, kind 0 player / 1 banker / 2 tie, amount), grouped by round."""
    seats = rng.integers(1, 7, n, dtype=np.int32)                  # patrons betting this round
    srow = np.repeat(np.arange(n, dtype=np.int32), seats)
    gap = rng.integers(1, 3, len(srow), dtype=np.int32)
    cum = np.cumsum(gap, dtype=np.int32)
    starts = np.cumsum(seats) - seats
    within = cum - np.repeat(cum[starts] - gap[starts], seats)      # 1..12: distinct seats
    del cum, gap
    seat = (rng.integers(0, 14, n, dtype=np.int32)[srow] + within) % 14 + 1
    del within
    main = (rng.random(len(srow), dtype=np.float32) < 0.55).astype(np.int8)   # banker 55 %, player 45 %
    tie = rng.random(len(srow), dtype=np.float32) < 0.12
    width = 1 + tie.astype(np.int32)
    at = np.cumsum(width) - width
    m = int(width.sum())
    row = np.empty(m, np.int32)
    wseat = np.empty(m, np.int32)
    kind = np.empty(m, np.int8)
    amount = np.empty(m, np.float64)
    row[at], wseat[at], kind[at] = srow, seat, main
    amount[at] = MAIN_AMOUNTS[rng.choice(len(MAIN_AMOUNTS), len(srow), p=MAIN_P / MAIN_P.sum()).astype(np.int8)]
    t = at[tie] + 1
    row[t], wseat[t], kind[t] = srow[tie], seat[tie], 2
    amount[t] = rng.choice(TIE_AMOUNTS, len(t), p=TIE_P / TIE_P.sum())
    return row, wseat, kind, amount


def _nets(kind: np.ndarray, amount: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Default paytable nets: player 1:1, banker 0.95:1 (to the cent, half up), tie 8:1, push on a tie."""
    net = -amount
    won = np.flatnonzero(kind == outcome)
    net[won] = money_round(amount[won] * np.array([1.0, 0.95, 8.0])[kind[won]], 0.01, "half_up")
    net[(outcome == 2) & (kind < 2)] = 0.0
    return net


def _integrity_faults(rng: np.random.Generator, rows: np.ndarray, shoe: np.ndarray, P: np.ndarray,
                      B: np.ndarray, decks: int) -> None:
    """A joker for a court card, or a ninth copy of a fully dealt card of the same value (in place)."""
    first_row = np.searchsorted(shoe, shoe, side="left")
    pts = BACCARAT_POINTS[:52]
    for r in rows:  # few rows, in shoe order, so earlier changes are counted
        cards = np.concatenate([P[r], B[r]])
        start = first_row[r]
        seen = np.concatenate([P[start:r].ravel(), B[start:r].ravel()])
        counts = np.bincount(seen[(seen >= 0) & (seen < 52)], minlength=52)
        slots = [i for i, x in enumerate(cards) if 0 <= x < 52]
        options = [(i, x) for i in slots for x in np.flatnonzero((counts >= decks) & (pts == pts[cards[i]]))
                   if x != cards[i]]
        if options and rng.random() < 0.5:
            i, x = options[rng.integers(len(options))]
        else:
            zeros = [i for i in slots if pts[cards[i]] == 0]
            i, x = zeros[rng.integers(len(zeros))], JOKER
        (P if i < 4 else B)[r, i % 4] = x


def _timeline(rng: np.random.Generator, shoe: np.ndarray, tables: int, start: str) -> tuple[np.ndarray, ...]:
    """Start time (UTC microseconds), table and shoe number within its table's day for each round."""
    n = len(shoe)
    interval = rng.uniform(45, 75, n)                               # about 60 rounds an hour
    cum = np.cumsum(interval)
    first = np.flatnonzero(np.r_[True, shoe[1:] != shoe[:-1]])
    sizes = np.diff(np.r_[first, n])
    offset = cum - np.repeat(cum[first], sizes)                    # seconds since the shoe's first round
    duration = offset[first + sizes - 1] + interval[first + sizes - 1]
    n_shoes = len(first)
    table = np.arange(n_shoes) % tables
    day0 = datetime.combine(date.fromisoformat(start), datetime.min.time(), tzinfo=UTC)
    base = (day0.timestamp() - UTC_OFFSET * 60) + OPEN_HOUR * 3600  # 04:00 local of the first day, in UTC s
    span = HOURS_PER_DAY * 3600
    shoe_start = np.empty(n_shoes)
    shoe_day = np.empty(n_shoes, np.int64)
    shoe_no = np.empty(n_shoes, np.int64)
    breaks = rng.uniform(240, 480, n_shoes)                         # shuffle between shoes
    for t in range(tables):  # one pass over each table's shoes (a few per hour), not per round
        day, clock, no = 0, rng.uniform(0, 600), 0
        for i in range(t, n_shoes, tables):
            if clock + duration[i] > span:
                day, clock, no = day + 1, rng.uniform(0, 600), 0
            shoe_start[i], shoe_day[i], shoe_no[i] = clock, day, no
            clock += duration[i] + breaks[i]
            no += 1
    t_round = base + shoe_day.repeat(sizes) * 86400 + shoe_start.repeat(sizes) + offset
    micros = np.round(t_round).astype(np.int64) * 1_000_000         # whole seconds, as logs write them
    return micros, table.repeat(sizes), shoe_day, shoe_no, sizes


def simulate(n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, tables: int = 4, decks: int = 8,
             start: str = "2025-06-01", game: str = "baccarat") -> tuple[pa.Table, pd.DataFrame]:
    """``n_rounds`` rounds of ``game`` in its stored schema, and the faults' ground truth (round_id, citation)."""
    if game not in ("baccarat", "mini_baccarat"):
        raise ValueError(f"not a baccarat game: {game!r}")
    rng = np.random.default_rng(seed)
    parts, total = [], 0
    while total < n_rounds:  # about 80 rounds a shoe; deal more shoes if short
        n_shoes = max(1, int((n_rounds - total) / 76) + 2)
        part = _deal(rng, n_shoes, decks, fault_rate)
        if parts:
            part["shoe"] = part["shoe"] + parts[-1]["shoe"][-1] + 1
        parts.append(part)
        total += len(part["shoe"])
    d = {k: np.concatenate([p[k] for p in parts])[:n_rounds] for k in parts[0]}
    n = len(d["shoe"])
    shoe, P, B, label = d["shoe"], d["P"], d["B"], d["label"]

    _integrity_faults(rng, np.flatnonzero(label == INTEGRITY), shoe, P, B, decks)

    pts_p, pts_b = BACCARAT_POINTS[P].astype(np.int64), BACCARAT_POINTS[B].astype(np.int64)
    pf, bf = pts_p.sum(axis=1) % 10, pts_b.sum(axis=1) % 10
    dealt = outcome_of(pf, bf)
    p2, b2 = (pts_p[:, 0] + pts_p[:, 1]) % 10, (pts_b[:, 0] + pts_b[:, 1]) % 10

    # status: a few clean rounds are void (every wager returned)
    void = (rng.random(n) < 0.0005) & (label < 0)
    # outcome
    recorded = dealt.copy()
    fo = label == OUTCOME
    recorded[fo] = (dealt[fo] + rng.integers(1, 3, int(fo.sum()))) % 3
    # announcements: most rounds; an (a) fault misannounces one hand
    announce = (rng.random(n) < 0.7) | (label == A)
    ann_p, ann_b = p2.copy(), b2.copy()
    fa = np.flatnonzero(label == A)
    which = rng.random(len(fa)) < 0.5
    wrong = rng.integers(1, 10, len(fa))
    ann_p[fa[which]] = (p2[fa[which]] + wrong[which]) % 10
    ann_b[fa[~which]] = (b2[fa[~which]] + wrong[~which]) % 10
    # deal order recorded on most rounds, always for a (c) fault
    has_order = (rng.random(n) < 0.6) | (label == C)

    # wagers and their settlement
    wrow, wseat, wkind, wamount = _wagers(rng, n)
    wnet = _nets(wkind, wamount, dealt[wrow].astype(np.int64))
    wnet[void[wrow]] = 0.0
    counts = np.bincount(wrow, minlength=n)
    woff = np.concatenate([[0], np.cumsum(counts)])
    fp = np.flatnonzero(label == PAYTABLE)
    j = woff[fp] + (rng.random(len(fp)) * counts[fp]).astype(np.int64)
    o, kd, amt = dealt[fp], wkind[j], wamount[j]
    won, push = kd == o, (o == 2) & (kd < 2)
    wnet[j] = np.select(
        [won & (kd == 1), won & (kd == 0), won & (kd == 2), push],
        [amt, money_round(amt * 0.95), 9 * amt, -amt],
        0.0)                                                    # a losing wager returned

    # times, tables, shoes, dealers, ids
    micros, table, shoe_day, shoe_no, sizes = _timeline(rng, shoe, tables, start)
    prefix = "BAC" if game == "baccarat" else "MBAC"
    day0 = date.fromisoformat(start)
    local = micros // 1_000_000 + UTC_OFFSET * 60
    hour = local // 3600
    dealer = (hour + table * 3) % 8
    first = np.flatnonzero(np.r_[True, shoe[1:] != shoe[:-1]])
    shoe_ids = [f"{prefix}-{t + 1:02d}-{(day0 + timedelta(days=int(dd))).strftime('%Y%m%d')}-S{no + 1:02d}"
                for t, dd, no in zip(table[first], shoe_day, shoe_no, strict=True)]
    shoe_local = np.repeat(np.arange(len(first)), sizes)

    # everything in time order, as a log is written (wagers move with their rounds)
    by_time = np.argsort(micros, kind="stable")
    micros, table, dealer, shoe_local, seq = micros[by_time], table[by_time], dealer[by_time], \
        shoe_local[by_time], d["seq"][by_time]
    P, B, recorded, ann_p, ann_b, announce = P[by_time], B[by_time], recorded[by_time], ann_p[by_time], \
        ann_b[by_time], announce[by_time]
    has_order, deal_codes, void, cut_flag, label = has_order[by_time], d["order"][by_time], void[by_time], \
        d["cut"][by_time], label[by_time]
    new_counts = counts[by_time]
    new_off = np.concatenate([[0], np.cumsum(new_counts)])
    widx = np.repeat(woff[by_time] - new_off[:-1], new_counts) + np.arange(new_off[-1])
    wseat, wkind, wamount, wnet, woff = wseat[widx], wkind[widx], wamount[widx], wnet[widx], new_off

    shoe_col = pa.DictionaryArray.from_arrays(pa.array(shoe_local.astype(np.int32)), pa.array(shoe_ids)).cast(pa.string())
    seq_str = pc.utf8_lpad(pc.cast(pa.array(seq), pa.string()), 3, "0")
    round_id = pc.binary_join_element_wise(shoe_col, seq_str, "-")
    table_names = pa.array([f"{prefix}-{t + 1:02d}" for t in range(tables)])
    dealer_names = pa.array([f"D{t + 1:02d}{k}" for t in range(tables) for k in range(8)])

    def strings(codes: np.ndarray, names: pa.Array) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), names).cast(pa.string())

    def card_lists(m: np.ndarray) -> pa.Array:
        lens = (m >= 0).sum(axis=1)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(m[m >= 0].astype(np.int8)))

    wstruct = pa.StructArray.from_arrays(
        [pa.array(wseat), strings(wkind, pa.array(BETS)), pa.array(wamount), pa.array(wnet)],
        fields=list(WAGER))
    wagers = pa.ListArray.from_arrays(pa.array(woff.astype(np.int32)), wstruct, type=pa.list_(WAGER))
    order_codes = np.where(has_order, deal_codes, -1)
    order_names = pa.array(ORDER_STRINGS)
    deal_order = pa.DictionaryArray.from_arrays(
        pa.array(order_codes.astype(np.int32), mask=order_codes < 0), order_names).cast(pa.string())
    status_codes = void.astype(np.int32)
    ann_mask = ~announce
    cols = {
        "round_id": round_id,
        "table_id": strings(table, table_names),
        "dealer_id": strings(table * 8 + dealer, dealer_names),
        "started_at": pa.array(micros, pa.timestamp("us", tz="UTC")),
        "utc_offset": pa.array(np.full(n, UTC_OFFSET, np.int16)),
        "shoe_id": shoe_col,
        "round_seq": pa.array(seq.astype(np.int32)),
        "status": strings(status_codes, pa.array(["completed", "void"])),
        "wagers": wagers,
        "events": pa.nulls(n, schema_for(game).field("events").type),
        "source_file": strings(np.zeros(n, np.int32), pa.array(["<simulated>"])),
        "source_line": pa.array(np.arange(1, n + 1, dtype=np.int64)),
        "player_cards": card_lists(P),
        "banker_cards": card_lists(B),
        "outcome": strings(recorded, pa.array(OUTCOMES)),
        "announced_player": pa.array(ann_p.astype(np.int16), mask=ann_mask),
        "announced_banker": pa.array(ann_b.astype(np.int16), mask=ann_mask),
        "deal_order": deal_order,
        "cut_card": pa.array(cut_flag),
    }
    schema = schema_for(game)
    out = table_of(cols, schema, n)
    faulty = np.flatnonzero(label >= 0)
    truth = pd.DataFrame({
        "round_id": out["round_id"].take(pa.array(faulty)).to_pylist(),
        "citation": [CITATIONS[i] for i in label[faulty]],
    })
    return out, truth
