"""Poker hand evaluators: three-card, five-card with the joker, and pai gow house ways."""
