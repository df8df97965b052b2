"""Card codes and lookup tables."""

import numpy as np
import pytest

from auditkit.cards import (
    JOKER,
    NO_CARD,
    RANK,
    SUIT,
    CardError,
    card_str,
    parse_card,
    parse_cards,
)
from auditkit.games.baccarat.tableau import BACCARAT_POINTS
from auditkit.games.blackjack.hands import BLACKJACK_POINTS


def test_every_card_round_trips():
    for code in range(53):
        assert parse_card(card_str(code)) == code


@pytest.mark.parametrize("text, code", [("2c", 0), ("AS", 51), ("as", 51), ("10d", 33), ("Td", 33), ("jk", JOKER)])
def test_parse_case_insensitive_and_10(text, code):
    assert parse_card(text) == code


@pytest.mark.parametrize("text", ["1c", "Ax", "", " Ah", "Ah ", "JOKER", "11c", None, 5])
def test_bad_cards_name_the_card(text):
    with pytest.raises(CardError, match="card"):
        parse_card(text)


def test_parse_cards_reports_first_bad():
    with pytest.raises(CardError, match="'Zz'"):
        parse_cards(["Ah", "Zz", "Qq"])


def test_lookup_tables_handle_padding_and_joker():
    codes = np.array([[parse_card("Ah"), parse_card("Kd"), NO_CARD], [parse_card("9s"), parse_card("5c"), JOKER]],
                     dtype=np.int8)
    assert BACCARAT_POINTS[codes].tolist() == [[1, 0, 0], [9, 5, 0]]
    assert BLACKJACK_POINTS[codes].tolist() == [[1, 10, 0], [9, 5, 0]]
    assert RANK[codes].tolist() == [[12, 11, -1], [7, 3, 13]]
    assert SUIT[codes].tolist() == [[2, 1, -1], [3, 0, -1]]
