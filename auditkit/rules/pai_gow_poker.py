"""Rules of pai_gow_poker: to be written (see docs/architecture.md)."""
