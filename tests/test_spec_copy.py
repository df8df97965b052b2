"""The vendored copy of the spec's worked examples is the contract's, byte for byte."""

import pytest
from conftest import SHARED_SPEC, VENDORED_SPEC


def test_vendored_examples_match_the_shared_spec():
    shared = SHARED_SPEC / "examples"
    if not shared.is_dir():
        pytest.skip("the shared spec is not beside this checkout")
    names = sorted(p.name for p in shared.iterdir())
    assert names == sorted(p.name for p in (VENDORED_SPEC / "examples").iterdir())
    for name in names:
        assert (shared / name).read_bytes() == (VENDORED_SPEC / "examples" / name).read_bytes(), name
