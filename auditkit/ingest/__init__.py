"""Readers of hand-history logs: JSON Lines (plain or gzip) and CSV."""
