"""Checks of 68 IAC 10, one module per regulation section, registered in :mod:`.registry`."""

from .registry import RULES, Hits, Rule, rules_for

__all__ = ["RULES", "Hits", "Rule", "rules_for"]
