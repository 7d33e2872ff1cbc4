"""What the rewriter emits: barriers where needed, plain code where provably safe."""

from __future__ import annotations

import ast
import textwrap

from tornado_stm.instrument.rewriter import rewrite

SOURCE = textwrap.dedent('''
    import heapq

    def search(start, shared):
        frontier = [start]
        best = {start: 0}
        captured = []
        rebound = []
        rebound = shared
        while frontier:
            cell = heapq.heappop(frontier)
            best[cell] = best.get(cell, 0) + 1
            captured.append(cell)
            rebound.append(cell)
            shared[cell] = best[cell]

        def peek():
            return captured
        return best, peek

    def scalar(x, items):
        return abs(x) + len(items)

    def steps(shared):
        local = []
        yield local
        local.append(shared.value)
''')


def _function(name: str) -> str:
    tree = rewrite(SOURCE, "example.py")
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.unparse(node)


def test_locals_holding_only_fresh_objects_are_not_barriered() -> None:
    code = _function("search")
    # + 1: a container added to a number raises without being read, so no view() either.
    assert "best[cell] = best.get(cell, 0) + 1" in code
    assert "_stm_call(_stm_tx, _stm_ga(_stm_tx, heapq, 'heappop'), frontier)" in code
    assert "while frontier:" in code


def test_captured_rebound_and_shared_objects_keep_their_barriers() -> None:
    code = _function("search")
    assert "_stm_ga(_stm_tx, captured, 'append')" in code       # seen by a nested function
    assert "_stm_ga(_stm_tx, rebound, 'append')" in code        # also bound to a parameter
    assert "_stm_si(_stm_tx, shared," in code


def test_generators_get_no_fresh_locals_and_no_entry() -> None:
    code = _function("steps")
    assert "_stm_ga(_stm_cur(), local, 'append')" in code
    assert "_stm_entry" not in code


def test_line_numbers_are_kept() -> None:
    tree = rewrite(SOURCE, "example.py")
    original = ast.parse(SOURCE)
    lines = {n.lineno for n in ast.walk(original) if isinstance(n, ast.stmt)}
    assert {n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt)} <= lines | {0}


def test_scalar_builtins_are_called_directly_unless_the_module_rebinds_them() -> None:
    assert "return abs(x) + _stm_call(_stm_tx, len, items)" in _function("scalar")
    rebinding = rewrite("from os import remove as abs\n\ndef f(x):\n    return abs(x)\n", "m.py")
    assert "_stm_call(_stm_tx, abs, x)" in ast.unparse(rebinding)


def test_values_read_by_plain_python_go_through_the_value_barriers() -> None:
    source = """
def f(shared, other, n):
    k = 0
    while k < n:
        k += 1
    if shared:
        pass
    a, b = shared
    return shared + other, shared == other, f"{shared}", shared or other, [*shared], n % 2, k * 3
"""
    code = ast.unparse(rewrite(source, "values.py"))
    assert "_stm_tick(_stm_tx)" in code                          # the while loop's back edge
    assert "while k < _stm_dview(_stm_tx, n):" in code           # k is a scalar local: plain
    assert "k += 1" in code
    assert "if _stm_truth(_stm_tx, shared):" in code
    assert "a, b = _stm_view(_stm_tx, shared)" in code
    assert "_stm_view(_stm_tx, shared) + _stm_view(_stm_tx, other)" in code
    assert "_stm_dview(_stm_tx, shared) == _stm_dview(_stm_tx, other)" in code
    assert "f'{_stm_dview(_stm_tx, shared)}'" in code
    assert "_stm_touch(_stm_tx, shared) or other" in code
    assert "[*_stm_view(_stm_tx, shared)]" in code
    assert "_stm_view(_stm_tx, n) % 2" not in code and "n % 2" in code
    assert "k * 3" in code
