"""fields.timestamps (the shape and numbers read from bytes gathered at fixed places) against
timestamps_plain below, the reading by regular expression and a digit at a time it replaced."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest import fields as F


def timestamps_plain(arr):
    """The reference: the shape by :data:`fields._STAMP`, each digit gathered on its own."""
    shaped = F.np_mask(pc.match_substring_regex(arr, F._STAMP))
    n = len(arr)
    arr = pc.if_else(pa.array(shaped), arr, "0001-01-01T00:00:00Z")
    data, start, length = F._string_bytes(arr)

    def num(at, width):
        v = np.zeros(n, np.int64)
        for k in range(width):
            v = v * 10 + (data[start + at + k].astype(np.int64) - 48)
        return v

    year, month, day = num(0, 4), num(5, 2), num(8, 2)
    hour, minute, second = num(11, 2), num(14, 2), num(17, 2)
    zulu = data[start + length - 1] == ord("Z")
    tail = np.where(zulu, 1, 6)
    frac_len = np.maximum(length - 19 - tail - 1, 0)
    micros = np.zeros(n, np.int64)
    for k in range(6):
        digit = np.where(k < frac_len, data[np.minimum(start + 20 + k, len(data) - 1)].astype(np.int64) - 48, 0)
        micros = micros * 10 + digit
    sign = np.where(data[start + length - 6] == ord("-"), -1, 1)
    off_h = np.where(zulu, 0, num(length - 5, 2))
    off_m = np.where(zulu, 0, num(length - 2, 2))
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_days = F._MONTH_DAYS[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok = (shaped & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
          & (hour < 24) & (minute < 60) & (second < 60) & (off_h < 24) & (off_m < 60))
    offset = np.where(zulu, 0, sign * (off_h * 60 + off_m))
    local = (((F._civil_days(year, month, day) * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000 + micros
    utc = local - offset * 60_000_000
    ok &= (utc >= F._MIN_US) & (utc <= F._MAX_US)
    utc = np.where(ok, utc, 0)
    stamp = pa.array(utc, pa.timestamp("us", tz="UTC"))
    date = pc.utf8_slice_codeunits(arr, 0, 10)
    return stamp, pa.array(np.where(ok, offset, 0).astype(np.int16)), date, ok


DIGITS = st.text("0123456789", min_size=1, max_size=1)
STAMP = st.builds(
    lambda y, mo, d, h, mi, s, frac, tail: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{tail}",
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25), st.integers(0, 61),
    st.integers(0, 61), st.one_of(st.just(""), st.text("0123456789", min_size=0, max_size=8).map(lambda f: "." + f)),
    st.one_of(st.sampled_from(["Z", "z", "", "+00:00", "-05:30", "+14:00", "-23:59", "+24:00", "+05:60", "+5:00"]),
              st.builds(lambda s, h, m: f"{s}{h:02d}:{m:02d}", st.sampled_from("+-"), st.integers(0, 99), st.integers(0, 99))),
)


@st.composite
def mutated(draw):
    text = draw(STAMP)
    for _ in range(draw(st.integers(0, 2))):  # a byte changed, dropped or added anywhere
        at = draw(st.integers(0, len(text)))
        ch = draw(st.sampled_from(list("0123456789-T:.+Z xé\n")))
        kind = draw(st.integers(0, 2))
        text = text[:at] + ch + text[at + (kind < 2):] if kind else text[:at] + text[at + 1:]
    return text


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(mutated(), st.none(), st.text(max_size=40)), min_size=1, max_size=30),
       offset=st.integers(0, 3))
def test_timestamps_read_as_the_regular_expression_reads_them(values, offset):
    arr = pa.array(["2026-01-01T00:00:00Z"] * offset + values, pa.string()).slice(offset)  # an array at an offset too
    got, want = F.timestamps(arr), timestamps_plain(arr)
    assert got[3].tolist() == want[3].tolist()
    for g, w in zip(got[:3], want[:3], strict=True):
        assert g.equals(w)


def test_timestamps_of_the_plain_shapes():
    arr = pa.array(["2026-03-01T23:30:00.25-05:00", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", None,
                    "2026-03-01T23:30:00.1234567Z", "2026-03-01 23:30:00Z"])
    stamp, offset, date, ok = F.timestamps(arr)
    assert ok.tolist() == [True, True, False, False, False, False]
    assert stamp[0].as_py().isoformat() == "2026-03-02T04:30:00.250000+00:00"
    assert offset.to_pylist()[:2] == [-300, 0]
    assert date.to_pylist()[:2] == ["2026-03-01", "2024-02-29"]


def test_timestamps_with_any_one_byte_changed_dropped_or_added():
    values = []
    for stamp in ["2026-03-01T23:30:00.25-05:00", "2024-02-29T00:00:00Z", "2026-12-31T23:59:59.123456+14:00"]:
        for at in range(len(stamp) + 1):
            values.append(stamp[:at] + stamp[at + 1:])
            for ch in "0123456789-T:.+Z xé\n":
                values += [stamp[:at] + ch + stamp[at + 1:], stamp[:at] + ch + stamp[at:]]
    arr = pa.array(values)
    got, want = F.timestamps(arr), timestamps_plain(arr)
    assert got[3].tolist() == want[3].tolist()
    assert 0 < got[3].sum() < len(values)
    for g, w in zip(got[:3], want[:3], strict=True):
        assert g.equals(w)
