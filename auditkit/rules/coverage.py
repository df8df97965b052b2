"""What the data cannot show: the kinds of evidence a rule needs, and which rounds lack them.

A source that does not record some evidence for a round (a vendor export without suits, say)
names it in the round's ``not_recorded`` column; a stored column a kind stands for that is null
for a round (a JSONL log without announced totals) also means the round lacks it. A rule that
needs a kind the round lacks cannot check it: the engine neither flags nor passes that round,
and counts it as *not checkable* (by kind) instead.
"""

from __future__ import annotations

__all__ = ["EVIDENCE"]

EVIDENCE: dict[str, str] = {
    "suits": "the cards' suits (without them suits are invented)",
    "ranks": "the cards' ranks (without them only point values: T J Q K indistinguishable)",
    "announced": "the totals the dealer announced",
    "times": "the rounds' event times (without them started_at is made from a stated date and the order)",
    "order": "the order of the rounds in the shoe and of the cards in the hand",
    "wagers": "the wagers and their nets",
    "events": "the events of the round (decisions, wager actions, dice, exposed cards)",
    "dealer": "the dealer's id",
    "shoe": "the shoe's id",
    "round_id": "the round's id as the table wrote it (without it the profile made the ids)",
}
"""The kinds of evidence a round may lack, each with what it is."""
