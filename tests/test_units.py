"""lint/units.py: the flat table of what a tracked scan's units read and used answers as the dict of tuples
it replaces."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compile_lint.units import UnitTable


@given(st.lists(st.tuples(st.integers(0, 40), st.lists(st.integers(0, 2**32 - 1), max_size=4)), max_size=60),
       st.sampled_from([0, 1, 2_655_047]))
def test_a_unit_table_answers_as_a_dict_of_tuples(sets, base):
    table, model = UnitTable(base=base), {}
    for u, value in sets:
        u += base
        table[u] = value
        model[u] = tuple(value)
        assert len(table) == len(model)
    assert dict(table) == model and dict(UnitTable(model)) == model
    assert list(table.items()) == sorted(model.items())  # (in the units' order)
    assert list(table.values()) == [v for _, v in sorted(model.items())] and list(table) == sorted(model)
    for u in range(base - 2, base + 45):
        assert (u in table) == (u in model) and table.get(u, "none") == model.get(u, "none")


def test_a_unit_table_refuses_what_it_cannot_hold_and_changes_nothing():
    table = UnitTable({3: (1, 2)}, base=2)
    with pytest.raises(KeyError):
        table[1] = (1,)  # (below its first id)
    with pytest.raises(OverflowError):
        table[2] = (2**32,)
    with pytest.raises(KeyError):
        table[2]
    assert dict(table) == {3: (1, 2)} and len(table) == 1 and "3" not in table and -1 not in table
    assert 1 not in table and table.get(1) is None and 2 not in table and table._start.buffer_info()[1] == 2  # (ids 2, 3)


def test_a_unit_table_holds_4_bytes_per_int_not_an_object_per_unit():
    """The point of the table: a million units with a use each (the tracked scan of the benchmark site
    closes 1.4 M) in a few arrays, not a dict entry, an int and a tuple each."""
    table = UnitTable()
    for u in range(1, 1_000_001):
        table[u] = (u % 977,)
    held = table._start.buffer_info()[1] * 4 + table._flat.buffer_info()[1] * 4
    assert held < 1_000_001 * 4 * 3 * 1.2 and table[999_999] == (999_999 % 977,)
