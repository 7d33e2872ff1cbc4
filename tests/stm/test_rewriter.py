"""What the rewriter emits: barriers where needed, plain code where provably safe."""

from __future__ import annotations

import ast
import textwrap

from tornado_stm.instrument.rewriter import ALIAS_SUFFIX, rewrite, rewrite_module

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


def _unparse(node: ast.AST) -> str:
    """The rewritten code, barriers called through their local aliases shown by their
    global names (the aliases are tested on their own below)."""
    return ast.unparse(node).replace(ALIAS_SUFFIX + "(", "(")


def _function(name: str) -> str:
    tree = rewrite(SOURCE, "example.py")
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return _unparse(node)


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


def test_generators_get_no_fresh_locals_and_a_steps_entry() -> None:
    code = _function("steps")
    assert "_stm_ga(_stm_cur(), local, 'append')" in code
    # section.entry gives a generator function the wrapper that runs its steps under W.
    assert code.lstrip().startswith("@_stm_entry")


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
    code = _unparse(rewrite(source, "values.py"))
    assert "_stm_tick(_stm_tx)" in code                          # the while loop's back edge
    # k is a number local: n compared with it is not read; the comparison's
    # result is tested through truth(): n may be an application object whose
    # __gt__ returns anything (a shared list).
    assert "while _stm_truth(_stm_tx, k < n):" in code
    assert "k += 1" in code
    assert "if _stm_truth(_stm_tx, shared):" in code
    assert "a, b = _stm_view(_stm_tx, shared)" in code
    assert "_stm_binop(_stm_tx, 0, shared, other)" in code      # view() of both, one call
    assert "_stm_cmp(_stm_tx, 0, shared, other)" in code        # deep_view() of both
    assert "f'{_stm_dview(_stm_tx, shared)}'" in code
    assert "_stm_touch(_stm_tx, shared) or other" in code
    assert "[*_stm_view(_stm_tx, shared)]" in code
    assert "_stm_operand(_stm_tx, n) % 2" in code      # a bytearray's % reads the buffer
    assert "k * 3" in code


# -- what locals and operands can hold (fresh.Kinds): which value barriers are needed ----

KINDS_SOURCE = textwrap.dedent('''
    STEPS = ((1, 0), (-1, 0))
    WALL = 1
    TWICE = (1, 2)
    TWICE = (3, 4)
    REBOUND = ((1, 2),)

    def rebind():
        global REBOUND
        REBOUND = [[[1], [2]]]

    def unpacking(shared_pair, shared, n, cell):
        x, y = 1, n + 1
        p, q = shared_pair
        k = 0
        for dx, dy in STEPS:
            k += 1
            if x + dx < shared and p + q < dy:
                return y == shared, shared != WALL
        for a, b in ((x + 1, y), (x, y - 1)):
            if a < shared:
                return b
        for c, d in shared:
            return c + d
        for e, f in REBOUND:
            return e + f
        for g, h in TWICE:
            return g + h
        cx, cy = cell
        for nx, ny in ((cx + 1, cy), (cx, cy + 1)):
            if 0 <= nx < len(shared) and ny < k:
                return nx - shared

    def made(a, b, counter, shared):
        x = a + b
        x.append(1)
        c = -counter
        s = sorted(shared)
        t = (shared,)
        u = 3 * a
        return x + [2], c == counter, s + shared, t == shared, u + a, (a + b) + shared

    def closure(shared):
        lst = []
        def inner():
            return lst + shared
        return inner, lst + shared

    def steps(shared):
        lst = []
        yield lst
        yield lst + shared
''')


def _kinds(name: str) -> str:
    tree = rewrite(KINDS_SOURCE, "kinds.py")
    return _unparse(next(n for n in tree.body
                            if isinstance(n, ast.FunctionDef) and n.name == name))


def test_unpacking_a_display_or_a_module_constant_binds_known_values() -> None:
    code = _kinds("unpacking")
    # x is a number, dx too (STEPS is a constant): x + dx is a number, so
    # shared, compared with it, is not read; dy is a number as well.
    assert "for dx, dy in STEPS:" in code        # a constant tuple: no iterate(), no view()
    # (each comparison's result through truth(): shared, or p + q, may be an
    # application object whose __gt__ returns a shared list)
    assert ("if _stm_truth(_stm_tx, x + dx < shared) and "
            "_stm_truth(_stm_tx, _stm_binop(_stm_tx, 0, p, q) < dy):") in code
    # y = n + 1 is an atom (never a container) but maybe not a number: shared is read.
    # y = n + 1 with n a parameter: n may be an application object whose
    # __add__ returns anything, so y is compared through compare().
    assert "return (_stm_cmp(_stm_tx, 0, y, shared), shared != WALL)" in code
    assert "for a, b in ((x + 1, y), (x, y - 1)):" in code          # no iterate(), no view()
    assert "if _stm_truth(_stm_tx, a < shared):" in code
    assert "k += 1" in code


def test_unpacking_what_may_hold_containers_keeps_its_barriers() -> None:
    code = _kinds("unpacking")
    assert "p, q = _stm_view(_stm_tx, shared_pair)" in code
    assert "c, d = _stm_view(_stm_tx, _stm_t" in code                 # items of a shared list
    assert "return _stm_binop(_stm_tx, 0, c, d)" in code
    # REBOUND is declared global by a function, TWICE bound twice: not constants.
    assert "e, f = _stm_view(_stm_tx, _stm_t" in code
    assert "g, h = _stm_view(_stm_tx, _stm_t" in code
    # nx holds cx itself in one item: unknown; compared with numbers only, it
    # is not read, but it is read when it meets a maybe-container.
    assert "cx, cy = _stm_view(_stm_tx, cell)" in code
    assert ("if _stm_truth(_stm_tx, 0 <= nx < _stm_call(_stm_tx, len, shared)) and "
            "_stm_truth(_stm_tx, ny < k):") in code
    assert "return _stm_binop(_stm_tx, 1, nx, shared)" in code


def test_containers_made_by_operators_and_calls_are_read_through_barriers_later() -> None:
    code = _kinds("made")
    # A new list is not private: a write to it is buffered, so a later plain
    # read would miss it.
    assert "_stm_operand(_stm_tx, x) + _stm_new(_stm_tx, [2])" in code
    assert "_stm_cmp(_stm_tx, 0, c, counter)" in code
    assert "_stm_binop(_stm_tx, 0, s, shared)" in code
    assert "_stm_cmp(_stm_tx, 0, t, shared)" in code
    assert "_stm_binop(_stm_tx, 0, u, a)" in code
    # Used where it is made: a + b of parameters may be an application
    # __add__'s result, maybe shared, so it is read like any other operand.
    assert "_stm_binop(_stm_tx, 0, _stm_binop(_stm_tx, 0, a, b), shared))" in code


def test_fresh_lists_seen_by_nested_scopes_or_kept_across_yields_are_read_through_view() -> None:
    # inner() may run in a later section, where the list is no longer private.
    assert "return _stm_binop(_stm_tx, 0, lst, shared)" in _kinds("closure")
    assert "yield _stm_binop(_stm_cur(), 0, lst, shared)" in _kinds("steps")


RUN_SOURCE = textwrap.dedent('''
    SHARED = [3, 1, 2]

    def operators(a, b, s, t):
        return (a + b, a - b, a * b, a / b, a // b, a % b, a ** b, a << b, a >> b, a | b,
                a ^ b, a & b, s + t, s * b, s == t, s != t, s < t, s <= t, s > t, s >= t,
                a == b, a < b)
    MAPPING = {"a": [1], "b": [2, 3]}

    def made(a, b):
        x = a + b
        x.append(1)
        s = sorted(a)
        s.append(0)
        return x + [2], s == [0, 0], x == [0, 1]

    def lazy_and_augmented(n):
        total = 0
        for i in range(n):
            total += i
        return (total, sum(x * 2 for x in SHARED), any(x > 2 for x in SHARED),
                all(x for x in SHARED), min(x for x in SHARED), max(x for x in SHARED),
                sorted(x for x in SHARED), list(x for x in SHARED), tuple(x for x in SHARED),
                sum(len(v) for v in MAPPING.values()))

    class Key(str):
        pass

    class Named:
        def __str__(self):
            return Key("k")

    def formatted():
        # CPython compiles a constant format of %s into an f-string: a plain str
        return type("%s" % (Named(),)), type("%.5s" % (Named(),)), type(str(Named()))
''')


def test_binary_and_compare_apply_the_operator_the_rewriter_means() -> None:
    from tornado_stm.instrument import rewriter
    from tornado_stm.stm import barriers, fastpath

    names = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
             ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift",
             ast.RShift: "rshift", ast.BitOr: "or_", ast.BitXor: "xor", ast.BitAnd: "and_",
             ast.MatMult: "matmul"}
    assert len(rewriter._BINARY_INDEX) == len(barriers.BINARY_OPERATORS)
    assert all(barriers.BINARY_OPERATORS[i].__name__ == names[op]
               for op, i in rewriter._BINARY_INDEX.items())
    compares = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
                ast.GtE: "ge"}
    assert all(barriers.COMPARE_OPERATORS[i].__name__ == compares[op]
               for op, i in rewriter._COMPARE_INDEX.items())
    # The C barriers (when in use) apply the same operator as the Python ones.
    for impl in (fastpath.PYTHON, fastpath.C or fastpath.PYTHON):
        for index, function in enumerate(barriers.BINARY_OPERATORS[:-1]):
            assert impl["binary"](None, index, 7, 3) == function(7, 3)
        for index, function in enumerate(barriers.COMPARE_OPERATORS):
            for left, right in ((3, 7), (7, 7), ((1, 2), (1, 3)), ("b", "a")):
                assert impl["compare"](None, index, left, right) == function(left, right)
                assert impl["compare_test"](None, index, left, right) is \
                    bool(function(left, right))
        # if a < b with a result that is not a bool: its truth, as truth() gives it
        assert impl["compare_test"](None, 2, _LessGivesList([]), 1) is False
        assert impl["compare_test"](None, 2, _LessGivesList([0]), 1) is True


class _LessGivesList:
    def __init__(self, items: list) -> None:
        self.items = items

    def __lt__(self, other: object) -> list:
        return self.items


def test_operators_in_a_section_give_what_plain_python_gives() -> None:
    module = _run_module()
    plain: dict = {}
    exec(RUN_SOURCE, plain)
    args = (7, 3, [1, [2]], [1, [3]])
    assert module.operators(*args) == plain["operators"](*args)


def _run_module():
    from types import ModuleType

    from tornado_stm import instrument

    module = ModuleType("kinds_run")
    instrument.prepare_namespace(module.__dict__)
    exec(instrument.compile_instrumented(RUN_SOURCE, "kinds_run.py"), module.__dict__)
    return module


def test_a_section_sees_its_writes_to_containers_it_made_with_operators() -> None:
    # Each call from here is one atomic section: the appends are buffered.
    assert _run_module().made([0], []) == ([0, 1, 2], True, True)


def test_augmented_locals_and_generator_arguments_stay_optimistic() -> None:
    from tornado_stm import stm

    module = _run_module()
    assert "total += i" in ast.unparse(rewrite(RUN_SOURCE, "kinds_run.py"))
    stm.reset_stats()
    assert module.lazy_and_augmented(10) == (45, 12, True, True, 1, 3, [1, 2, 3], [3, 1, 2],
                                             (3, 1, 2), 3)
    stats = stm.stats()
    assert stats["commits"] == 1 and stats["inevitable"] == 0, stats


def test_barriers_called_in_loops_are_bound_to_locals_first() -> None:
    code = ast.unparse(rewrite(textwrap.dedent('''
        def f(shared, other):
            first = shared.a
            for item in shared.items:
                other.total = item.value
            g = lambda: shared.b
            return first, [x.c for x in other], (y.d for y in other), g
    '''), "alias.py"))
    assert "_stm_ga_l = _stm_ga" in code and "_stm_sa_l = _stm_sa" in code
    assert "first = _stm_ga_l(_stm_tx, shared, 'a')" in code        # bound before it
    assert "_stm_ga_l(_stm_tx, item, 'value')" in code and "_stm_sa_l(_stm_tx, other, 'total'" in code
    assert "[_stm_ga_l(_stm_tx, x, 'c') for x in" in code              # inlined: the frame's
    assert "(_stm_ga(_stm_cur(), y, 'd') for y in" in code              # a frame of its own
    assert "lambda: _stm_ga(_stm_cur(), shared, 'b')" in code
    straight = ast.unparse(rewrite("def g(shared):\n    return shared.a\n", "alias.py"))
    assert ALIAS_SUFFIX + " =" not in straight                           # no loop: no alias


def test_a_builtin_name_shadowed_by_a_parameter_says_nothing_about_its_result() -> None:
    code = _unparse(rewrite(textwrap.dedent('''
        def f(len, shared):
            n = len(shared)
            return n < shared

        def g(shared):
            n = len(shared)
            return n < shared
    '''), "shadow.py"))
    assert "_stm_cmp(_stm_tx, 2, n, shared)" in code      # f: len is whatever was passed
    assert "return n < shared" in code                     # g: the builtin, a number


def test_an_application_operator_result_keeps_its_barriers() -> None:
    # y = x + 1 is never a container for a builtin x (a list + 1 raises), but
    # an application __add__ (or 1's __radd__ partner) may return a shared
    # list: y is read through the barriers (red-team round 31).
    code = _unparse(rewrite("def f(x, z):\n    y = x + 1\n    return y + z\n", "limit.py"))
    assert "return _stm_binop(_stm_tx, 0, y, z)" in code


def test_what_iterate_would_return_as_it_is_is_iterated_directly() -> None:
    code = _unparse(rewrite(textwrap.dedent('''
        def f(n, shared):
            for i in range(n):
                pass
            for j in (1, n):
                pass
            for k in shared:
                pass
            return [x for x in range(n)], [y for y in shared]
    '''), "iterate.py"))
    assert "for i in range(n):" in code and "for j in (1, n):" in code
    assert "for k in _stm_iter(_stm_tx, shared):" in code
    assert "for x in range(n)]" in code and "for y in _stm_iter(_stm_tx, shared)]" in code


def test_a_star_import_or_a_local_of_the_same_name_unmakes_a_module_constant() -> None:
    body = "\ndef f(shared):\n    for a, b in STEPS:\n        return a + shared\n"
    assert "a + shared" in _unparse(rewrite("STEPS = ((1, 2),)\n" + body, "c.py"))
    starred = _unparse(rewrite("STEPS = ((1, 2),)\nfrom os.path import *\n" + body, "c.py"))
    assert "_stm_binop(_stm_tx, 0, a, shared)" in starred
    shadowed = _unparse(rewrite("STEPS = ((1, 2),)\n\ndef g(STEPS, shared):\n"
                                "    for a, b in STEPS:\n        return a + shared\n", "c.py"))
    assert "_stm_binop(_stm_tx, 0, a, shared)" in shadowed


def test_the_globals_functions_read_plainly_are_reported() -> None:
    """Rebinding one of them must be seen (barriers._rebinding_plain_globals):
    the names a function reads without a barrier, not those declared
    ``global`` somewhere, nor builtins, locals or names never read."""
    source = textwrap.dedent('''
        import sys
        hits = 0
        total = 0
        LIMIT = 10
        unused = 1

        def bump(n):
            global total
            total += n
            return hits + LIMIT + len(sys.argv)

        def local_only(hits):
            return hits
    ''')
    _, plainly_read = rewrite_module(source, "<plain-globals>")
    assert plainly_read == {"hits", "LIMIT", "sys"}
    source_with_globals = source + "\ndef names():\n    return globals()\n"
    assert rewrite_module(source_with_globals, "<all-barriered>")[1] == frozenset()



def test_what_a_rich_comparison_method_returns_goes_through_compared() -> None:
    # The interpreter or C code tests it (a < b < c, match, x in seq): the
    # caller's barriers cannot; compared() makes a shared container's section inevitable.
    code = _unparse(rewrite("class P:\n    def __lt__(self, other):\n        return self.kids\n"
                            "    def helper(self):\n        return self.kids\n", "cmp.py"))
    assert "return _stm_compared(_stm_tx, _stm_ga(_stm_tx, self, 'kids'))" in code
    assert code.count("_stm_compared(") == 1              # helper() returns as it is


def test_a_tested_method_bound_without_its_def_goes_through_tested_method() -> None:
    # __eq__ = lambda ..., __contains__ = helper in the class body, Key.__exit__ =
    # helper after it: the value gets what a def of that name gets (a
    # wrapper whose result goes through compared); other names are bound plainly.
    code = _unparse(rewrite("class P:\n    __eq__ = lambda self, k: k\n"
                            "    if X:\n        __contains__ = helper\n"
                            "    other = helper\n"
                            "P.__exit__ = helper\nP.exit = helper\n", "bound.py"))
    assert "__eq__ = _stm_tested(_stm_entry(lambda self, k: k), '__eq__')" in code
    assert "__contains__ = _stm_tested(helper, '__contains__')" in code
    assert "P.__exit__ = _stm_tested(helper, '__exit__')" in code
    assert code.count("_stm_tested(") == 3
    # any other special method: a C method of a mutable object goes through the call barrier
    code = _unparse(rewrite("class R:\n    __len__ = TABLE.__len__\n    __slots__ = ()\n"
                            "R.__iter__ = TABLE.__iter__\n", "special.py"))
    assert "__len__ = _stm_special(TABLE.__len__, '__len__')" in code
    assert "R.__iter__ = _stm_special(TABLE.__iter__, '__iter__')" in code
    assert "__slots__ = ()" in code
    # every class statement: audited once made (bindings.audited_class), outermost
    code = _unparse(rewrite("@deco\nclass R:\n    pass\n", "audit.py"))
    assert "@_stm_class\n@deco\nclass R:" in code


def test_the_test_of_an_if_comparing_two_values_is_one_barrier_call() -> None:
    code = _unparse(rewrite("def f(a, b):\n    if a < b:\n        return 1\n"
                            "    while a == b:\n        pass\n    return a < b\n", "test.py"))
    assert "if _stm_cmp_test(_stm_tx, 2, a, b):" in code
    assert "while _stm_cmp_test(_stm_tx, 0, a, b):" in code
    assert "return _stm_cmp(_stm_tx, 2, a, b)" in code      # a value: compare() alone
    assert "_stm_truth" not in code


def test_formatting_a_tuple_display_gives_what_plain_python_gives() -> None:
    # The tuple display is kept (its values read one by one), so that a
    # str subclass from __str__ comes back only where plain Python hands it on.
    module = _run_module()
    plain: dict = {}
    exec(RUN_SOURCE, plain)
    assert module.formatted() == tuple(map(_same_class_name, plain["formatted"]()))
    code = _unparse(rewrite("def f(a, b):\n    return '%s: %d' % (a, b)\n", "fmt.py"))
    assert "'%s: %d' % (_stm_dview(_stm_tx, a), _stm_dview(_stm_tx, b))" in code


def _same_class_name(kind: type) -> object:
    return kind if kind is str else _Named(kind.__name__)


class _Named:
    """Equal to a class of that name (the module's Key, made twice)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return getattr(other, "__name__", None) == self.name
