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
    if table is None:
        return set()
    good: set[str] = set()
    bad: set[str] = set()
    sole_targets: set[int] = set()
    for node in _scope_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            target = node.targets[0]
            (good if isinstance(node.value, _DISPLAYS) else bad).add(target.id)
            sole_targets.add(id(target))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            fresh = node.value is not None and isinstance(node.value, _DISPLAYS)
            (good if fresh else bad).add(node.target.id)
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
    result = set()
    for name in candidates:
        try:
            symbol = table.lookup(name)
        except KeyError:
            continue
        if (symbol.is_parameter() or symbol.is_global() or symbol.is_nonlocal()
                or symbol.is_imported() or symbol.is_namespace()):
            continue
        if name in seen_by_nested:
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
