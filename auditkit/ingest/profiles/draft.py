"""A draft profile as a structure (sections of keys, values and comments), written as TOML text
with its ``# TODO:`` comments (``auditkit profile suggest``): no TOML is made by joining strings."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

__all__ = ["Draft", "toml_value", "TODO"]

TODO = "TODO: "  # a value that starts so is a question the draft leaves open: the profile refuses it
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(value: Any) -> str:
    """A TOML value: strings (a literal '...' string for a pattern with backslashes), booleans, numbers,
    dates, lists and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        if "\\" in value and "'" not in value and "\n" not in value:
            return f"'{value}'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML value for {value!r}")


def toml_key(key: str, dotted: bool = False) -> str:
    """A key bare when it can be (``hands.seat`` dotted when ``dotted``), else quoted."""
    parts = key.split(".") if dotted else [key]
    if all(_BARE.match(p) for p in parts):
        return ".".join(parts)
    return json.dumps(key, ensure_ascii=False)


class Draft:
    """Sections in order, each a list of entries: (key, value, comment) or a comment line alone."""

    def __init__(self, header: list[str]) -> None:
        self.header = header
        self.sections: dict[str | None, list[tuple[str | None, Any, str | None, bool]]] = {None: []}

    def section(self, name: str | None) -> Draft:
        self.sections.setdefault(name, [])
        self._current = name
        return self

    def set(self, key: str, value: Any, comment: str | None = None, *, section: str | None = "",
            dotted: bool = False) -> None:
        where = self._current if section == "" else section
        self.sections.setdefault(where, []).append((key, value, comment, dotted))

    def note(self, text: str, *, section: str | None = "") -> None:
        where = self._current if section == "" else section
        self.sections.setdefault(where, []).append((None, None, text, False))

    def has(self, key: str, section: str | None) -> bool:
        return any(k == key for k, _, _, _ in self.sections.get(section, []))

    def text(self) -> str:
        lines = [f"# {h}" for h in self.header]
        for name, entries in self.sections.items():
            if name is None and not entries:
                continue
            if name is not None:
                if not entries:
                    continue
                lines += ["", f"[{name}]"]
            for key, value, comment, dotted in entries:
                if key is None:
                    lines += [f"# {line}" for line in (comment or "").splitlines()]
                    continue
                line = f"{toml_key(key, dotted)} = {toml_value(value)}"
                lines.append(f"{line}  # {comment}" if comment else line)
        return "\n".join(lines) + "\n"
