"""Static escape analysis: locals that only ever hold objects the function itself created.

In a plain function (not a generator or coroutine) the whole call runs
inside one atomic section. A local that is bound only to list, dict or set
displays or comprehensions made in that call, and that no nested function
can see, always refers to an object created during the section: no other
thread can reach it before the section commits, and the section has
finished by then. Accesses through such a local need no barrier; the
rewriter leaves them as plain Python.

:func:`fresh_locals` finds those names for one function, and
:func:`scalar_locals` the locals that never hold a shared container (they
need no value barrier), both from one :func:`local_bindings` walk.
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


#: The bindings of a local that are not ``name = value``: ``for name in range(...)``
#: and ``name op= value``.
RANGE_LOOP = "for-range"
AUGMENTED = "augmented"


class LocalBindings:
    """How each local of one function is bound, for the analyses below.

    ``values[name]`` lists what every binding of ``name`` stores: a value
    expression, or ``RANGE_LOOP`` / ``AUGMENTED``. Locals bound in any other
    way (unpacking, ``with ... as``, ``except ... as``, imports, walrus...),
    parameters, globals and locals a nested function assigns are left out;
    ``seen_by_nested`` are those a nested function reads.
    """

    def __init__(self, function: ast.FunctionDef, table: Optional[symtable.SymbolTable],
                 rebound: "set[str] | frozenset[str]" = frozenset()) -> None:
        self.values: dict[str, list] = {}
        self.seen_by_nested: set[str] = set()
        if table is None:
            return
        values: dict[str, list] = {}
        bad: set[str] = set()
        sole_targets: set[int] = set()
        for node in _scope_nodes(function):
            target, value = _simple_binding(node, rebound)
            if target is not None:
                values.setdefault(target.id, []).append(value)
                sole_targets.add(id(target))
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
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


def _simple_binding(node: ast.AST, rebound: "set[str] | frozenset[str]") -> tuple:
    """(target Name, what it stores) for a binding LocalBindings tracks, else (None, None)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Name):
        return node.targets[0], node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target, node.value           # None (a bare annotation) disqualifies
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return node.target, AUGMENTED
    if isinstance(node, ast.For) and isinstance(node.target, ast.Name) \
            and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
            and node.iter.func.id == "range" and "range" not in rebound:
        return node.target, RANGE_LOOP
    return None, None


def fresh_locals(bindings: LocalBindings) -> set[str]:
    """Locals bound only by ``name = <display>``, invisible to nested scopes."""
    return {name for name, bound in bindings.values.items()
            if name not in bindings.seen_by_nested
            and all(isinstance(value, _DISPLAYS) for value in bound)}


#: Builtins whose result is never a shared container (when the module does not rebind them).
SCALAR_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "abs", "round", "repr",
                             "hash", "id", "isinstance", "issubclass", "callable", "ord",
                             "chr", "sorted", "format", "divmod", "pow"})
_OPERATORS = (ast.Constant, ast.JoinedStr, ast.Compare, ast.BinOp, ast.UnaryOp)


def scalar_locals(bindings: LocalBindings, rebound: "set[str] | frozenset[str]") -> set[str]:
    """Locals that never hold a shared container: bound only to operator results,
    constants, results of scalar builtins (not in ``rebound``), other such locals,
    augmented assignments, or ``for`` targets over ``range(...)``.

    Reading them needs no value barrier (``n % d`` in a loop stays plain).
    A nested function may read them (it cannot assign them: those are boxed).
    """
    def scalar(value: object, known: set[str]) -> bool:
        if value is RANGE_LOOP or value is AUGMENTED or isinstance(value, _OPERATORS):
            return True
        if isinstance(value, ast.BoolOp):
            return all(scalar(v, known) for v in value.values)
        if isinstance(value, ast.Name):
            return value.id in known
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in SCALAR_BUILTINS and value.func.id not in rebound)

    known: set[str] = set()
    while True:                         # a local bound to another scalar local: to a fixpoint
        found = {name for name, bound in bindings.values.items()
                 if all(scalar(value, known) for value in bound)}
        if found == known:
            return found
        known = found


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
