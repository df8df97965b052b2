"""The exit statuses of every command (and of a job's run record)."""

EXIT_CLEAN = 0     # no finding
EXIT_FINDINGS = 1  # findings written
EXIT_ERROR = 2     # the run could not be done (bad arguments, unreadable input or configuration, locked store, ...)
