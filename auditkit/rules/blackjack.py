"""Rules of blackjack: to be written (see docs/architecture.md)."""
