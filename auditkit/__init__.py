"""auditkit: audits casino table games against 68 IAC 10.

The public API is imported lazily so that ``import auditkit`` stays light::

    import auditkit as ak
    store = ak.Store("out/store")
    ak.ingest_paths(["logs/"], store)
    findings, checked = ak.collect(store, ak.load_config("casino.toml"))
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Store": "store", "SourceRecord": "store",
    "ingest_paths": "ingest.sources", "IngestReport": "ingest.sources",
    "parse_record": "ingest.records", "BadRecord": "ingest.records",
    "Config": "paytables", "load_config": "paytables", "ConfigError": "paytables",
    "collect": "validate", "validate_records": "validate", "validate_tables": "validate",
    "validate_store": "validate", "validate_into_store": "validate",
    "RULES": "rules.registry", "catalog": "rules.registry",
    "write_csv": "report", "write_findings_parquet": "report", "summarize": "summaries",
    "payout_totals": "summaries", "safe_cell": "report",
    "simulate": "simulate",
    "parse_card": "cards", "card_str": "cards", "CardError": "cards",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'auditkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
