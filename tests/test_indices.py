"""tools.indices.distinct is np.unique on index arrays, empty ones included."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tools.indices import distinct


@given(size=st.integers(1, 500), data=st.data())
def test_distinct_is_unique(size: int, data: st.DataObject) -> None:
    """The same values, ascending, as np.unique of the same array."""
    values = data.draw(st.lists(st.integers(0, size - 1), max_size=2000))
    indices = np.array(values, dtype=np.intp)
    assert distinct(indices, size) == np.unique(indices).tolist()
