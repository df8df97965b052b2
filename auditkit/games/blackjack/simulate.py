"""Simulated blackjack rounds (68 IAC 10-2-4) with labelled, pure faults.

Each table deals from real shuffled ``decks``-deck shoes: a burn card, then
rounds until the cut card (65-80 % penetration) comes out; the round in
progress is finished and the shoe reshuffled. One to seven seats play
basic-strategy-like hands (hit, stand, double on two cards, split with
resplits to four hands, split aces get one card each, late surrender), a few
take insurance or even money when the dealer shows an ace. The dealer peeks
for blackjack, draws only when some hand is still live, and stands on soft 17
(hits it with ``dealer_hits_soft_17``). Wagers are multiples of 5 within the
table's posted limits (recorded on each round); wager events carry a
``first_card`` marker on most rounds. Timestamps run over gaming days from
10:00 local time (UTC-05:00), about 70 seconds a round.

A faulty round (``fault_rate``) breaks exactly the labelled rule and no other
(the truth holds ``round_id, citation``); a ``void`` fault declares the round void or
dead and pays a hand anyway. Totals, blackjacks, live hands, the dealer's drawing and
each hand's result are those of :mod:`.hands`, as the rules read them; the paytable is
the default ``[blackjack]`` configuration. Play is sequential, so rounds are
dealt in a Python loop; the output columns are assembled with numpy/Arrow.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pyarrow as pa

from ...cards import JOKER
from ...paytables import Config
from ...schema import EVENT, WAGER, schema_for, table_of
from .hands import POINTS, TWENTY_ONE, dealer_must_draw, is_blackjack, is_live, outcome, total
from .schema import HAND as BLACKJACK_HAND

__all__ = ["simulate", "CITATIONS"]

GAME = "blackjack"
S = "68 IAC 10-2-4"
CITATIONS = (f"{S}(a)", f"{S}(a)(1)", f"{S}(a)(2)", f"{S}(a)(3)", f"{S}(b)", "loss", f"{S}(c)", f"{S}(e)",
             "paytable", "void", "integrity", "house-rules")
LIMITS = ((10, 500), (25, 1000), (15, 500), (50, 2000), (5, 200), (100, 5000))
UTC_OFFSET = -300  # minutes: -05:00
TZ = timezone(timedelta(minutes=UTC_OFFSET))
OPEN_HOUR, CLOSE_HOURS = 10, 18  # a table deals 10:00-04:00 local
_PAYTABLE = Config().section(GAME)  # the default paytable, as the rules read it
WIN, BLACKJACK, INSURANCE, EVEN_MONEY, SURRENDER = (float(_PAYTABLE[k]) for k in
                                                    ("win", "blackjack", "insurance", "even_money", "surrender"))


def _up_value(card: int) -> int:
    return 11 if card >= 48 else POINTS[card]


def _strategy(cards: list[int], t: int, soft: bool, up: int, can_double: bool, can_split: bool,
              can_surrender: bool, r: random.Random) -> str:
    """Basic-strategy-like decision on a hand of total ``t`` (``soft``): H hit, S stand, D double, P split,
    R surrender (with a little noise)."""
    if can_split and cards[0] // 4 == cards[1] // 4:
        rank = cards[0] // 4  # 0 = deuce .. 12 = ace
        v = min(rank + 2, 10) if rank < 12 else 11
        if v in (11, 8) or (v in (2, 3, 7) and up <= 7) or (v == 6 and up <= 6) \
                or (v == 9 and up not in (7, 10, 11)) or (v == 4 and up in (5, 6)):
            return "P"
    if can_surrender and not soft and ((t == 16 and up >= 9) or (t == 15 and up == 10)) and r.random() < 0.8:
        return "R"
    if can_double:
        if not soft and (t == 11 and up <= 10 or t == 10 and up <= 9 or t == 9 and 3 <= up <= 6):
            return "D"
        if soft and ((13 <= t <= 14 and up in (5, 6)) or (15 <= t <= 16 and 4 <= up <= 6)
                     or (17 <= t <= 18 and 3 <= up <= 6)):
            return "D"
    if r.random() < 0.03:  # an imperfect player now and then
        return "H" if t < 21 and r.random() < 0.5 else "S"
    if soft:
        return "H" if t <= 17 or (t == 18 and up >= 9) else "S"
    if t <= 11:
        return "H"
    if t == 12:
        return "S" if 4 <= up <= 6 else "H"
    if t <= 16:
        return "S" if up <= 6 else "H"
    return "S"


def dealer_draws(cards: list[int], hits_soft_17: bool) -> bool:
    return bool(dealer_must_draw(*total(cards), hits_soft_17))


# ---- one round -----------------------------------------------------------------------------------
class Hand:
    __slots__ = ("seat", "no", "cards", "wager", "initial", "doubled", "split", "surrendered", "net", "em")

    def __init__(self, seat: int, no: int, cards: list[int], wager: float, split: bool = False):
        self.seat, self.no, self.cards, self.wager, self.initial = seat, no, cards, wager, wager
        self.doubled, self.split, self.surrendered, self.net, self.em = False, split, False, 0.0, False

    @property
    def blackjack(self) -> bool:
        """:func:`hands.is_blackjack` (the card count and the total tested first: most hands are no two-card 21)."""
        return len(self.cards) == 2 and total(self.cards)[0] == TWENTY_ONE and bool(is_blackjack(2, TWENTY_ONE,
                                                                                                 self.split))

    def live(self) -> bool:
        """:func:`hands.is_live` (a surrendered or even money hand is not, whatever its cards)."""
        if self.surrendered or self.em:
            return False
        t = total(self.cards)[0]
        blackjack = len(self.cards) == 2 and t == TWENTY_ONE and bool(is_blackjack(2, t, self.split))
        return bool(is_live(t, False, blackjack, False))


def _dealer(dealer: list[int]) -> tuple[int, bool]:
    """The dealer's total and whether it is a blackjack."""
    t = total(dealer)[0]
    return t, t == TWENTY_ONE and bool(is_blackjack(len(dealer), t, False))


def _result(h: Hand, dealer_total: int, dealer_bj: bool) -> tuple[str, int]:
    """The subsection a compared hand's result rests on, and its direction (:func:`hands.outcome`)."""
    p = total(h.cards)[0]
    return outcome(p, p == TWENTY_ONE and bool(is_blackjack(len(h.cards), p, h.split)), dealer_total, dealer_bj)


def settle(h: Hand, dealer_total: int, dealer_bj: bool) -> float:
    """The correct net of a hand against the dealer's total (and blackjack) as dealt."""
    if h.em:
        return 0.0
    if h.surrendered:
        return -SURRENDER * h.wager
    sub, direction = _result(h, dealer_total, dealer_bj)
    if direction > 0:
        return (BLACKJACK if sub == "(a)(3)" else WIN) * h.wager
    return direction * h.wager


class Round:
    __slots__ = ("dealer", "hands", "wagers", "events", "status", "has_marker")

    def __init__(self) -> None:
        self.dealer: list[int] = []
        self.hands: list[Hand] = []
        self.wagers: list[list] = []   # [seat, bet, amount, net]
        self.events: list[tuple] = []  # (type, seat, action, amount)
        self.status = "completed"
        self.has_marker = True

    def settle_all(self) -> None:
        d_total, d_bj = _dealer(self.dealer)
        for h in self.hands:
            h.net = settle(h, d_total, d_bj)
        for w in self.wagers:
            w[3] = w[2] * (INSURANCE if d_bj else -1.0) if w[1] == "insurance" else w[2] * EVEN_MONEY

    def cards(self) -> list[int]:
        return self.dealer + [c for h in self.hands for c in h.cards]


def _play(shoe: list[int], pos: int, bets: dict[int, float], r: random.Random, hits_soft_17: bool,
          events: bool) -> tuple[Round, int]:
    """Deal and play one round from ``shoe`` at ``pos``; returns the round and the new position."""
    rd = Round()
    seats = sorted(bets)

    def draw() -> int:
        nonlocal pos
        pos += 1
        return shoe[pos - 1]

    if events:
        for s in seats:
            w = bets[s]
            k = r.random()
            if k < 0.06:
                rd.events += [("wager", s, "place", w + 5), ("wager", s, "withdraw", 5)]
            elif k < 0.12 and w > 5:
                rd.events += [("wager", s, "place", w - 5), ("wager", s, "increase", 5)]
            else:
                rd.events.append(("wager", s, "place", w))
        rd.events.append(("first_card", None, None, None))
    first = {s: draw() for s in seats}
    up = draw()
    second = {s: draw() for s in seats}
    hole = draw()
    rd.dealer = [up, hole]
    hands = {s: [Hand(s, 0, [first[s], second[s]], bets[s])] for s in seats}
    upv = _up_value(up)
    if up >= 48:  # insurance / even money offered
        for s in seats:
            h = hands[s][0]
            blackjack = h.blackjack
            if blackjack and r.random() < 0.5:
                h.em = True
                rd.wagers.append([s, "even_money", h.wager, 0.0])
                rd.events.append(("wager", s, "even_money", h.wager))
            elif not blackjack and r.random() < 0.12:
                rd.wagers.append([s, "insurance", h.wager / 2, 0.0])
                rd.events.append(("wager", s, "insurance", h.wager / 2))
    if not _dealer(rd.dealer)[1]:
        for s in seats:
            queue = hands[s]
            i = 0
            while i < len(queue):
                h = queue[i]
                i += 1
                if h.em or h.blackjack:
                    continue
                split_aces = h.split and h.cards[0] >= 48
                if split_aces:
                    continue  # one card each, already dealt
                while True:
                    t, soft = total(h.cards)
                    if t >= 21:
                        break
                    two = len(h.cards) == 2
                    d = _strategy(h.cards, t, soft, upv, two,
                                  two and len(queue) < 4 and not (h.split and h.cards[0] >= 48),
                                  two and not h.split and len(queue) == 1, r)
                    if d == "P":
                        new = Hand(s, len(queue), [h.cards.pop()], h.wager, split=True)
                        h.split = True
                        h.cards.append(draw())
                        new.cards.append(draw())
                        queue.append(new)
                        if events:
                            rd.events.append(("wager", s, "split", h.wager))
                        if h.cards[0] >= 48:
                            break  # split aces: one card each
                        continue
                    if d == "R":
                        h.surrendered = True
                        if events:
                            rd.events.append(("wager", s, "surrender", h.wager))
                        break
                    if d == "D":
                        if events:
                            rd.events.append(("wager", s, "double", h.wager))
                        h.doubled = True
                        h.wager *= 2
                        h.cards.append(draw())
                        break
                    if d == "S":
                        break
                    h.cards.append(draw())
        if any(h.live() for hs in hands.values() for h in hs):
            while dealer_draws(rd.dealer, hits_soft_17):
                rd.dealer.append(draw())
    rd.hands = [h for s in seats for h in hands[s]]
    rd.settle_all()
    return rd, pos


# ---- faults ---------------------------------------------------------------------------------------
def _outcome_kind(h: Hand, dealer: list[int]) -> str:
    """The citation the correct result of a compared hand rests on."""
    sub = _result(h, *_dealer(dealer))[0]
    return sub if sub == "loss" else f"{S}{sub}"


def _fault(rd: Round, citation: str, r: random.Random, limits: tuple[int, int], counts: list[int],
           decks: int, shoe: list[int], pos: int, hits_soft_17: bool) -> int | None:
    """Break ``citation`` in ``rd`` (and nothing else). Returns the new shoe position, or None if not possible."""
    compared = [h for h in rd.hands if not h.surrendered and not h.em]
    if citation in (f"{S}(a)(1)", f"{S}(a)(2)", f"{S}(a)(3)", f"{S}(b)", "loss"):
        cands = [h for h in compared if _outcome_kind(h, rd.dealer) == citation]
        if not cands:
            return None
        h = r.choice(cands)
        if h.net > 0:
            h.net = r.choice([0.0, -h.wager])
        elif h.net < 0:
            h.net = r.choice([0.0, WIN * h.wager])
        else:
            h.net = r.choice([-h.wager, WIN * h.wager])
        return pos
    if citation == f"{S}(a)":
        by_seat: dict[int, list[Hand]] = {}
        for h in rd.hands:
            by_seat.setdefault(h.seat, []).append(h)
        side = {w[0] for w in rd.wagers}
        cands = [s for s, hs in by_seat.items() if len(hs) == 1 and s not in side]
        if not cands:
            return None
        s = r.choice(cands)
        h = by_seat[s][0]
        lo, hi = limits
        below = r.random() < 0.5
        new = float(lo - 5 if lo > 5 else lo / 2) if below else float(hi + 5 * r.randint(1, 20))
        h.initial = new
        h.wager = 2 * new if h.doubled else new
        h.net = settle(h, *_dealer(rd.dealer))
        rd.events = [e if e[1] != s else
                     (e[0], s, e[2], h.wager if e[2] == "surrender" else new) for e in rd.events
                     if not (e[1] == s and e[2] in ("increase", "withdraw"))]
        return pos
    if citation == f"{S}(c)":
        if not rd.has_marker:
            return None
        i = next(k for k, e in enumerate(rd.events) if e[0] == "first_card")
        s = r.choice([h.seat for h in rd.hands])
        action = r.choice(["increase", "withdraw", "place"])
        rd.events.insert(i + 1, ("wager", s, action, 5.0 if action != "place" else float(limits[0])))
        return pos
    if citation == f"{S}(e)":
        conf = [k for k, e in enumerate(rd.events) if e[2] in ("double", "split", "surrender", "insurance",
                                                                "even_money")]
        if not conf:
            return None
        k = r.choice(conf)
        s = rd.events[k][1]
        rd.events.insert(k + 1 + r.randint(0, len(rd.events) - k - 1),
                         ("wager", s, r.choice(["increase", "withdraw"]), 5.0))
        rd.events = [e for e in rd.events if e[0] != "first_card"]  # else (c) would show it too
        rd.has_marker = False
        return pos
    if citation == "paytable":
        return pos if _paytable_fault(rd, r) else None
    if citation == "void":
        return _void_paid(rd, r, pos)
    if citation == "integrity":
        return pos if _integrity_fault(rd, r, counts, decks) else None
    if citation == "house-rules":
        return _dealer_fault(rd, shoe, pos, hits_soft_17)
    raise ValueError(citation)


def _paytable_fault(rd: Round, r: random.Random) -> bool:
    options = []
    for h in rd.hands:
        if h.em:
            continue
        if h.surrendered:
            options.append(lambda h=h: setattr(h, "net", -h.wager))
        elif h.net > 0:
            if h.blackjack:
                options.append(lambda h=h: setattr(h, "net", WIN * h.wager))
            elif h.doubled:
                options.append(lambda h=h: setattr(h, "net", h.initial))
            else:
                options.append(lambda h=h: setattr(h, "net", round(h.wager * 0.9, 2)))
        elif h.net < 0 and not h.surrendered:
            options.append(lambda h=h: setattr(h, "net", -h.wager - 5))
    for w in rd.wagers:
        if w[1] == "insurance" and w[3] > 0:
            options.append(lambda w=w: w.__setitem__(3, w[2]))
        elif w[1] == "insurance":
            options.append(lambda w=w: w.__setitem__(3, -w[2] / 2))
        else:
            options.append(lambda w=w: w.__setitem__(3, w[2] * 1.5))
    if not options:
        return False
    r.choice(options)()
    return True


def _void_paid(rd: Round, r: random.Random, pos: int) -> int:
    """The round is declared void or dead (every net 0), but a hand is paid anyway."""
    rd.status = r.choice(["void", "dead"])
    for w in rd.wagers:
        w[3] = 0.0
    for h in rd.hands:
        h.net = 0.0
    h = r.choice(rd.hands)
    h.net = WIN * h.wager
    return pos


def _integrity_fault(rd: Round, r: random.Random, counts: list[int], decks: int) -> bool:
    """Replace a card by a same-rank card whose copies are all recorded already (else by the joker)."""
    places = [(rd.dealer, i) for i in range(len(rd.dealer))] + [(h.cards, i) for h in rd.hands
                                                                 for i in range(len(h.cards))]
    r.shuffle(places)
    for cards, i in places:
        rank = cards[i] // 4
        spare = [rank * 4 + s for s in range(4) if counts[rank * 4 + s] >= decks and rank * 4 + s != cards[i]]
        if spare:
            cards[i] = r.choice(spare)
            return True
    if r.random() < 0.5:
        return False  # try another round: excess copies are the commoner fault
    cards, i = places[0]
    cards[i] = JOKER
    return True


def _dealer_fault(rd: Round, shoe: list[int], pos: int, hits_soft_17: bool) -> int | None:
    """The dealer stops one card early, or draws one card too many; hands settled on the cards as dealt."""
    if not any(h.live() for h in rd.hands) or rd.status != "completed":
        return None
    if len(rd.dealer) > 2:
        rd.dealer.pop()
        pos -= 1  # the card stays in the shoe
    elif total(rd.dealer)[0] < 21 and not dealer_draws(rd.dealer, hits_soft_17):
        rd.dealer.append(shoe[pos])
        pos += 1
    else:
        return None
    rd.settle_all()
    return pos


# ---- tables, shoes, days -----------------------------------------------------------------------
class _Cols:
    """Columnar accumulators of the stored schema."""

    def __init__(self) -> None:
        self.r: dict[str, list] = {k: [] for k in ("round_id", "table_id", "dealer_id", "started_at", "shoe_id",
                                                    "round_seq", "status", "table_min", "table_max")}
        self.dealer: list[int] = []
        self.dealer_n: list[int] = []
        self.hands: dict[str, list] = {k: [] for k in ("seat", "hand", "wager", "initial_wager", "doubled",
                                                       "split", "surrendered", "net")}
        self.hand_cards: list[int] = []
        self.hand_cards_n: list[int] = []
        self.hands_n: list[int] = []
        self.wagers: dict[str, list] = {k: [] for k in ("seat", "bet", "amount", "net")}
        self.wagers_n: list[int] = []
        self.events: dict[str, list] = {k: [] for k in ("type", "seat", "action", "amount")}
        self.events_n: list[int] = []

    def add(self, rd: Round, meta: tuple) -> None:
        for k, v in zip(self.r, meta, strict=True):
            self.r[k].append(v)
        self.dealer += rd.dealer
        self.dealer_n.append(len(rd.dealer))
        hs = self.hands
        for h in rd.hands:
            hs["seat"].append(h.seat)
            hs["hand"].append(h.no)
            hs["wager"].append(h.wager)
            hs["initial_wager"].append(h.initial)
            hs["doubled"].append(h.doubled)
            hs["split"].append(h.split)
            hs["surrendered"].append(h.surrendered)
            hs["net"].append(h.net)
            self.hand_cards += h.cards
            self.hand_cards_n.append(len(h.cards))
        self.hands_n.append(len(rd.hands))
        for w in rd.wagers:
            for k, v in zip(self.wagers, w, strict=True):
                self.wagers[k].append(v)
        self.wagers_n.append(len(rd.wagers))
        for e in rd.events:
            for k, v in zip(self.events, e, strict=True):
                self.events[k].append(v)
        self.events_n.append(len(rd.events))

    def table(self) -> pa.Table:
        n = len(self.r["round_id"])

        def offsets(counts: list[int]) -> pa.Array:
            return pa.array(np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int32))

        def lst(counts: list[int], values: pa.Array) -> pa.Array:
            return pa.ListArray.from_arrays(offsets(counts), values)

        cards = lambda v: pa.array(np.asarray(v, dtype=np.int8), pa.int8())  # noqa: E731
        hand_cards = lst(self.hand_cards_n, cards(self.hand_cards))
        h = self.hands
        hands = pa.StructArray.from_arrays(
            [pa.array(h["seat"], pa.int32()), pa.array(h["hand"], pa.int32()), hand_cards,
             pa.array(h["wager"], pa.float64()), pa.array(h["initial_wager"], pa.float64()),
             pa.array(h["doubled"], pa.bool_()), pa.array(h["split"], pa.bool_()),
             pa.array(h["surrendered"], pa.bool_()), pa.array(h["net"], pa.float64())],
            fields=list(BLACKJACK_HAND))
        w = self.wagers
        wagers = pa.StructArray.from_arrays(
            [pa.array(w["seat"], pa.int32()), pa.array(w["bet"], pa.string()),
             pa.array(w["amount"], pa.float64()), pa.array(w["net"], pa.float64())], fields=list(WAGER))
        e = self.events
        ne = len(e["type"])
        null = {f.name: pa.nulls(ne, f.type) for f in EVENT}
        events = pa.StructArray.from_arrays(
            [pa.array(e["type"], pa.string()), pa.array(e["seat"], pa.int32()), pa.array(e["action"], pa.string()),
             pa.array(e["amount"], pa.float64())] + [null[f.name] for f in list(EVENT)[4:]], fields=list(EVENT))
        r = self.r
        cols = {
            "round_id": pa.array(r["round_id"], pa.string()),
            "table_id": pa.array(r["table_id"], pa.string()),
            "dealer_id": pa.array(r["dealer_id"], pa.string()),
            "started_at": pa.array(np.asarray(r["started_at"], dtype="datetime64[us]"), pa.timestamp("us", tz="UTC")),
            "utc_offset": pa.array(np.full(n, UTC_OFFSET, np.int16)),
            "shoe_id": pa.array(r["shoe_id"], pa.string()),
            "round_seq": pa.array(r["round_seq"], pa.int32()),
            "status": pa.array(r["status"], pa.string()),
            "wagers": lst(self.wagers_n, wagers),   # empty lists, as ingest stores them
            "events": lst(self.events_n, events),
            "source_file": pa.array(["simulate"] * n, pa.string()),
            "source_line": pa.array(np.arange(1, n + 1, dtype=np.int64)),
            "dealer_cards": lst(self.dealer_n, cards(self.dealer)),
            "table_min": pa.array(r["table_min"], pa.float64()),
            "table_max": pa.array(r["table_max"], pa.float64()),
            "hands": lst(self.hands_n, hands),
        }
        schema = schema_for(GAME)
        return table_of(cols, schema, n)


def simulate(n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, tables: int = 4, decks: int = 6,
             start: str = "2025-06-01", dealer_faults: bool = False,
             dealer_hits_soft_17: bool = False) -> tuple[pa.Table, pd.DataFrame]:
    """``n_rounds`` blackjack rounds over ``tables`` tables, and the truth of the injected faults.

    Faults cover every citation of the rules; ``house-rules`` (the dealer's
    drawing) only with ``dealer_faults``, since that check is off by default.
    """
    r = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    cols = _Cols()
    truth: list[tuple[str, str]] = []
    kinds = [c for c in CITATIONS if c != "house-rules" or dealer_faults]
    per_table = [n_rounds // tables + (t < n_rounds % tables) for t in range(tables)]
    day0 = datetime.fromisoformat(start).replace(hour=OPEN_HOUR, tzinfo=TZ)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for t, n_t in enumerate(per_table):
        table_id = f"BJ-{t + 1:02d}"
        limits = LIMITS[t % len(LIMITS)]
        dealers = [f"D{1000 + 10 * t + k}" for k in range(5)]
        clock = day0 + timedelta(seconds=r.randint(0, 600))
        day, close = day0, day0 + timedelta(hours=CLOSE_HOURS)
        shoe_no, seq, pos, cut, shoe, counts = 0, 0, 0, 0, [], [0] * 53
        shoe_id = ""
        players: dict[int, float] = {}
        pending: str | None = None
        dealer_k, dealer_until = 0, clock + timedelta(minutes=r.randint(20, 60))
        for i in range(n_t):
            if clock >= close:  # next gaming day
                day += timedelta(days=1)
                clock, close = day + timedelta(seconds=r.randint(0, 600)), day + timedelta(hours=CLOSE_HOURS)
                pos = cut  # a fresh shoe each day
            if pos >= cut:
                shoe_no += 1
                shoe = np_rng.permutation(np.repeat(np.arange(52, dtype=np.int64), decks)).tolist()
                pos, seq, counts = 1, 0, [0] * 53  # burn one card
                cut = int(len(shoe) * r.uniform(0.65, 0.8))
                shoe_id = f"{table_id}-{clock.strftime('%Y%m%d')}-S{shoe_no:03d}"
                clock += timedelta(seconds=r.randint(120, 300))
            if clock >= dealer_until:
                dealer_k = (dealer_k + 1) % len(dealers)
                dealer_until = clock + timedelta(minutes=r.randint(20, 60))
            _seat_players(players, r, limits)
            seq += 1
            with_events = r.random() < 0.9
            rd, new_pos = _play(shoe, pos, dict(players), r, dealer_hits_soft_17, with_events)
            rd.has_marker = with_events
            if r.random() < 0.003:
                rd.status = r.choice(["void", "dead"])
                for h in rd.hands:
                    h.net = 0.0
                for w in rd.wagers:
                    w[3] = 0.0
            round_id = f"BJ-{clock.strftime('%Y%m%d')}-{t + 1:02d}{i:07d}"
            if pending is None and r.random() < fault_rate:
                pending = r.choice(kinds)
            if pending is not None:  # a fault waits for a round that can show it
                if rd.status != "completed":
                    done = _void_paid(rd, r, new_pos) if pending == "void" else None
                else:
                    done = _fault(rd, pending, r, limits, counts, decks, shoe, new_pos, dealer_hits_soft_17)
                if done is not None:
                    new_pos = done
                    truth.append((round_id, pending))
                    pending = None
            pos = new_pos
            for c in rd.cards():
                counts[c] += 1
            started = int((clock - epoch) / timedelta(microseconds=1))
            cols.add(rd, (round_id, table_id, dealers[dealer_k], started, shoe_id, seq, rd.status,
                          float(limits[0]), float(limits[1])))
            clock += timedelta(seconds=r.randint(40, 100) + 4 * len(rd.hands))
    return cols.table(), pd.DataFrame(truth, columns=["round_id", "citation"])


def _seat_players(players: dict[int, float], r: random.Random, limits: tuple[int, int]) -> None:
    """Patrons come and go (1-7 seats taken); a patron's bet is a multiple of 5 within the limits."""
    lo, hi = limits
    for s in range(1, 8):
        if s in players:
            if r.random() < 0.03:
                del players[s]
            elif r.random() < 0.2:
                players[s] = _bet(r, lo, hi, players[s])
        elif r.random() < 0.02 or (not players and s == r.randint(1, 7)):
            players[s] = _bet(r, lo, hi, None)
    if not players:
        players[r.randint(1, 7)] = _bet(r, lo, hi, None)


def _bet(r: random.Random, lo: int, hi: int, last: float | None) -> float:
    base = lo * r.choice([1, 1, 1, 2, 2, 3, 4, 5, 10]) if last is None else last * r.choice([0.5, 1, 1, 1.5, 2])
    base = 5 * round(base / 5)
    return float(min(max(base, lo), hi))
