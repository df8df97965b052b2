"""Command line: ``auditkit ingest | validate | simulate | rules | run | report | score``.

One module per command (``add_parser(sub)`` and ``run(args) -> exit status``);
:mod:`auditkit.cli.main` builds the parser and maps every outcome to the exit
status: 0 no finding, 1 findings written, 2 the run could not be done.
"""

from .common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError
from .main import build_parser, main

__all__ = ["main", "build_parser", "UsageError", "EXIT_CLEAN", "EXIT_FINDINGS", "EXIT_ERROR"]
