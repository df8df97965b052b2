"""Rules of three_card_poker: to be written (see docs/architecture.md)."""
