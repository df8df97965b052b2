"""What the raw sources of an import profile and their readers (:mod:`.source`, :mod:`.sheets`,
:mod:`.nested`) share: the row-number column, a JSON value as a cell's text, an optional reader's module."""

from __future__ import annotations

import json
from typing import Any

from ...paytables import ConfigError

__all__ = ["ROW", "json_text", "need"]

ROW = "__row"


def json_text(value: Any) -> str | None:
    """A JSON value as a cell's text: a string as it is (None when blank), anything else as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    return json.dumps(value, ensure_ascii=False)


def need(module: str, what: str) -> Any:
    """An optional reader's module, or a ConfigError saying how to install it (exit 2, not a traceback)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"reading {what} needs {module.split('.')[0].replace('_', '-')}: "
                          "pip install 'auditkit[sources]'") from None
