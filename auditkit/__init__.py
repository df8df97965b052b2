"""auditkit: audits casino table games against 68 IAC 10."""

__version__ = "0.1.0"
