"""Cutting one cell into the part a field takes (``pattern``, ``group``, ``only``, ``index`` on a
field), and the bounds every pattern of a profile is held to: no pattern that can backtrack without
bound (a repetition inside a repetition, alternatives that can match the same text under a
repetition, more than :data:`MAX_UNBOUNDED` repetitions without an upper count), no repetition count
or template width above :data:`MAX_COUNT`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fields import FieldSpec

__all__ = ["compile_pattern", "check_format_spec", "cutter", "MAX_COUNT"]

MAX_COUNT = 1000  # the largest repetition count of a pattern, and width or precision of a template
MAX_UNBOUNDED = 4  # repetitions without an upper count in one pattern (a cell of n characters: n**4 steps at most)
_ANY = None  # a first-character set that may hold any character
_LEFT = object()  # an element ``only`` leaves out
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT))


class Unbounded(ValueError):
    """A pattern that can backtrack without bound, or a count beyond :data:`MAX_COUNT`."""


def compile_pattern(text: str) -> re.Pattern:
    """``text`` compiled, once it is known to run in time linear in the cell (``re.error`` or
    :class:`Unbounded` with the reason otherwise)."""
    compiled = re.compile(text)
    tree = P.parse(text)
    _walk(tree, 0)
    if _unbounded(tree) > MAX_UNBOUNDED:
        raise Unbounded(f"more than {MAX_UNBOUNDED} repetitions without an upper count (+, *, {{n,}}): a cell "
                        "could take a time that grows as its length to that power")
    return compiled


def _unbounded(items: Any) -> int:
    """How many repetitions without an upper count the pattern holds."""
    n = 0
    for op, av in items:
        if op in _REPEATS:
            n += (av[1] == C.MAXREPEAT) + _unbounded(av[2])
        elif op is C.SUBPATTERN:
            n += _unbounded(av[-1])
        elif op is C.BRANCH:
            n += sum(_unbounded(alt) for alt in av[1])
        elif op in (C.ASSERT, C.ASSERT_NOT):
            n += _unbounded(av[1])
    return n


def _walk(items: Any, under: int) -> None:
    """Refuse a repetition (of more than one) that holds a repetition of varying count, or a choice
    whose alternatives may begin with the same character."""
    for op, av in items:
        if op in _REPEATS:
            lo, hi, body = av
            if lo > MAX_COUNT or (hi != C.MAXREPEAT and hi > MAX_COUNT):
                raise Unbounded(f"a repetition count above {MAX_COUNT}")
            many = hi > 1
            if many and under and lo != hi:
                raise Unbounded("a repetition inside a repetition can backtrack without bound "
                                "(such as (a+)+): repeat one thing once")
            _walk(body, under + (1 if many else 0))
        elif op is C.SUBPATTERN:
            _walk(av[-1], under)
        elif op is C.BRANCH:
            alts = av[1]
            if under:
                seen: set[str] = set()
                for alt in alts:
                    first = _first(alt)
                    if first is _ANY or first & seen:
                        raise Unbounded("alternatives that may match the same text inside a repetition can "
                                        "backtrack without bound (such as (a|ab)*): make them begin differently")
                    seen |= first
            for alt in alts:
                _walk(alt, under)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            _walk(av[1], under)
        elif op is C.GROUPREF_EXISTS:
            for part in av[1:]:
                if part is not None:
                    _walk(part, under)
        elif op is getattr(C, "ATOMIC_GROUP", None):
            _walk(av, under)


def _first(items: Any) -> set[str] | None:
    """The characters a sequence's match may begin with (None: any, or it may be empty)."""
    for op, av in items:
        if op is C.LITERAL:
            return {chr(av)}
        if op is C.IN:
            chars: set[str] = set()
            for kind, x in av:
                if kind is C.LITERAL:
                    chars.add(chr(x))
                elif kind is C.RANGE and x[1] - x[0] <= 256:
                    chars.update(map(chr, range(x[0], x[1] + 1)))
                else:
                    return _ANY
            return chars
        if op is C.SUBPATTERN:
            return _first(av[-1])
        if op is C.AT:
            continue
        return _ANY
    return _ANY


def check_format_spec(spec: str) -> None:
    """A template's format spec with no width or precision above :data:`MAX_COUNT` (ValueError)."""
    for digits in re.findall(r"\d+", spec):
        if len(digits) > 4 or int(digits) > MAX_COUNT:
            raise ValueError(f"a width or precision above {MAX_COUNT}")


def cutter(spec: FieldSpec, read_one: Callable[[str], Any], many: bool) -> Callable[[str], Any]:
    """The reader of a cell cut by ``spec`` (split or json, then pattern, only, index): each part
    kept read by ``read_one``; a list of them when ``many`` (cards, dice) and no ``index``."""

    pattern, group, only, index = spec.pattern, spec.group, spec.only or {}, spec.index
    pieces = spec.split is not None or spec.json

    def part(m: re.Match) -> Any:
        if any(m[g] not in allowed for g, allowed in only.items()):
            return _LEFT
        return m[group] if group else m[0]  # None: the group took no part in the match

    def matches(text: str) -> list[re.Match]:
        """The pattern's match of the whole text, or with ``repeat`` its matches one after another
        (spaces between them allowed, nothing else)."""
        assert pattern is not None
        t = text.strip()
        if not spec.repeat:
            m = pattern.fullmatch(t)
            if m is None:
                raise ValueError(f"{text!r} does not match the pattern {pattern.pattern!r}")
            return [m]
        found, at = [], 0
        while at < len(t):
            m = pattern.match(t, at)
            if m is None or m.end() == at:
                raise ValueError(f"{text!r}: {t[at:at + 20]!r} does not match the pattern {pattern.pattern!r}")
            found.append(m)
            at = m.end()
            while at < len(t) and t[at].isspace():
                at += 1
        return found

    def read(cell: str) -> Any:
        items = [str(x) for x in split_cell(cell, spec)] if pieces else [cell]
        if pattern is None:
            kept = [x.strip() for x in items]
        else:
            kept = [p for x in items for m in matches(x) if (p := part(m)) is not _LEFT]
        if index is not None:
            if not -len(kept) <= index < len(kept):
                raise ValueError(f"{cell!r} has {len(kept)} element(s), no element {index}")
            kept = [kept[index]]
        if many:
            out: list[Any] = []
            for p in kept:
                if p is None:
                    raise ValueError(f"{cell!r}: the group {group!r} is empty in an element")
                v = read_one(p)
                out.extend(v if isinstance(v, list) else [v])
            return out
        if len(kept) != 1:
            raise ValueError(f"{cell!r} gives {len(kept)} values, not one")
        return None if not kept[0] and group else read_one(kept[0])  # an empty group: no value

    return read


def split_cell(cell: str, spec: FieldSpec) -> list[Any]:
    """The items of one cell: a JSON list, a string split by the field's ``split``, or the cell."""
    if spec.json:
        try:
            items = json.loads(cell)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON list: {cell!r} ({exc.msg})") from exc
        if not isinstance(items, list):
            raise ValueError(f"not a JSON list: {cell!r}")
        return items
    if spec.split is not None:
        return [x for x in (cell.split(spec.split) if spec.split.strip() else cell.split()) if x.strip()]
    return [cell]
