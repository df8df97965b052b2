"""How a run is executed: its worker processes, or the Dask cluster it runs on. Checked here once, for
the command line (``--workers``, ``--engine``, ``--scheduler``) and the job file (``workers``,
``[engine] kind``, ``scheduler``), with the same messages: where, the key as its user wrote it, the value
and the reason."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..paytables import ConfigError
from ..values import number_reason, show

__all__ = ["ENGINES", "SCHEDULER", "COMMAND_LINE", "JOB_FILE", "Engine", "engine_options"]

ENGINES = ("local", "dask")
SCHEDULER = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://\S+$")  # the schemes dask.distributed knows
COMMAND_LINE = ("--workers", "--engine", "--scheduler")
JOB_FILE = ("workers", "engine.kind", "engine.scheduler")
"""The names of the three options where their user writes them."""


@dataclass(frozen=True)
class Engine:
    """The executor asked for: ``kind`` local (``workers`` processes; None: the machine's cores) or
    dask (the cluster at ``scheduler``)."""

    workers: int | None = None
    kind: str = "local"
    scheduler: str | None = None


def engine_options(workers: Any, kind: Any, scheduler: Any, where: str,
                   keys: tuple[str, str, str] = COMMAND_LINE) -> Engine:
    """The options checked: ConfigError names ``where`` (a file, or ``command line``), the key (``keys``:
    the names of workers, kind and scheduler there), the value and the reason. ``kind`` None is dask
    when a scheduler is given, else local."""
    if kind is None:
        kind = "dask" if scheduler is not None else "local"
    if workers is not None and (reason := number_reason(workers, {"min": 1}, integer=True)):
        raise ConfigError(f"{where}: {keys[0]} = {show(workers)}: {reason}")
    if kind not in ENGINES:
        raise ConfigError(f"{where}: {keys[1]} = {show(kind)}: must be one of {', '.join(ENGINES)}")
    if scheduler is not None and (not isinstance(scheduler, str) or not SCHEDULER.match(scheduler)):
        raise ConfigError(f"{where}: {keys[2]} = {show(scheduler)}: must be a scheduler address "
                          "(tcp://host:8786; schemes: tcp, tls, inproc, ucx, ws, wss)")
    if kind == "dask" and scheduler is None:
        raise ConfigError(f"{where}: {keys[1]} = \"dask\": needs {keys[2]} (the cluster's scheduler address, "
                          "tcp://host:8786)")
    if kind == "local" and scheduler is not None:
        raise ConfigError(f"{where}: {keys[2]} = {show(scheduler)}: only with {keys[1]} = \"dask\"")
    return Engine(workers, kind, scheduler)
