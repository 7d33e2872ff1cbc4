"""Static escape analysis: locals that only ever hold objects the function itself created.

In a plain function (not a generator or coroutine) the whole call runs
inside one atomic section. A local that is bound only to list, dict or set
displays or comprehensions made in that call, and that no nested function
can see, always refers to an object created during the section: no other
thread can reach it before the section commits, and the section has
finished by then. Accesses through such a local need no barrier; the
rewriter leaves them as plain Python.

:func:`fresh_locals` finds those names for one function.
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


def fresh_locals(function: ast.FunctionDef, table: Optional[symtable.SymbolTable]) -> set[str]:
    """Names bound in ``function`` only by ``name = <display>``, invisible to nested scopes."""
    return _bound_only_by(function, table, lambda value: isinstance(value, _DISPLAYS),
                          loops=False, augmented=False, seen_by_nested_ok=False)


#: Builtins whose result is never a shared container (when the module does not rebind them).
SCALAR_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "abs", "round", "repr",
                             "hash", "id", "isinstance", "issubclass", "callable", "ord",
                             "chr", "sorted", "format", "divmod", "pow"})
_OPERATORS = (ast.Constant, ast.JoinedStr, ast.Compare, ast.BinOp, ast.UnaryOp)


def scalar_locals(function: ast.FunctionDef, table: Optional[symtable.SymbolTable],
                  rebound: set[str]) -> set[str]:
    """Locals that never hold a shared container: bound only to operator results,
    constants, results of scalar builtins (not in ``rebound``), other such locals,
    augmented assignments, or ``for`` targets over ``range(...)``.

    Reading them needs no value barrier (``n % d`` in a loop stays plain).
    """
    def scalar(value: ast.expr, known: set[str]) -> bool:
        if isinstance(value, _OPERATORS):
            return True
        if isinstance(value, ast.BoolOp):
            return all(scalar(v, known) for v in value.values)
        if isinstance(value, ast.Name):
            return value.id in known
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in SCALAR_BUILTINS and value.func.id not in rebound)

    known: set[str] = set()
    while True:
        found = _bound_only_by(function, table, lambda value: scalar(value, known),
                               loops=True, augmented=True, seen_by_nested_ok=True,
                               rebound=rebound)
        if found == known:
            return found
        known = found


def _bound_only_by(function: ast.FunctionDef, table: Optional[symtable.SymbolTable],
                   good_value: Callable[[ast.expr], bool], loops: bool, augmented: bool,
                   seen_by_nested_ok: bool, rebound: set[str] = frozenset()) -> set[str]:
    """Locals of ``function`` every binding of which is ``name = v`` with ``good_value(v)``.

    ``loops``: ``for name in range(...)`` counts as good; ``augmented``:
    ``name op= v`` does. A local a nested scope sees is excluded unless
    ``seen_by_nested_ok`` (only reads are possible then; assigned ones are boxed).
    """
    if table is None:
        return set()
    good: set[str] = set()
    bad: set[str] = set()
    sole_targets: set[int] = set()
    for node in _scope_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            target = node.targets[0]
            (good if good_value(node.value) else bad).add(target.id)
            sole_targets.add(id(target))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            ok = node.value is not None and good_value(node.value)
            (good if ok else bad).add(node.target.id)
            sole_targets.add(id(node.target))
        elif augmented and isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            good.add(node.target.id)
            sole_targets.add(id(node.target))
        elif loops and isinstance(node, ast.For) and isinstance(node.target, ast.Name) \
                and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                and node.iter.func.id == "range" and "range" not in rebound:
            good.add(node.target.id)
            sole_targets.add(id(node.target))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bad.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bad.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bad.add(node.rest)
    for node in _scope_nodes(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) \
                and id(node) not in sole_targets:
            bad.add(node.id)
    candidates = good - bad
    seen_by_nested = nested_names(table, lambda s: s.is_free() or s.is_nonlocal())
    assigned_by_nested = nested_names(table, symtable.Symbol.is_nonlocal)
    result = set()
    for name in candidates:
        try:
            symbol = table.lookup(name)
        except KeyError:
            continue
        if (symbol.is_parameter() or symbol.is_global() or symbol.is_nonlocal()
                or symbol.is_imported() or symbol.is_namespace()):
            continue
        if name in assigned_by_nested or (name in seen_by_nested and not seen_by_nested_ok):
            continue
        result.add(name)
    return result


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
