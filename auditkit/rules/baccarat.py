"""Rules of baccarat: to be written (see docs/architecture.md)."""
