"""Static escape analysis: locals that only ever hold objects the function itself created.

In a plain function (not a generator or coroutine) the whole call runs
inside one atomic section. A local that is bound only to list, dict or set
displays or comprehensions made in that call, and that no nested function
can see, always refers to an object created during the section: no other
thread can reach it before the section commits, and the section has
finished by then. Accesses through such a local need no barrier; the
rewriter leaves them as plain Python.

:func:`fresh_locals` finds those names for one function, and
:func:`local_kinds` what every local can hold (a number, a string or a
tuple of them, never a shared container...: see :class:`Kinds`), which
tells the rewriter which value barriers have nothing to do; both come from
one :class:`LocalBindings` walk. :func:`module_constants` finds the module
globals whose value is a known literal (``STEPS = ((1, 0), (0, 1))``).
"""

from __future__ import annotations

import ast
import symtable
from typing import Callable, Optional

_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_nodes(function: ast.FunctionDef):
    """The nodes of ``function``'s own scope (not of nested functions or comprehension targets)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                continue
            if isinstance(node, ast.comprehension) and child is node.target:
                continue
            stack.append(child)


#: The bindings of a local that are not ``name = value``: ``for name in range(...)``.
#: (``name op= value`` is kept as its ``ast.AugAssign`` node.)
RANGE_LOOP = "for-range"


class LocalBindings:
    """How each local of one function is bound, for the analyses below.

    ``values[name]`` lists what every binding of ``name`` stores: a value
    expression, ``RANGE_LOOP``, or the ``ast.AugAssign`` of ``name op= value``.
    Unpacking is followed where the value's items are known: ``a, b = x, y``
    (a display), ``for a, b in ((x, y), (z, t))`` and ``for a, b in STEPS``
    when ``STEPS`` is a module constant (see :func:`module_constants`).
    Locals bound in any other way (unpacking of anything else, ``with ...
    as``, ``except ... as``, imports, walrus...), parameters, globals and
    locals a nested function assigns are left out; ``seen_by_nested`` are
    those a nested function reads.
    """

    def __init__(self, function: ast.FunctionDef, table: Optional[symtable.SymbolTable],
                 rebound: "set[str] | frozenset[str]" = frozenset(),
                 constants: Optional[dict[str, object]] = None) -> None:
        self.values: dict[str, list] = {}
        self.seen_by_nested: set[str] = set()
        #: The module constants (see module_constants) this function reads.
        self.constants: dict[str, object] = {}
        #: Its names that are not globals (locals, parameters, closure variables).
        self.shadowing: set[str] = set()
        if table is None:
            return
        self.shadowing = {s.get_name() for s in table.get_symbols() if not s.is_global()}
        constants = _global_constants(table, constants or {})
        values: dict[str, list] = {}
        bad: set[str] = set()
        sole_targets: set[int] = set()
        for node in _scope_nodes(function):
            # (range as a local, a parameter or a closure variable is not the builtin)
            bindings = _simple_bindings(node, rebound | self.shadowing, constants)
            for target, value in bindings or ():
                values.setdefault(target.id, []).append(value)
                sole_targets.add(id(target))
            if bindings is None and isinstance(node, (ast.ExceptHandler, ast.MatchAs,
                                                      ast.MatchStar)) and node.name:
                bad.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bad.add(node.rest)
        for node in _scope_nodes(function):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) \
                    and id(node) not in sole_targets:
                bad.add(node.id)
        self.seen_by_nested = nested_names(table, lambda s: s.is_free() or s.is_nonlocal())
        assigned_by_nested = nested_names(table, symtable.Symbol.is_nonlocal)
        for name, bound in values.items():
            if name in bad or name in assigned_by_nested or None in bound:
                continue
            try:
                symbol = table.lookup(name)
            except KeyError:
                continue
            if not (symbol.is_parameter() or symbol.is_global() or symbol.is_nonlocal()
                    or symbol.is_imported() or symbol.is_namespace()):
                self.values[name] = bound
        self.constants = constants


def _global_constants(table: symtable.SymbolTable, constants: dict[str, object]
                      ) -> dict[str, object]:
    """The module constants that ``table``'s function reads as globals (not shadowed)."""
    seen: dict[str, object] = {}
    for name, value in constants.items():
        try:
            symbol = table.lookup(name)
        except KeyError:
            continue
        if symbol.is_global() and not symbol.is_declared_global():
            seen[name] = value
    return seen


def _pairs(target: ast.expr, value: ast.expr) -> Optional[list[tuple[ast.Name, ast.expr]]]:
    """(Name, item) for each name of ``target`` (a Name, or a flat tuple or list of
    Names) bound to ``value`` (for a tuple target, a display of as many items)."""
    if isinstance(target, ast.Name):
        return [(target, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) \
            and all(isinstance(t, ast.Name) for t in target.elts) \
            and not any(isinstance(v, ast.Starred) for v in value.elts):
        return list(zip(target.elts, value.elts))       # type: ignore[arg-type]
    return None


def _simple_bindings(node: ast.AST, rebound: "set[str] | frozenset[str]",
                     constants: dict[str, object]) -> Optional[list[tuple[ast.Name, object]]]:
    """(target Name, what it stores) for each binding LocalBindings tracks in ``node``;
    None when ``node`` binds nothing, or binds in a way it does not follow."""
    if isinstance(node, ast.Assign):
        if all(isinstance(t, ast.Name) for t in node.targets):
            return [(t, node.value) for t in node.targets]     # type: ignore[misc]
        return _pairs(node.targets[0], node.value) if len(node.targets) == 1 else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target, node.value)]   # None (a bare annotation) disqualifies
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return [(node.target, node)]
    if not isinstance(node, ast.For):
        return None
    if isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call) \
            and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range" \
            and "range" not in rebound:
        return [(node.target, RANGE_LOOP)]
    items: Optional[list[ast.expr]] = None
    if isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) \
            and not any(isinstance(e, ast.Starred) for e in node.iter.elts):
        items = node.iter.elts
    elif isinstance(node.iter, ast.Name) and isinstance(constants.get(node.iter.id), tuple):
        # for dx, dy in STEPS: the items of a module constant, as constants.
        items = [_as_constant(item) for item in constants[node.iter.id]]  # type: ignore
    if items is None:
        return None
    bindings: list[tuple[ast.Name, object]] = []
    for item in items:
        pairs = _pairs(node.target, item)
        if pairs is None:
            return None
        bindings.extend(pairs)
    return bindings


def _as_constant(value: object) -> ast.expr:
    """The display of a constant (a tuple of constants stays a tuple display)."""
    if isinstance(value, tuple):
        return ast.Tuple(elts=[_as_constant(v) for v in value], ctx=ast.Load())
    return ast.Constant(value=value)


def fresh_locals(bindings: LocalBindings) -> set[str]:
    """Locals bound only by ``name = <display>``, invisible to nested scopes."""
    return {name for name, bound in bindings.values.items()
            if name not in bindings.seen_by_nested
            and all(isinstance(value, _DISPLAYS) for value in bound)}


# -- what a value can be: the levels of the value barriers' analysis ---------------

#: What the analysis knows about a value, each level implying the ones below.
#:
#: UNKNOWN: anything. SCALAR: never a list, dict, set or deque that the
#: section does not own (nor a bound method of one), so view(), truth() and
#: touch() have nothing to do: a tuple, a container this call made and
#: marked private. DEEP: not a container and holding none, at any depth, so
#: deep_view() has nothing to do either: a tuple of atoms. ATOM: not a tuple
#: either: a builtin string, bytes or number, of the builtin type itself (a
#: subclass's operators are its own). NUMBER: a builtin int, float, complex or bool, so a container
#: combined or compared with it is not read (``lst - n`` raises TypeError,
#: ``lst == n`` is False without looking at the items).
#:
#: A container made by an operator or a call (``a + b``, ``sorted(x)``) is
#: new but not private: a write to it goes to the redo log like any other,
#: so a local bound to one is UNKNOWN (plain ``x + y`` would miss that
#: write); only an operand used where it is made (``(a + b) + c``) is SCALAR.
#: An operator or ``abs``/``round``/``pow`` with an operand that is not
#: known to be a number or a string may run an application class's method
#: (``tree / "a"``, ``~q``, ``q < 3``, ``abs(v)``), which can return anything,
#: a shared container included: its result is UNKNOWN.
UNKNOWN, SCALAR, DEEP, ATOM, NUMBER = range(5)

_NUMBER_TYPES = (int, float, complex, bool)
#: Builtins by what they return (when the module does not rebind the name).
_NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool", "hash", "id", "ord", "isinstance",
                              "issubclass", "callable"})
#: abs(n), round(n), pow(n, m), min(n, m), max(n, m) of numbers are numbers.
_NUMERIC_BUILTINS = frozenset({"abs", "round", "pow", "min", "max"})
#: Strings whatever their arguments.
_ATOM_BUILTINS = frozenset({"chr"})
#: Strings of their argument: a builtin value's are plain ``str``; an
#: application object's ``__str__``, ``__repr__`` or ``__format__`` may
#: return a ``str`` subclass, whose operators are its own (UNKNOWN).
_STRING_BUILTINS = frozenset({"str", "repr", "format", "ascii"})
_CONTAINER_DISPLAYS = (ast.List, ast.Dict, ast.Set)
_MADE = (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Lambda)
#: Operators that make a container out of containers (concatenation, repetition, set
#: and dict algebra); the others give numbers or strings, or raise, on builtins.
_COLLECTING = (ast.Add, ast.Sub, ast.Mult, ast.BitOr, ast.BitAnd, ast.BitXor)
_IDENTITY_OR_MEMBERSHIP = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


class Kinds:
    """The level of expressions of one scope.

    ``name_kind`` gives the level of a name, ``builtin`` tells whether a name
    called is the builtin of that name (not rebound by the module, nor a
    local, a parameter or a closure variable). ``direct``: the expression is an
    operand used where it is evaluated, so a container it makes cannot have
    been written yet (SCALAR). ``displays``: the level of a list, dict or set
    display stored in a local (SCALAR in a plain function whose local no
    nested scope sees: ``_stm_new`` made it private to the section that runs
    the whole call; UNKNOWN otherwise).
    """

    def __init__(self, name_kind: Callable[[str], int], builtin: Callable[[str], bool]) -> None:
        self.name_kind = name_kind
        self.builtin = builtin

    def of(self, node: object, direct: bool = True, displays: int = SCALAR) -> int:
        made = SCALAR if direct else UNKNOWN       # a container made by this expression
        kind = lambda n: self.of(n, direct, displays)      # noqa: E731
        if node is RANGE_LOOP:
            return NUMBER
        if isinstance(node, ast.AugAssign):            # name op= value
            return self._binop(node.op, self.name_kind(node.target.id),  # type: ignore[attr-defined]
                               kind(node.value), made)
        if isinstance(node, ast.Constant):
            return constant_kind(node.value)
        if isinstance(node, ast.Name):
            return self.name_kind(node.id)
        if isinstance(node, ast.JoinedStr):
            # f"{x}" alone is format(x, ""), maybe a str subclass (see
            # _STRING_BUILTINS); with other parts it is a new plain str.
            if len(node.values) == 1 and isinstance(node.values[0], ast.FormattedValue):
                return ATOM if kind(node.values[0].value) >= SCALAR else UNKNOWN
            return ATOM
        if isinstance(node, (ast.Tuple, *_CONTAINER_DISPLAYS)):
            items = [*node.elts] if not isinstance(node, ast.Dict) else [*node.values, *node.keys]
            deep = all(i is not None and not isinstance(i, ast.Starred) and kind(i) >= DEEP
                       for i in items)
            if isinstance(node, ast.Tuple):             # never a container itself
                return DEEP if deep else SCALAR
            return DEEP if deep and direct else displays if not direct else SCALAR
        if isinstance(node, _MADE):
            return SCALAR if direct or isinstance(node, (ast.GeneratorExp, ast.Lambda)) \
                else displays
        if isinstance(node, ast.UnaryOp):
            operand = kind(node.operand)
            if isinstance(node.op, ast.Not) or operand == NUMBER:
                return NUMBER
            # -counter and +counter make a Counter; on an application object
            # -x, +x and ~x are its own methods, which may return anything.
            return ATOM if operand >= DEEP else made if operand >= SCALAR else UNKNOWN
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, kind(node.left), kind(node.right), made)
        if isinstance(node, ast.Compare):
            operands = [kind(o) for o in (node.left, *node.comparators)]
            if all(isinstance(op, _IDENTITY_OR_MEMBERSHIP) for op in node.ops) \
                    or all(o == NUMBER for o in operands):
                return NUMBER
            # Builtin comparisons give bools; an application class's
            # __lt__/__eq__ may give anything.
            return ATOM if min(operands) >= DEEP else UNKNOWN
        if isinstance(node, ast.BoolOp):                # the value is one of the operands
            return min(kind(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return min(kind(node.body), kind(node.orelse))
        if isinstance(node, ast.NamedExpr):
            return kind(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and self.builtin(node.func.id):
            name = node.func.id
            if name in _NUMBER_BUILTINS:
                return NUMBER
            if name in _NUMERIC_BUILTINS and node.args and not node.keywords and all(
                    not isinstance(a, ast.Starred) and kind(a) == NUMBER for a in node.args):
                return NUMBER
            if name in _ATOM_BUILTINS:
                return ATOM
            if name in _STRING_BUILTINS:
                return ATOM if all(not isinstance(a, ast.Starred) and kind(a) >= SCALAR
                                   for a in node.args) else UNKNOWN
            if name == "sorted":
                return made
        return UNKNOWN

    @staticmethod
    def _binop(op: ast.operator, left: int, right: int, made: int) -> int:
        """The level of ``left op right`` from the levels of its operands.

        Only operands known to be builtin values or containers (SCALAR and
        above) make a builtin operator run; with an UNKNOWN operand the
        operator may be an application class's (``__add__``, ``__radd__``,
        ``__truediv__``...), whose result may be anything, a shared
        container included.
        """
        if left == NUMBER and right == NUMBER and not isinstance(op, ast.MatMult):
            return NUMBER
        if isinstance(op, ast.Mod) and left == ATOM and right >= DEEP:
            return ATOM         # a string formats builtin values (a str subclass's
                                # __rmod__ would run first; "%s" % (obj,) may be
                                # what obj.__str__ returned, a str subclass)
        if min(left, right) < SCALAR or isinstance(op, ast.Mod) and right < DEEP:
            return UNKNOWN
        if not isinstance(op, _COLLECTING):
            return ATOM         # numbers or strings, or TypeError, on builtins
        if isinstance(op, ast.Mult):
            # Repetition keeps the items: 3 * lst is a new list of them.
            return min(left, right, ATOM) if min(left, right) >= DEEP else made
        if max(left, right) >= ATOM:
            return ATOM         # a number or string with a builtin value: TypeError
        if min(left, right) >= DEEP:
            return DEEP         # tuple + tuple
        return SCALAR if max(left, right) >= DEEP else made


def local_kinds(bindings: LocalBindings, rebound: "set[str] | frozenset[str]",
                plain: bool) -> dict[str, int]:
    """The level of every local ``bindings`` follows: the lowest over its bindings.

    Computed as the greatest fixpoint (every local starts at NUMBER and is
    lowered until each binding is consistent with it): every value a local
    ever holds was stored by one of its bindings, so by induction over the
    run each local holds values of its level (``n = 0`` ... ``n += 1`` is a
    NUMBER). Module constants have the level of their value. ``plain``: the
    function is not a generator or coroutine, so its whole call runs in one
    section.
    """
    levels = {name: NUMBER for name in bindings.values}

    def name_kind(name: str) -> int:
        if name in levels:
            return levels[name]
        if name in bindings.constants:
            return constant_kind(bindings.constants[name])
        return UNKNOWN

    kinds = Kinds(name_kind, lambda name: name not in rebound and name not in bindings.shadowing)
    displays = {name: SCALAR if plain and name not in bindings.seen_by_nested else UNKNOWN
                for name in levels}
    changed = True
    while changed:
        changed = False
        for name, bound in bindings.values.items():
            level = min(kinds.of(value, False, displays[name]) for value in bound)
            if level < levels[name]:
                levels[name] = level
                changed = True
    return levels


def constant_kind(value: object) -> int:
    """The level of a constant's value (a number, a string, None, a tuple of such...)."""
    if isinstance(value, _NUMBER_TYPES):
        return NUMBER
    return DEEP if isinstance(value, tuple) else ATOM



# -- module constants ---------------------------------------------------------------

def module_constants(tree: ast.Module, declared_global: "set[str]") -> dict[str, object]:
    """Module globals bound once, at the top level, to a literal of immutable values
    (``WALL = 1``, ``STEPS = ((1, 0), (-1, 0))``), that no function declares ``global``.

    Functions of the module read such globals without barriers anyway (one
    rebound from another module is not tracked: docs/semantics.md, limit 4),
    so their value is taken as known there.
    """
    bindings: dict[str, int] = {}
    for node in _module_scope_nodes(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return {}
        for name in _bound_names(node):
            bindings[name] = bindings.get(name, 0) + 1
    constants: dict[str, object] = {}
    for stmt in tree.body:
        target, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and bindings.get(target.id) == 1 \
                and target.id not in declared_global and _is_literal(value):
            constants[target.id] = ast.literal_eval(value)     # type: ignore[arg-type]
    return constants


def _is_literal(node: object) -> bool:
    """A constant, a signed number, or a tuple of such."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, _NUMBER_TYPES)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant)


def _module_scope_nodes(tree: ast.Module):
    """The nodes evaluated in the module's own scope (not function and class bodies)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend([*node.decorator_list, node.args])     # the body is another scope
        elif isinstance(node, ast.ClassDef):
            stack.extend([*node.decorator_list, *node.bases, *node.keywords])
        elif not isinstance(node, ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _bound_names(node: ast.AST) -> list[str]:
    """The names that ``node`` binds (or deletes) in the scope it is evaluated in."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def nested_names(table: symtable.SymbolTable,
                 wanted: Callable[[symtable.Symbol], bool]) -> set[str]:
    """Names of the symbols, in every scope nested in ``table``, for which ``wanted`` holds."""
    names: set[str] = set()
    stack = list(table.get_children())
    while stack:
        child = stack.pop()
        names.update(symbol.get_name() for symbol in child.get_symbols() if wanted(symbol))
        stack.extend(child.get_children())
    return names
