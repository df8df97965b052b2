"""The engine sorts each partition's findings in Arrow: the same order as :func:`sort_findings` in pandas."""

import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.engine.findings import sorted_findings
from auditkit.schema import FINDINGS
from auditkit.validate import _frame, empty_findings, sort_findings

TEXT = st.text(alphabet=st.sampled_from("aAbZ09-é漢\U0001f0a1 "), max_size=3)


@st.composite
def findings_tables(draw) -> pa.Table | None:
    n = draw(st.integers(0, 6))
    if n == 0:
        return None
    row = {f.name: [draw(TEXT) for _ in range(n)] if pa.types.is_string(f.type) else
           [draw(st.floats(-5, 5)) for _ in range(n)] if pa.types.is_floating(f.type) else
           [[("n", 1.0)]] * n if pa.types.is_map(f.type) else list(range(n))
           for f in FINDINGS}
    for key in ("started_at", "round_id", "rule_id"):  # few values: many ties, so stability matters
        row[key] = [draw(st.sampled_from(["b", "a", "é", "A", "ab"])) for _ in range(n)]
    return pa.Table.from_pydict(row, schema=FINDINGS)


@settings(max_examples=200, deadline=None)
@given(st.lists(findings_tables(), max_size=4))
def test_arrow_order_is_the_pandas_order(tables):
    frames = [t.to_pandas() for t in tables if t is not None]
    expected = sort_findings(pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0] if frames
                             else empty_findings())
    got = _frame(sorted_findings(tables))
    assert list(got.dtypes) == list(expected.dtypes)
    assert got.equals(expected), (got, expected)
