"""Readers of hand-history logs: JSON Lines (plain or gzip) and CSV."""

MAX_LINE = 1 << 20
"""The longest line read by default, in bytes (1 MiB); a longer one is quarantined without being
held in memory (``auditkit ingest --max-line-bytes``)."""
