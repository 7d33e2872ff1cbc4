"""Instrumented code behaves exactly as plain Python (outside and inside sections)."""

from __future__ import annotations

import pytest

from tests.stm.conftest import instrumented, plain
from tornado_stm import stm

CASES = ["case_attributes", "case_containers", "case_comprehensions_and_iteration",
         "case_globals_and_closures", "case_exceptions_and_lines"]


@pytest.mark.parametrize("case", CASES)
def test_instrumented_case_matches_plain(case: str) -> None:
    expected = getattr(plain("semantics"), case)()
    function = getattr(instrumented("semantics"), case)
    stm.reset_stats()
    got = function()
    assert got == expected
    assert stm.stats()["commits"] == 1          # the call was one atomic section


@pytest.mark.parametrize("case", CASES)
def test_case_inside_an_enclosing_section_is_a_plain_call(case: str) -> None:
    expected = getattr(plain("semantics"), case)()
    function = getattr(instrumented("semantics"), case)
    stm.reset_stats()
    got = stm.run_section(function)
    assert got == expected
    assert stm.stats()["commits"] == 1


def test_functions_keep_their_names_and_line_numbers() -> None:
    app = instrumented("semantics")
    reference = plain("semantics")
    assert app.case_attributes.__name__ == "case_attributes"
    assert app.Child.describe.__qualname__ == "Child.describe"
    assert (app.case_attributes.__wrapped__.__code__.co_firstlineno
            == reference.case_attributes.__code__.co_firstlineno)
