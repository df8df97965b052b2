"""Vectorized field readers of the bulk path: parsed JSON columns to stored columns, plus a mask.

Each reader takes an Arrow column parsed by ``pyarrow.json`` and returns the
stored column and ``ok``, a numpy mask of the rows it vouches for: rows whose
value :func:`~auditkit.ingest.records.parse_record` would read to exactly that
stored value. A row it does not vouch for (a bad value, or one it does not try
to judge: non-ASCII edges of a required text, a timestamp outside the plain
``YYYY-MM-DDTHH:MM:SS[.f]±HH:MM`` shape) goes to the per-line reader, which
stores it or gives the reason. So a reader may be stricter than the spec, never
looser.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cards import NAMES
from ..schema import CARDS, EVENT, STATUSES, WAGER
from .records import MAX_AMOUNT

__all__ = ["Col", "np_mask", "valid", "text", "integer", "money", "flag", "choice", "cards", "timestamps", "status",
           "wagers", "events", "struct_items", "rebuild_list", "any_per_row", "child", "only", "dice"]

Col = pa.Array
INT32 = 2**31
_NAMES = pa.array(list(NAMES))
_CODES = np.fromiter(NAMES.values(), np.int8, count=len(NAMES))
_STAMP = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$"


def np_mask(arr: Col) -> np.ndarray:
    """A boolean column as numpy, null read as False."""
    return pc.fill_null(arr, False).to_numpy(zero_copy_only=False)


def valid(arr: Col) -> np.ndarray:
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _string_bytes(arr: Col) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(UTF-8 bytes, start, length) of each string of a string array (zero copy)."""
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset: arr.offset + n + 1].astype(np.int64)
    data = arr.buffers()[2]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return np.concatenate([data, np.zeros(1, np.uint8)]), offsets[:-1], np.diff(offsets)


def text(arr: Col) -> np.ndarray:
    """Rows a required text field reads well on: present, printable ASCII at both ends (nothing
    for ``str.strip`` or NFC to change there)."""
    data, start, length = _string_bytes(arr)
    first, last = data[start], data[np.maximum(start + length - 1, 0)]
    return valid(arr) & (length > 0) & (first > 32) & (first < 127) & (last > 32) & (last < 127)



def integer(arr: Col, lo: int | None, hi: int | None, required: bool) -> np.ndarray:
    """Rows an integer field (JSON-parsed as int64) reads well on: in [lo, hi] and in int32."""
    v = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)
    ok = (v >= (lo if lo is not None else -INT32)) & (v <= (hi if hi is not None else INT32 - 1))
    ok &= (v >= -INT32) & (v < INT32)
    present = valid(arr)
    return (ok & present) | (~present & (not required))


def money(arr: Col, signed: bool, required: bool) -> np.ndarray:
    """Rows an amount reads well on: finite, at most 10**13 in size, not negative unless ``signed``;
    not -0.0, which ``json.loads`` reads as 0 when written ``-0`` (``-0.0`` is rare enough to be
    left to the per-line reader)."""
    v = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(v) <= MAX_AMOUNT) & ~((v == 0) & np.signbit(v))  # False for NaN and infinities
        if not signed:
            ok &= ~(v < 0)
    present = valid(arr)
    return (ok & present) | (~present & (not required))


def flag(arr: Col) -> Col:
    """A true/false field, absent read as false."""
    return pc.fill_null(arr, False)


def choice(arr: Col, allowed: tuple[str, ...]) -> np.ndarray:
    """Rows whose text is one of ``allowed`` (exactly)."""
    return np_mask(pc.is_in(arr, value_set=pa.array(allowed)))


def rebuild_list(lengths: np.ndarray, values: pa.Array, present: np.ndarray | None = None) -> pa.ListArray:
    """A list column from per-row lengths and flat values (rows not ``present`` are null)."""
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    mask = None if present is None or present.all() else pa.array(~present)
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)


def _lengths(arr: Col) -> np.ndarray:
    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)


def any_per_row(bad_items: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    rows = np.repeat(np.arange(len(lengths)), lengths)
    out = np.zeros(len(lengths), bool)
    out[rows[bad_items]] = True
    return out


def cards(arr: Col, required: bool) -> tuple[pa.ListArray, np.ndarray]:
    """Card names to int8 codes by one lookup over the flattened names (ASCII, case-insensitive,
    ``10`` for ``T``); rows with a name that is not a card are not vouched for."""
    lengths = _lengths(arr)
    names = pc.list_flatten(arr)
    idx = pc.index_in(pc.ascii_upper(names), value_set=_NAMES)
    known = valid(idx)
    codes = _CODES[pc.fill_null(idx, 0).to_numpy(zero_copy_only=False)]
    present = valid(arr)
    ok = ~any_per_row(~known, lengths) & (present | (not required))
    return rebuild_list(lengths, pa.array(codes, CARDS.value_type), present), ok


def child(arr: Col, name: str) -> Col:
    """A field of a struct column, null where the struct is (other fields, unknown ones the parser
    inferred, may be there too)."""
    return arr.flatten()[arr.type.get_field_index(name)]


def struct_items(arr: Col) -> tuple[np.ndarray, dict[str, Col], np.ndarray]:
    """Lengths (null as 0), the items' fields (flattened) and which items are objects (not null)."""
    items = pc.list_flatten(arr)
    fields = {f.name: child for f, child in zip(items.type, items.flatten(), strict=True)}
    return _lengths(arr), fields, valid(items)


def wagers(arr: Col) -> tuple[pa.ListArray, np.ndarray]:
    """``wagers``: absent is no wager; each ``{seat, bet, amount, net}`` required."""
    lengths, f, is_obj = struct_items(arr)
    good = (is_obj & integer(f["seat"], 0, None, True) & text(f["bet"]) & money(f["amount"], False, True)
            & money(f["net"], True, True))
    values = pa.StructArray.from_arrays(
        [f["seat"].cast(pa.int32(), safe=False), f["bet"], f["amount"], f["net"]], fields=list(WAGER))
    return rebuild_list(lengths, values), ~any_per_row(~good, lengths)


def events(arr: Col, kinds: tuple[str, ...] = (),
           read: Callable[[Col, dict[str, Col]], tuple[dict[str, Col], np.ndarray]] | None = None,
           ) -> tuple[pa.ListArray, np.ndarray]:
    """``events``: absent is none; each an object with a ``type`` (text, required). A game that
    lists its event types (``kinds``) refuses other types, and ``read(types, fields)`` gives the
    stored fields of its events by name (null where a type has no such field) and the events
    it vouches for (as the game's per-line event readers would read them)."""
    lengths, f, is_obj = struct_items(arr)
    kind = f["type"]
    good = is_obj & (choice(kind, kinds) if kinds else text(kind))
    own: dict[str, Col] = {}
    if read is not None:
        own, ok = read(kind, f)
        good &= ok
    if set(own) - set(EVENT.names):
        raise TypeError(f"event fields {sorted(set(own) - set(EVENT.names))} are not stored event fields")
    n = len(kind)
    children = [kind if fld.name == "type" else own[fld.name].cast(fld.type, safe=False) if fld.name in own
                else pa.nulls(n, fld.type) for fld in EVENT]
    return rebuild_list(lengths, pa.StructArray.from_arrays(children, fields=list(EVENT))), ~any_per_row(~good, lengths)


def only(where: np.ndarray, arr: Col) -> Col:
    """``arr`` where ``where``, null elsewhere (a field read for some event types only)."""
    return pc.if_else(pa.array(where), arr, pa.nulls(len(arr), arr.type))


def dice(arr: Col) -> tuple[pa.ListArray, np.ndarray]:
    """``dice`` (required): exactly three integers from 1 to 6, stored as int8."""
    lengths = _lengths(arr)
    values = pc.list_flatten(arr)
    v = pc.fill_null(values, 0).to_numpy(zero_copy_only=False)
    bad = (v < 1) | (v > 6) | ~valid(values)
    present = valid(arr)
    ok = present & (lengths == 3) & ~any_per_row(bad, lengths)
    return rebuild_list(lengths, pa.array(np.where(bad, 0, v).astype(np.int8)), present), ok


def status(arr: Col) -> tuple[Col, np.ndarray]:
    """``status``: absent or empty is ``completed``."""
    filled = pc.if_else(pc.fill_null(pc.equal(arr, ""), True), "completed", arr)
    return filled, choice(filled, STATUSES)


def _civil_days(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's days_from_civil)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)
_MIN_US = _civil_days(np.array([1]), np.array([1]), np.array([1]))[0] * 86_400_000_000
_MAX_US = (_civil_days(np.array([10000]), np.array([1]), np.array([1]))[0]) * 86_400_000_000 - 1


_DIGIT_AT = np.array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18])  # YYYY-MM-DDTHH:MM:SS
_SEP_AT, _SEPS = np.array([4, 7, 10, 13, 16]), np.frombuffer(b"--T::", np.uint8)
_SIX = np.arange(6)
_MICRO = 10 ** (5 - _SIX)


def _digit(v: np.ndarray) -> np.ndarray:
    """Which bytes (uint8) are ASCII digits."""
    return (v - np.uint8(48)) < 10


def timestamps(arr: Col) -> tuple[Col, Col, Col, np.ndarray]:
    """``started_at`` in the plain ISO shape (:data:`_STAMP`) to (UTC timestamp, offset minutes, local
    date, ok): the shape checked and the numbers read from each string's bytes gathered at fixed
    places, a matrix at a time (the tests keep the regular expression's reading as the reference)."""
    data, start, length = _string_bytes(arr)
    data = np.concatenate([data, np.zeros(32, np.uint8)])  # every gather below stays inside
    length = np.where(valid(arr), length, 0)
    end = start + length
    # one row per place (rows contiguous): the first 19 bytes, the last six, the six after the dot
    head = data[np.arange(19)[:, None] + start]
    tail = data[_SIX[:, None] + (end - 6)]  # [+-]HH:MM (a negative place reads the padding)
    fraction = data[_SIX[:, None] + (start + 20)]
    zulu = tail[5] == ord("Z")
    frac = length - 19 - np.where(zulu, 1, 6)  # the fraction with its dot: none, or 2 to 7 bytes
    in_frac = _SIX[:, None] < frac - 1
    shaped = ((length >= 20) & (length <= 32) & _digit(head[_DIGIT_AT]).all(0)
              & (head[_SEP_AT] == _SEPS[:, None]).all(0)
              & ((frac == 0) | ((frac >= 2) & (frac <= 7) & (data[start + 19] == ord("."))))
              & (_digit(fraction) | ~in_frac).all(0)
              & (zulu | (((tail[0] == ord("+")) | (tail[0] == ord("-"))) & _digit(tail[1]) & _digit(tail[2])
                         & (tail[3] == ord(":")) & _digit(tail[4]) & _digit(tail[5]))))
    d = head.astype(np.int64) - 48
    year = ((d[0] * 10 + d[1]) * 10 + d[2]) * 10 + d[3]
    month, day = d[5] * 10 + d[6], d[8] * 10 + d[9]
    hour, minute, second = d[11] * 10 + d[12], d[14] * 10 + d[15], d[17] * 10 + d[18]
    micros = (np.where(in_frac, fraction.astype(np.int64) - 48, 0) * _MICRO[:, None]).sum(0)
    t = tail.astype(np.int64) - 48
    sign = np.where(tail[0] == ord("-"), -1, 1)
    off_h = np.where(zulu, 0, t[1] * 10 + t[2])
    off_m = np.where(zulu, 0, t[4] * 10 + t[5])
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_days = _MONTH_DAYS[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok = (shaped & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
          & (hour < 24) & (minute < 60) & (second < 60) & (off_h < 24) & (off_m < 60))
    offset = np.where(zulu, 0, sign * (off_h * 60 + off_m))
    local = (((_civil_days(year, month, day) * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000 + micros
    utc = local - offset * 60_000_000
    ok &= (utc >= _MIN_US) & (utc <= _MAX_US)
    utc = np.where(ok, utc, 0)
    stamp = pa.array(utc, pa.timestamp("us", tz="UTC"))
    if not shaped.all():
        arr = pc.if_else(pa.array(shaped), arr, "0001-01-01T00:00:00Z")  # a fixed, readable date elsewhere
    date = pc.utf8_slice_codeunits(arr, 0, 10)
    return stamp, pa.array(np.where(ok, offset, 0).astype(np.int16)), date, ok
