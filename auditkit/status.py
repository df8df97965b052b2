"""The exit statuses of every command (and of a job's run record), and the severities of findings."""

EXIT_CLEAN = 0     # no finding
EXIT_FINDINGS = 1  # findings written
EXIT_ERROR = 2     # the run could not be done (bad arguments, unreadable input or configuration, locked store, ...)

SEVERITIES = ("high", "medium", "low")
"""The severities of the rules, most severe first: the one order of reports, charts and summaries."""
SEVERITY_RANK = {s: len(SEVERITIES) - i for i, s in enumerate(SEVERITIES)}
"""A severity's rank, the most severe highest (``fail_on``, ``report --severity``: this rank and above)."""
