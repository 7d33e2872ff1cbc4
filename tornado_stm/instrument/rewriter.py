"""The AST rewriter: routes the heap accesses of application functions through the barriers.

Only function bodies are rewritten (module and class bodies run once, at
import, before any section exists). In a function body:

* attribute, subscript and global-name reads, writes and deletions become
  calls to the barriers of ``tornado_stm.stm.barriers`` (see the table in
  that module); globals are barriered when some function of the module
  declares them ``global`` (the others are never rebound at run time);
* a local that a nested function assigns (``nonlocal``) lives in a
  ``Box``, whose ``value`` attribute is barriered like any other;
* calls go through the call barrier, except ``super``, ``locals``,
  ``globals``, ``vars``, ``dir``, ``eval``, ``exec`` and ``breakpoint``,
  which must see the caller's frame;
* ``for`` loops and comprehensions iterate through the iteration barrier,
  ``x in y`` uses the membership barrier, ``t op= v`` the augmented
  assignment barrier; list, dict and set displays and comprehensions are
  marked private to the running section;
* values that plain Python reads without a barrier go through one: the
  tests of ``if``, ``while``, ``assert``, conditional expressions,
  comprehension filters and ``not`` (``truth``); the operands of ``and``
  and ``or`` whose value is kept (``touch``); the operands of arithmetic
  and set operators, unpacked and starred values and ``**`` mappings
  (``view``); the operands of comparisons and the values of f-strings and
  ``%`` formatting (``deep_view``); an operator whose two operands both
  need one is a single ``binary`` or ``compare`` call. Operands for which
  the barrier would have nothing to do are left plain: what each local and
  operand can hold (a number, a string, a tuple of them, never a shared
  container...) comes from ``fresh.Kinds``, and an operand combined or
  compared with a number is not read. Every ``while`` loop calls ``tick``
  once per iteration, so a section caught in a loop by an inconsistent
  read re-validates;
* barriers a function calls inside its loops are bound to locals at its
  start (``_stm_gi_l = _stm_gi``): a local is cheaper to load than a
  global where ``LOAD_GLOBAL`` is not specialized (3.13t);
* plain functions and lambdas get the section entry wrapper (innermost
  decorator): called from uninstrumented code they start an atomic
  section. Generator and coroutine functions get the same decorator, which
  for them makes each step resumed outside a section hold W
  (``section.entry``).

Locals are never barriered. Every new node carries the location of the
node it replaces, so line numbers and tracebacks point at the user's
code. Evaluation order is kept: right-hand sides are evaluated into
temporaries before the target's own sub-expressions, as Python does.
"""

from __future__ import annotations

import ast
import copy
import builtins
import symtable
from typing import Iterable, Iterator, Optional

from tornado_stm.instrument.fresh import (ATOM, DEEP, NUMBER, SCALAR, UNKNOWN, Kinds, LocalBindings,
                                         constant_kind, fresh_locals, local_kinds,
                                         module_constants, nested_names)
from tornado_stm.stm.bindings import TESTED_RESULTS, is_special_name

#: Names injected into every instrumented module (name -> barrier attribute).
RUNTIME_NAMES = {
    "_stm_cur": "current", "_stm_ga": "get_attr", "_stm_sa": "set_attr", "_stm_da": "del_attr",
    "_stm_gi": "get_item", "_stm_si": "set_item", "_stm_di": "del_item",
    "_stm_gg": "get_global", "_stm_sg": "set_global", "_stm_dg": "del_global",
    "_stm_call": "call", "_stm_iter": "iterate", "_stm_in": "contains",
    "_stm_aug": "augmented", "_stm_new": "new", "_stm_Box": "Box",
    "_stm_own_item": "own_item",
    "_stm_view": "view", "_stm_operand": "operand", "_stm_dview": "deep_view", "_stm_truth": "truth",
    "_stm_touch": "touch", "_stm_tick": "tick", "_stm_binop": "binary", "_stm_cmp": "compare",
    "_stm_cmp_test": "compare_test",
    "_stm_match": "match_subject", "_stm_named": "named_value",
    "_stm_bind_globals": "binding_globals", "_stm_idict": "instance_dict",
    "_stm_imported": "imported_name", "_stm_cm": "context_manager",
    "_stm_await": "awaited", "_stm_raise": "raised", "_stm_bases": "class_bases",
    "_stm_patterns": "match_patterns", "_stm_stores": "stores_in_place",
    "_stm_plain_code": "code_run_plainly",
    "_stm_callee": "recursive_callee", "_stm_locals": "frame_names",
    "_stm_pairs": "pairs_operand", "_stm_compared": "compared", "_stm_gm": "method_to_call",
    "_stm_importing": "importing",
}
#: The module's own globals dict, injected as this name.
GLOBALS_NAME = "_stm_G"
TX_NAME = "_stm_tx"

_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec",
                             "breakpoint"})
#: Of those, the ones that read only their argument when given one
#: (``vars(obj)`` is ``obj.__dict__``): then called through the barrier.
_FRAME_ONLY_WITHOUT_ARGS = frozenset({"vars", "dir"})
#: Builtins that never read a container's contents nor have effects of their
#: own (what they call on application objects is instrumented code): when
#: the module does not rebind the name, they are called without the barrier.
#: Not ``isinstance``/``issubclass``: a Protocol's check reads the object's
#: attributes in library code (the C barrier answers plain classes at once).
_SCALAR_BUILTINS = frozenset({"abs", "divmod", "round", "chr", "ord", "callable", "id",
                              "range", "pow"})
#: Methods of builtin containers that read what their arguments hold (by
#: name: the object they are called on is the call's own), the barrier that
#: reads such an argument (the operand's, pairs_operand for update, deep_view
#: for the methods that compare items), and the kind from which it has nothing to do.
_READING_METHODS = {
    "update": ("_stm_pairs", ATOM),     # (the items of a generator of pairs too)
    **dict.fromkeys(("extend", "union", "intersection", "difference",
                     "symmetric_difference", "intersection_update", "difference_update",
                     "symmetric_difference_update", "issubset", "issuperset", "isdisjoint",
                     "__iadd__", "__ior__", "__iand__", "__isub__", "__ixor__"),
                    ("_stm_operand", SCALAR)),
    **dict.fromkeys(("index", "count", "remove", "__contains__", "__eq__"), ("_stm_dview", DEEP)),
}
#: Methods that compare the items of their object (which may be shared
#: containers, compared by C code past the barriers): through the call
#: barrier even on an object the section made.
_COMPARING_ITEMS = frozenset({"sort", "index", "count", "remove"})
#: Of the frame builtins, those that list the function's own names.
_FRAME_NAMES = frozenset({"locals", "vars", "dir"})
#: Builtin classes of ``case int():`` patterns: matched by type alone.
_BUILTIN_PATTERN_CLASSES = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset",
                                      "int", "list", "set", "str", "tuple", "complex"})
#: Operators by their index in barriers.BINARY_OPERATORS and COMPARE_OPERATORS.
_BINARY_INDEX = {op: index for index, op in enumerate((
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
    ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult))}
_COMPARE_INDEX = {op: index for index, op in enumerate((
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE))}
_AUG_OPS = {
    ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv",
    ast.FloorDiv: "ifloordiv", ast.Mod: "imod", ast.Pow: "ipow", ast.LShift: "ilshift",
    ast.RShift: "irshift", ast.BitOr: "ior", ast.BitXor: "ixor", ast.BitAnd: "iand",
    ast.MatMult: "imatmul",
}


#: Expressions that make a new object, private to the section that runs them.
_MADE_HERE = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
              ast.GeneratorExp)


def _name(identifier: str) -> ast.Name:
    return ast.Name(id=identifier, ctx=ast.Load())


def _class_body_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a class body runs itself: its own, and those in its
    ``if``/``for``/``while``/``with``/``try`` blocks (not those of its methods)."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _class_body_statements(getattr(statement, field, []))
        for handler in getattr(statement, "handlers", []):
            yield from _class_body_statements(handler.body)
        for case in getattr(statement, "cases", []):
            yield from _class_body_statements(case.body)


def _slice_store(target: ast.expr) -> bool:
    """``x[a:b] = value``: the value is iterated, not just stored."""
    return isinstance(target, ast.Subscript) and (
        isinstance(target.slice, ast.Slice) or isinstance(target.slice, ast.Tuple)
        and any(isinstance(e, ast.Slice) for e in target.slice.elts))


def _targets(statement: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def _wrap_special_method(statement: ast.Assign | ast.AnnAssign, name: str) -> None:
    """``__del__ = value``, ``__eq__ = value`` (a lambda, a function bound
    under another name), ``__getitem__ = TABLE.__getitem__``: the value gets
    the rules a ``def`` of that name gets (``section.finalizer``,
    ``bindings.tested_method``), and a C method the call barrier
    (``bindings.special_method``)."""
    wrapper = "_stm_finalizer" if name == "__del__" else \
        "_stm_tested" if name in TESTED_RESULTS else "_stm_special"
    if statement.value is not None:
        args = (statement.value,) if name == "__del__" else (statement.value, _const(name))
        statement.value = ast.copy_location(_call(wrapper, *args), statement.value)


def _special_method_bound(targets: list[ast.expr], attribute: bool) -> Optional[str]:
    """The name of a special method (``__del__``, ``__eq__``, ``__len__``...)
    that an assignment binds: in a class body as a name, or after the class
    statement as an attribute."""
    for target in targets:
        name = target.attr if attribute and isinstance(target, ast.Attribute) else \
            target.id if not attribute and isinstance(target, ast.Name) else None
        if name is not None and (name == "__del__" or is_special_name(name)):
            return name
    return None


def _is_call_of(node: ast.expr, function: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id == function


def _call(function: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(function), args=list(args), keywords=[])


def _const(value: object) -> ast.Constant:
    return ast.Constant(value=value)


def _is_generator(node: ast.AST) -> bool:
    """True if ``node`` (a def) yields in its own body (not in nested scopes)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(child))
    return False


def _each_target(targets: Iterable[ast.expr]) -> Iterable[ast.expr]:
    """The targets of a ``del``, with tuples and lists of targets opened up."""
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _each_target(target.elts)
        else:
            yield target


class _Scope:
    """What the rewriter knows about the function it is inside."""

    def __init__(self, bound: set[str], declared_global: set[str], boxed: dict[str, "_Scope"],
                 tx_is_local: bool, parent: Optional["_Scope"]) -> None:
        self.bound = bound                      # names local to this scope
        self.declared_global = declared_global
        self.boxed = boxed                      # visible boxed names -> owning scope
        self.tx_is_local = tx_is_local
        self.parent = parent
        #: Locals that only hold objects this call created (see fresh.py): no barriers.
        self.fresh: set[str] = set()
        #: What each local can hold (fresh.Kinds levels): which value barriers it needs.
        self.kinds: dict[str, int] = {}
        #: The module constants (fresh.module_constants) this scope reads.
        self.constants: dict[str, object] = {}
        #: A class body (in a function): its names are not seen by its methods.
        self.is_class = False
        #: A plain function's own name: ``walk(n - 1)`` in ``walk`` calls itself
        #: (and ``self.walk(n - 1)``, ``self`` its first parameter, most likely).
        self.own_name: Optional[str] = None
        self.first_param: Optional[str] = None
        #: A class's method whose result the interpreter tests (``__eq__``,
        #: ``__contains__``, ``__exit__``...): what it returns goes through
        #: ``compared`` (see visit_Return).
        self.compares = False
        #: A class body's temporaries (class attributes until the body ends).
        self.class_temps: list[str] = []
        #: An ``async def`` body: it runs in coroutine steps (section._step),
        #: and ``obj.m(args)`` looks ``m`` up at the call (barriers.method_to_call).
        self.coroutine = False


class Rewriter(ast.NodeTransformer):
    """Rewrites one module; see the module docstring."""

    def __init__(self, source: str, filename: str, tree: ast.Module) -> None:
        """``tree`` is ``ast.parse(source, filename)``, the tree this rewriter will visit."""
        self.filename = filename
        top = symtable.symtable(source, filename, "exec")
        self.tables = self._function_tables(top)
        self.mutable_globals = self._globals_declared(tree)
        #: The module reaches its globals as a dict (``globals()["LIMIT"] = n``):
        #: any of them may change, so every global read is barriered.
        self.all_globals_mutable = any(isinstance(node, ast.Name) and node.id == "globals"
                                       for node in ast.walk(tree))
        self.constants = {} if self.all_globals_mutable else \
            module_constants(tree, self.mutable_globals)
        self.module_names = {symbol.get_name() for symbol in top.get_symbols()
                             if symbol.is_assigned() or symbol.is_imported()
                             or symbol.is_namespace()}
        if any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
               for node in ast.walk(tree)):
            # from m import *: any builtin may be rebound by names no table lists.
            self.module_names |= set(dir(builtins))
        #: The module's globals its functions read plainly (not declared
        #: ``global`` anywhere): rebinding one must be seen (registry.reads_plainly).
        self.plain_global_reads: set[str] = set()
        self.scope: Optional[_Scope] = None
        self.temp_counter = 0

    # -- analysis -----------------------------------------------------------

    @staticmethod
    def _function_tables(top: symtable.SymbolTable) -> dict[tuple[str, int], symtable.SymbolTable]:
        tables: dict[tuple[str, int], symtable.SymbolTable] = {}
        stack = [top]
        while stack:
            table = stack.pop()
            if table.get_type() in ("function", "class"):
                tables.setdefault((table.get_name(), table.get_lineno()), table)
            stack.extend(table.get_children())
        return tables

    @staticmethod
    def _globals_declared(tree: ast.AST) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                names.update(node.names)
        return names

    def _boxed_in(self, table: Optional[symtable.SymbolTable]) -> set[str]:
        """Locals of ``table`` that some nested function declares nonlocal."""
        if table is None:
            return set()
        wanted = nested_names(table, symtable.Symbol.is_nonlocal)
        boxed = set()
        for name in wanted:
            try:
                symbol = table.lookup(name)
            except KeyError:
                continue
            if symbol.is_local() and not symbol.is_global() and not symbol.is_nonlocal():
                boxed.add(name)
        return boxed

    # -- helpers ------------------------------------------------------------

    def tx(self) -> ast.expr:
        if self.scope is not None and self.scope.tx_is_local:
            return _name(TX_NAME)
        return _call("_stm_cur")

    def temp(self) -> str:
        self.temp_counter += 1
        if self.scope is not None and self.scope.is_class:
            # A class body's temporary is a class attribute until the body
            # ends (visit_ClassDef drops it): a dunder name, which an Enum
            # does not take for a member.
            name = f"__stm_t{self.temp_counter}__"
            self.scope.class_temps.append(name)
            return name
        return f"_stm_t{self.temp_counter}"

    def _resolve(self, name: str) -> str:
        """'local', 'boxed', 'global' (barriered) or 'plain' for a name in the current scope."""
        scope = self.scope
        if scope is None:
            return "plain"
        if name in scope.declared_global:
            return "global" if self._mutable_global(name) else "plain"
        if name in scope.boxed and (name not in scope.bound or scope.boxed[name] is scope):
            return "boxed"
        if name in scope.bound:
            return "local"
        walk = _function_scope(scope.parent)
        while walk is not None:
            if name in walk.bound:
                return "local"
            walk = _function_scope(walk.parent)
        return "global" if self._mutable_global(name) else "plain"

    def _mutable_global(self, name: str) -> bool:
        return self.all_globals_mutable or name in self.mutable_globals

    def _in_function(self) -> bool:
        return self.scope is not None

    def _fresh(self, node: ast.expr) -> bool:
        """True for a local that only holds objects this call created: no barrier needed."""
        return (isinstance(node, ast.Name) and self.scope is not None
                and node.id in self.scope.fresh)

    # -- functions ------------------------------------------------------------

    def _enter(self, params: Iterable[str], tx_is_local: bool,
               table: Optional[symtable.SymbolTable]) -> tuple[_Scope, set[str]]:
        if table is not None:
            bound = {s.get_name() for s in table.get_symbols()
                     if s.is_local() and not s.is_global()}
            declared_global = {s.get_name() for s in table.get_symbols() if s.is_declared_global()}
        else:
            bound, declared_global = set(params), set()
        own_boxed = self._boxed_in(table)
        # A class body's names are not visible to the functions defined in it.
        parent = self.scope if self.scope is None or table is None \
            or table.get_type() == "class" else _function_scope(self.scope)
        inherited = dict(parent.boxed) if parent else {}
        for name in bound:
            inherited.pop(name, None)
        for name in declared_global:
            inherited.pop(name, None)
        scope = _Scope(bound, declared_global, inherited, tx_is_local, parent)
        for name in own_boxed:
            scope.boxed[name] = scope
        return scope, own_boxed

    def _rewrite_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        # Decorators, defaults and annotations belong to the enclosing scope.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self._visit_defaults(node.args)
        plain = isinstance(node, ast.FunctionDef) and not _is_generator(node)
        table = self.tables.get((node.name, node.lineno))
        params = _params(node.args)
        scope, own_boxed = self._enter(params, plain, table)
        bindings = LocalBindings(node, table, self.module_names, self.constants)
        if plain:
            scope.fresh = fresh_locals(bindings) - own_boxed
            scope.own_name = node.name
            scope.first_param = params[0] if params else None
        scope.kinds = {name: kind for name, kind in
                       local_kinds(bindings, self.module_names, plain).items()
                       if name not in own_boxed}
        scope.constants = bindings.constants
        scope.compares = getattr(node, "_stm_compares", False)
        scope.coroutine = isinstance(node, ast.AsyncFunctionDef)
        saved, self.scope = self.scope, scope
        try:
            body = self._visit_body(node.body)
        finally:
            self.scope = saved
        prologue: list[ast.stmt] = []
        if plain:
            prologue.append(ast.Assign(targets=[ast.Name(id=TX_NAME, ctx=ast.Store())],
                                       value=_call("_stm_cur")))
        tx_expr = _name(TX_NAME) if plain else _call("_stm_cur")
        for name in sorted(own_boxed):
            value = [_name(name)] if name in params else []
            box = _call("_stm_Box", _const(name), *value)
            prologue.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                       value=_call("_stm_new", tx_expr, box)))
        prologue += _alias_barriers(body)
        first = node.body[0]
        for stmt in prologue:
            ast.copy_location(stmt, first)
        docstring = (body[:1] if body and isinstance(body[0], ast.Expr)
                     and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str) else [])
        node.body = docstring + prologue + body[len(docstring):]
        # Innermost decorator: a section entry, or for a generator or
        # coroutine function the wrapper that runs its steps under W (from
        # their start when the frame reassigns a local its nested functions
        # read: a closure another thread calls reads it without a barrier).
        entry_name = "_stm_entry"
        if not plain and _reassigned(table, node, bindings.seen_by_nested - own_boxed):
            entry_name = "_stm_entry_shared_cells"
        decorator = ast.copy_location(_name(entry_name), node)
        node.decorator_list.append(decorator)
        return node

    def _visit_defaults(self, args: ast.arguments) -> ast.arguments:
        if self._in_function():
            args.defaults = [self.visit(d) for d in args.defaults]
            args.kw_defaults = [self.visit(d) if d is not None else None for d in args.kw_defaults]
        return args

    def _visit_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        result: list[ast.stmt] = []
        for stmt in body:
            new = self.visit(stmt)
            if new is None:
                continue
            if isinstance(new, list):
                result.extend(new)
            else:
                result.append(new)
        return result

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST | list[ast.stmt]:
        return self._binding_itself(self._rewrite_function(node), [node.name])

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST | list[ast.stmt]:
        return self._binding_itself(self._rewrite_function(node), [node.name])

    def visit_Import(self, node: ast.Import) -> ast.AST | list[ast.stmt]:
        bound = self._binding_itself(node, [alias.asname or alias.name.partition(".")[0]
                                            for alias in node.names])
        if not self._in_function():
            return bound
        # A module imported for the first time runs its body as plain code:
        # alone (barriers.importing)
        first = [self._importing(alias.name, 0, ()) for alias in node.names]
        return self._located(first + _statements(bound), node)

    def _importing(self, module: str, level: int, names: tuple) -> ast.stmt:
        return ast.Expr(value=_call("_stm_importing", self.tx(), _const(module), _const(level),
                                    _const(names), _name("__package__")))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list[ast.stmt]:
        bound = self._binding_itself(node, [alias.asname or alias.name for alias in node.names])
        if not self._in_function():
            return bound
        first = self._importing(node.module or "", node.level,
                                tuple(alias.name for alias in node.names))
        bound = [first] + _statements(bound)
        if self.scope.is_class or node.names[0].name == "*":
            return self._located(bound, node)
        # The import reads the module's attributes plainly: read them again
        # through the barriers (barriers.imported_name).
        # (A global or a nonlocal bound by the import is bound inevitably:
        # _binding_itself.)
        stmts = bound
        for alias in node.names:
            local = alias.asname or alias.name
            if self._resolve(local) != "local":
                continue
            stmts.append(ast.Assign(
                targets=[ast.Name(id=local, ctx=ast.Store())],
                value=_call("_stm_imported", self.tx(), _name(local), _const(node.module or ""),
                            _const(node.level), _const(alias.name), _name("__package__"))))
        return self._located(stmts, node)

    def _binding_itself(self, node: ast.stmt, names: list[str]) -> ast.AST | list[ast.stmt]:
        """A statement of a function that binds ``names`` itself (def, class, import).

        Python stores them directly: a nonlocal's ``Box`` would be replaced,
        and a global written in place without a version. A Box is kept aside
        and given the new value through the barriers; globals are bound
        inside ``with barriers.binding_globals(...)``, which makes the
        section inevitable and holds the names' stripes (a rare statement in
        a function: slow, but serial).
        """
        if not self._in_function() or self.scope.is_class:
            return node
        boxed = [name for name in names if self._resolve(name) == "boxed"]
        in_globals = [name for name in names if self._resolve(name) == "global"]
        if not boxed and not in_globals:
            return node
        stmts: list[ast.stmt] = [node]
        for name in boxed:
            box, value = self.temp(), self.temp()
            stmts.insert(0, ast.Assign(targets=[ast.Name(id=box, ctx=ast.Store())],
                                       value=_name(name)))
            stmts += [ast.Assign(targets=[ast.Name(id=value, ctx=ast.Store())], value=_name(name)),
                      ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=_name(box)),
                      ast.Expr(value=_call("_stm_sa", self.tx(), _name(name), _const("value"),
                                           _name(value)))]
        if in_globals:
            holding = _call("_stm_bind_globals", self.tx(), _name(GLOBALS_NAME),
                            *map(_const, in_globals))
            stmts = [ast.With(items=[ast.withitem(context_expr=holding)], body=stmts)]
        return self._located(stmts, node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if node.value is not None and self.scope is not None and self.scope.compares:
            # The interpreter and C code test a comparison's result themselves
            # (a chained comparison, a match value pattern, x in seq), where
            # no barrier of the caller stands: see barriers.compared.
            node.value = ast.copy_location(_call("_stm_compared", self.tx(), node.value),
                                           node.value)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        for statement in _class_body_statements(node.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and statement.name in TESTED_RESULTS:
                statement._stm_compares = True        # type: ignore[attr-defined]
            # ``__del__ = release``, ``__eq__ = lambda self, o: ...``: a
            # special method not written as a ``def`` of its name (maybe
            # under an ``if``).
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                special = _special_method_bound(_targets(statement), attribute=False)
                if special is not None:
                    _wrap_special_method(statement, special)
        # Outermost, once the class is made: the special methods it got where
        # the rewriter cannot see (bindings.audited_class).
        audited = ast.copy_location(_name("_stm_class"), node)
        if not self._in_function():
            # A module's class body runs once, at import: only its functions are rewritten.
            node.body = self._visit_body(node.body)
            node.decorator_list.insert(0, audited)
            return node
        # A class statement in a function runs in the section of each call: its
        # decorators, bases and body read through the barriers like the
        # function's own code, and its methods see the function's names.
        node.decorator_list = [audited, *(self.visit(d) for d in node.decorator_list)]
        node.bases = [self.visit(b) for b in node.bases]
        if node.bases:
            # class P(Base): seen by a barrier (P enters Base.__subclasses__())
            bases = _call("_stm_bases", self.tx(), ast.Tuple(elts=node.bases, ctx=ast.Load()))
            node.bases = [ast.copy_location(ast.Starred(value=bases, ctx=ast.Load()),
                                            node.bases[0])]
        node.keywords = [self.visit(k) for k in node.keywords]
        scope, _ = self._enter((), False, self.tables.get((node.name, node.lineno)))
        scope.is_class = True
        saved, self.scope = self.scope, scope
        try:
            node.body = self._visit_body(node.body)
        finally:
            self.scope = saved
        # locals().pop("__stm_t1__", None): the class gets no temporaries
        node.body += [ast.fix_missing_locations(ast.copy_location(ast.Expr(value=ast.Call(
            func=ast.Attribute(value=_call("locals"), attr="pop", ctx=ast.Load()),
            args=[_const(name), _const(None)], keywords=[])), node.body[-1]))
            for name in scope.class_temps]
        return self._binding_itself(node, [node.name])

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        # Lambdas anywhere (module level too) become section entries.
        node.args = self._visit_defaults(node.args)
        scope, _ = self._enter(_params(node.args), False, None)
        saved, self.scope = self.scope, scope
        try:
            node.body = self.visit(node.body)
        finally:
            self.scope = saved
        return ast.copy_location(_call("_stm_entry", node), node)

    # -- expressions ------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if not self._in_function() or not isinstance(node.ctx, ast.Load) \
                or self._fresh(node.value):
            return self.generic_visit(node)
        value = self.visit(node.value)
        if node.attr == "__dict__":
            return ast.copy_location(_call("_stm_idict", self.tx(), value), node)
        return ast.copy_location(_call("_stm_ga", self.tx(), value, _const(node.attr)), node)

    def _index(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Slice):
            parts = [self.visit(p) if p is not None else _const(None)
                     for p in (node.lower, node.upper, node.step)]
            return ast.copy_location(_call("_stm_slice", *parts), node)
        if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
            return ast.copy_location(ast.Tuple(elts=[self._index(e) for e in node.elts],
                                               ctx=ast.Load()), node)
        return self.visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if not self._in_function() or not isinstance(node.ctx, ast.Load) \
                or self._fresh(node.value):
            return self.generic_visit(node)
        value = self.visit(node.value)
        key = self._index(node.slice)
        return ast.copy_location(_call("_stm_gi", self.tx(), value, key), node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not self._in_function() or not isinstance(node.ctx, ast.Load):
            return node
        kind = self._resolve(node.id)
        if kind == "plain" and (node.id in self.module_names or not hasattr(builtins, node.id)):
            # (a name no top-level statement binds may still be a global:
            # ``from m import *``, ``setattr(sys.modules[__name__], ...)``)
            self.plain_global_reads.add(node.id)
        if kind == "global":
            return ast.copy_location(
                _call("_stm_gg", self.tx(), _name(GLOBALS_NAME), _const(node.id)), node)
        if kind == "boxed":
            return ast.copy_location(
                _call("_stm_ga", self.tx(), _name(node.id), _const("value")), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if not self._in_function():
            return self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_BUILTINS \
                and node.func.id not in self.module_names \
                and self._resolve(node.func.id) in ("plain", "global") \
                and not (node.func.id in _FRAME_ONLY_WITHOUT_ARGS and node.args):
            if node.func.id in _FRAME_NAMES and not node.args and not node.keywords \
                    and not self.scope.is_class:
                # locals(), vars(), dir(): the function's names, not the
                # rewriter's (_stm_tx, temporaries), a nonlocal's value, not its Box
                return ast.copy_location(_call("_stm_locals", self.tx(), node), node)
            builtin = node.func.id
            node = self.generic_visit(node)
            if builtin in ("eval", "exec") and node.args and not isinstance(node.args[0], ast.Starred):
                # the code runs unbarriered, in place: alone and for good
                node.args[0] = ast.copy_location(
                    _call("_stm_plain_code", self.tx(), node.args[0]), node.args[0])
            if builtin in ("eval", "exec") and len(node.args) == 1 and not node.keywords \
                    and not isinstance(node.args[0], ast.Starred) and not self.scope.is_class:
                # eval(text) sees the function's names as locals() gives them
                node.args += [_call("globals"),
                              _call("_stm_locals", self.tx(), _call("locals"))]
            return node
        if isinstance(node.func, ast.Attribute) and self._fresh(node.func.value) \
                and node.func.attr not in _COMPARING_ITEMS:
            # A method of an object this call created: a plain call. The
            # arguments it reads the contents of (mine.update(SHARED),
            # mine.extend(SHARED), mine.index(row)) are read as the section
            # sees them, its own writes included.
            reader = _READING_METHODS.get(node.func.attr)
            node.func = self.visit(node.func)
            node.args = [self.visit(a) if reader is None or isinstance(a, ast.Starred) else
                         self._wrapped(reader[0], a, reader[1]) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        if isinstance(node.func, ast.Name) and node.func.id == "vars" and len(node.args) == 1 \
                and not node.keywords and self._resolve("vars") == "plain" \
                and "vars" not in self.module_names:
            return ast.copy_location(
                _call("_stm_idict", self.tx(), self.visit(node.args[0]), _name("vars")), node)
        if isinstance(node.func, ast.Name) and node.func.id in _SCALAR_BUILTINS \
                and node.func.id not in self.module_names \
                and self._resolve(node.func.id) == "plain":
            return self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 \
                and not node.keywords and self._fresh(node.args[0]) \
                and "len" not in self.module_names and self._resolve("len") == "plain":
            return self.generic_visit(node)      # the size of an object this call created
        if self._calls_itself(node.func):
            # walk(n - 1) in walk: called from this frame, not through the C
            # call barrier, so deep recursion needs no C stack (3.11+ inlines
            # a Python-to-Python call)
            callee = _call("_stm_callee", self.tx(), self.visit(node.func))
            new = ast.Call(func=callee, args=[self.visit(a) for a in node.args],
                           keywords=[self._keyword(k) for k in node.keywords])
            return ast.copy_location(new, node)
        if self.scope.coroutine and isinstance(node.func, ast.Attribute) \
                and node.func.attr != "__dict__" and not _suspends(node):
            # the method is looked up at the call, after its arguments (when
            # that is the same: barriers.method_to_call)
            func = ast.copy_location(_call("_stm_gm", self.tx(), self.visit(node.func.value),
                                           _const(node.func.attr)), node.func)
        else:
            func = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(args) == 3 \
                and not any(isinstance(a, ast.Starred) for a in args):
            # type(name, bases, namespace) makes a class, as a class statement does
            args[1] = ast.copy_location(_call("_stm_bases", self.tx(), args[1]), args[1])
        keywords = [self._keyword(k) for k in node.keywords]
        new = ast.Call(func=_name("_stm_call"), args=[self.tx(), func, *args], keywords=keywords)
        return ast.copy_location(new, node)

    def _calls_itself(self, func: ast.expr) -> bool:
        """True for ``walk`` in ``walk``, or ``self.walk`` in a method ``walk(self, ...)``."""
        scope = self.scope
        if scope is None or scope.own_name is None:
            return False
        if isinstance(func, ast.Name):
            return func.id == scope.own_name and self._resolve(func.id) in ("global", "plain")
        return (isinstance(func, ast.Attribute) and func.attr == scope.own_name
                and isinstance(func.value, ast.Name) and func.value.id == scope.first_param
                and self._resolve(func.value.id) == "local")

    def _keyword(self, node: ast.keyword) -> ast.keyword:
        if node.arg is None:                     # f(**mapping) reads the mapping now
            node.value = self._wrapped("_stm_operand", node.value)
            return node
        return self.visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if not self._in_function():
            return self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            # ==, <, chained comparisons: every operand not only compared by
            # identity is read as it is, nested containers included.
            # An operand compared only by identity, or only with numbers
            # (x == 0, 0 <= i < len(row): a container compared with a number
            # is unequal, or a TypeError, without its contents being read)
            # stays plain.
            operands = [node.left, *node.comparators]
            if len(operands) == 2 and type(node.ops[0]) in _COMPARE_INDEX \
                    and max(self._kind(o) for o in operands) < DEEP:
                # a == b, both read: one compare() call rather than two deep_view().
                return ast.copy_location(_call(
                    "_stm_cmp", self.tx(), _const(_COMPARE_INDEX[type(node.ops[0])]),
                    self.visit(node.left), self.visit(node.comparators[0])), node)
            numbers = [self._kind(o) == NUMBER for o in operands]
            plain = [all(isinstance(node.ops[k], (ast.Is, ast.IsNot)) or numbers[j]
                         for k, j in ((i - 1, i - 1), (i, i + 1)) if 0 <= k < len(node.ops))
                     for i in range(len(operands))]
            visited = [self.visit(o) if only else self._deep(o)
                       for o, only in zip(operands, plain)]
            node.left, node.comparators = visited[0], visited[1:]
            return node
        needle = self._kind(node.left)
        if self._fresh(node.comparators[0]) and (
                needle >= ATOM or needle >= DEEP and isinstance(node.left, ast.Tuple)):
            # (a list needle is compared with the items, maybe shared lists,
            # by C code: [k, v] in pending goes through the barrier)
            return self.generic_visit(node)
        test = _call("_stm_in", self.tx(), self.visit(node.left), self.visit(node.comparators[0]))
        if isinstance(node.ops[0], ast.NotIn):
            test = ast.UnaryOp(op=ast.Not(), operand=test)
        return ast.copy_location(test, node)

    def _private(self, node: ast.expr) -> ast.AST:
        if not self._in_function():
            return node
        return ast.copy_location(_call("_stm_new", self.tx(), node), node)

    def visit_List(self, node: ast.List) -> ast.AST:
        self.generic_visit(node)
        return self._private(node) if isinstance(node.ctx, ast.Load) else node

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        node.keys = [self.visit(k) if k is not None else None for k in node.keys]
        node.values = [self.visit(v) if k is not None else self._wrapped("_stm_operand", v)
                       for k, v in zip(node.keys, node.values)]
        return self._private(node)

    def visit_Set(self, node: ast.Set) -> ast.AST:
        self.generic_visit(node)
        return self._private(node)

    def _comprehension(self, node: ast.AST, private: bool) -> ast.AST:
        if not self._in_function():
            return self.generic_visit(node)
        generators = node.generators  # type: ignore[attr-defined]
        plain_items = self._items_are_tuples(generators[0].iter)
        targets: set[str] = set()
        for gen in generators:
            targets.update(n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name))
        # The first iterable is evaluated in the enclosing scope.
        generators[0].iter = self._iterable(generators[0].iter)
        lazy = isinstance(node, ast.GeneratorExp)
        scope = _Scope(targets, set(), {k: v for k, v in self.scope.boxed.items()
                                        if k not in targets},
                       self.scope.tx_is_local and not lazy, self.scope)
        scope.constants = {k: v for k, v in self.scope.constants.items() if k not in targets}
        saved, self.scope = self.scope, scope
        try:
            for index, gen in enumerate(generators):
                if index:
                    gen.iter = ast.copy_location(
                        _call("_stm_iter", self.tx(), self.visit(gen.iter)), gen.iter)
                gen.ifs = [self._test(cond) for cond in gen.ifs]
            for field in ("elt", "key", "value"):
                if hasattr(node, field):
                    setattr(node, field, self.visit(getattr(node, field)))
            # [a for a, b in pairs]: each item is unpacked as it is read now
            # (view), as in a for statement, unless the items are tuples made here.
            for gen in generators:
                if any(isinstance(n, (ast.Attribute, ast.Subscript)) for n in ast.walk(gen.target)):
                    # [f(x) for obj.x in xs]: the target is stored without a barrier
                    gen.iter = ast.copy_location(
                        _call("_stm_stores", self.tx(), gen.iter), gen.iter)
            node.generators = [  # type: ignore[attr-defined]
                split for index, gen in enumerate(generators)
                for split in ([gen] if index == 0 and plain_items else self._viewed_unpacking(gen))]
        finally:
            self.scope = saved
        return self._private(node) if private else node

    def _viewed_unpacking(self, gen: ast.comprehension) -> list[ast.comprehension]:
        """``for a, b in xs if c`` as ``for t in xs for a, b in (view(t),) if c``."""
        if not isinstance(gen.target, (ast.Tuple, ast.List)):
            return [gen]
        temp = self.temp()
        target, gen.target = gen.target, ast.Name(id=temp, ctx=ast.Store())
        ifs, gen.ifs = gen.ifs, []
        return [gen] + [ast.fix_missing_locations(ast.copy_location(level, gen))
                        for level in self._unpacking_levels(target, temp, ifs)]

    def _unpacking_levels(self, target: ast.expr, source: str,
                          ifs: list[ast.expr]) -> list[ast.comprehension]:
        """Generators that unpack ``view(source)`` into ``target``, a nested tuple
        target by a generator of its own (its item read through view() too);
        the conditions ``ifs`` go on the last one, where every name is bound."""
        deeper: list[tuple[ast.expr, str]] = []

        def flatten(node: ast.expr) -> ast.expr:
            inner = node.value if isinstance(node, ast.Starred) else node
            if not isinstance(inner, (ast.Tuple, ast.List)):
                return node
            name = self.temp()
            deeper.append((inner, name))
            store = ast.Name(id=name, ctx=ast.Store())
            return ast.Starred(value=store, ctx=ast.Store()) if node is not inner else store
        assert isinstance(target, (ast.Tuple, ast.List))
        levels = [ast.comprehension(
            target=type(target)(elts=[flatten(e) for e in target.elts], ctx=ast.Store()),
            iter=ast.Tuple(elts=[_call("_stm_view", self.tx(), _name(source))], ctx=ast.Load()),
            ifs=[], is_async=0)]
        for inner, name in deeper:
            levels += self._unpacking_levels(inner, name, [])
        levels[-1].ifs = ifs
        return levels

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        return self._comprehension(node, True)

    def visit_SetComp(self, node: ast.SetComp) -> ast.AST:
        return self._comprehension(node, True)

    def visit_DictComp(self, node: ast.DictComp) -> ast.AST:
        return self._comprehension(node, True)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        # Its frame is made by this section (a retry makes a new one): private.
        return self._comprehension(node, True)

    # -- values read without a barrier by plain Python --------------------------

    def _name_kind(self, name: str) -> int:
        """What a name can hold here (a level of fresh.Kinds)."""
        resolved = self._resolve(name)
        if resolved == "local":
            walk = self.scope
            while walk is not None and name not in walk.bound:
                walk = walk.parent
            return walk.kinds.get(name, UNKNOWN) if walk is not None else UNKNOWN
        if resolved == "plain" and self.scope is not None and name in self.scope.constants:
            return constant_kind(self.scope.constants[name])
        return UNKNOWN

    def _kind(self, node: ast.expr) -> int:
        """What an operand can hold, evaluated where it stands (a level of fresh.Kinds)."""
        if self._fresh(node):
            return SCALAR
        return Kinds(self._name_kind, self._is_builtin).of(node)

    def _is_builtin(self, name: str) -> bool:
        return name not in self.module_names and self._resolve(name) == "plain"

    def _wrapped(self, barrier: str, node: ast.expr, needed_below: int = SCALAR) -> ast.expr:
        """``barrier(tx, node)`` with ``node`` visited, or just the visited node when
        the analysis shows ``node`` is at least ``needed_below`` (nothing to do)."""
        if not self._in_function() or self._kind(node) >= needed_below:
            return self.visit(node)
        return ast.copy_location(_call(barrier, self.tx(), self.visit(node)), node)

    def _deep(self, node: ast.expr) -> ast.expr:
        """``node`` as a comparison or a format reads it: deep_view() unless DEEP."""
        return self._wrapped("_stm_dview", node, DEEP)

    def _test(self, node: ast.expr) -> ast.expr:
        """A condition: only its truth matters."""
        if not self._in_function():
            return self.visit(node)
        if isinstance(node, ast.BoolOp):
            return ast.copy_location(ast.BoolOp(op=node.op, values=[
                self._test(v) for v in node.values]), node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ast.copy_location(ast.UnaryOp(op=node.op, operand=self._test(node.operand)),
                                     node)
        tested = self._wrapped("_stm_truth", node)
        if _is_call_of(tested, "_stm_truth") and _is_call_of(tested.args[1], "_stm_cmp"):
            # if a < b: one barrier call for the comparison and its truth
            tested.func = _name("_stm_cmp_test")
            tested.args = tested.args[1].args
        return tested

    def visit_If(self, node: ast.If) -> ast.AST:
        node.test = self._test(node.test)
        node.body = self._visit_body(node.body)
        node.orelse = self._visit_body(node.orelse)
        return node

    def visit_Match(self, node: ast.Match) -> ast.AST:
        """``match subject``: patterns read the subject without barriers.

        Sequence, mapping and value patterns read what deep_view() gives
        (the section's own copy of what it wrote, reads recorded); a class
        pattern with sub-patterns reads attributes, so its subject goes
        through match_subject() (inevitable unless it is an atom). The
        patterns themselves are left as they are: they are names, not reads.
        """
        if not self._in_function():
            return self.generic_visit(node)
        patterns = [p for case in node.cases for p in ast.walk(case.pattern)]
        by_attributes = any(isinstance(p, ast.MatchClass) and (p.patterns or p.kwd_patterns)
                            for p in patterns)
        subject = (self._wrapped("_stm_match", node.subject, ATOM) if by_attributes
                   else self._deep(node.subject))
        named = self._names_in_patterns(patterns)
        if named is not None:
            subject = ast.copy_location(_call("_stm_patterns", self.tx(), subject, named), subject)
        node.subject = subject
        for case in node.cases:
            if case.guard is not None:
                case.guard = self._test(case.guard)
            case.body = self._visit_body(case.body)
        return node

    def _names_in_patterns(self, patterns: list[ast.AST]) -> Optional[ast.Lambda]:
        """``lambda: ((classes...), (owners...))``: the classes of a match's class
        patterns (not the builtins') and the objects its dotted value patterns
        read (``CFG`` of ``case CFG.mode``), which CPython reads past the
        barriers; None when there are none. A thunk, as the patterns are
        evaluated only when their case is tried."""
        classes = [p.cls for p in patterns if isinstance(p, ast.MatchClass) and not (
            isinstance(p.cls, ast.Name) and p.cls.id in _BUILTIN_PATTERN_CLASSES
            and p.cls.id not in self.module_names)]
        owners = [value.value for p in patterns
                  for value in ([p.value] if isinstance(p, ast.MatchValue) else
                                p.keys if isinstance(p, ast.MatchMapping) else [])
                  if isinstance(value, ast.Attribute)]
        if not classes and not owners:
            return None
        tuples = [ast.Tuple(elts=[copy.deepcopy(e) for e in group], ctx=ast.Load())
                  for group in (classes, owners)]
        empty = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        return ast.Lambda(args=empty, body=ast.Tuple(elts=tuples, ctx=ast.Load()))

    def visit_While(self, node: ast.While) -> ast.AST:
        node.test = self._test(node.test)
        body = self._visit_body(node.body)
        if self._in_function():
            tick = ast.Expr(value=_call("_stm_tick", self.tx()))
            body = self._located([tick], node.body[0]) + body
        node.body = body
        node.orelse = self._visit_body(node.orelse)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node.test = self._test(node.test)
        node.body = self.visit(node.body)
        node.orelse = self.visit(node.orelse)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        node.test = self._test(node.test)
        if node.msg is not None:
            node.msg = self.visit(node.msg)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        # Every operand but the last is tested; the one that stops the
        # chain is the value, so it must stay itself: touch(), not truth().
        *tested, last = node.values
        node.values = [self._wrapped("_stm_touch", v) for v in tested] + [self.visit(last)]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.Not):
            node.operand = self._test(node.operand)
        else:
            node.operand = self._wrapped("_stm_operand", node.operand)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        # A container combined with a number (x + 1, x - dx with dx a
        # number) raises TypeError without reading its contents; only
        # repetition (lst * 2) reads it, and a bytearray's % (buf % 7
        # formats the buffer as a printf template).
        by_number = not isinstance(node.op, (ast.Mult, ast.Mod))
        left, right = self._kind(node.left), self._kind(node.right)
        if max(left, right) < SCALAR and not isinstance(node.op, ast.Mod):
            # a - b, both read: one binary() call rather than two view().
            return ast.copy_location(_call(
                "_stm_binop", self.tx(), _const(_BINARY_INDEX[type(node.op)]),
                self.visit(node.left), self.visit(node.right)), node)
        left_number = by_number and left == NUMBER
        right_number = by_number and right == NUMBER
        node.left = self.visit(node.left) if right_number else self._wrapped("_stm_operand", node.left)
        if left_number:
            node.right = self.visit(node.right)
        elif isinstance(node.op, ast.Mod) and isinstance(node.right, ast.Tuple) \
                and not any(isinstance(e, ast.Starred) for e in node.right.elts):
            # '%s: %d' % (a, b): each value read as formatting reads it, the
            # tuple display kept, so that CPython still compiles a constant
            # format of %s/%r/%a into an f-string (a plain str result)
            node.right.elts = [self._deep(e) for e in node.right.elts]
        elif isinstance(node.op, ast.Mod):       # 'fmt' % value formats it: nested items too
            node.right = self._deep(node.right)
        else:
            node.right = self._wrapped("_stm_operand", node.right)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        node.value = self._deep(node.value)
        if node.format_spec is not None:
            node.format_spec = self.visit(node.format_spec)
        return node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        if isinstance(node.ctx, ast.Load):
            node.value = self._wrapped("_stm_view", node.value)
            return node
        return self.generic_visit(node)

    def _unpacked(self, targets: list[ast.expr], value: ast.expr) -> ast.expr:
        """The visited value of an assignment; wrapped in view() when it is unpacked."""
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in targets) \
                and not isinstance(value, (ast.Tuple, ast.List)):
            return self._wrapped("_stm_view", value)
        return self.visit(value)

    # -- statements ---------------------------------------------------------------

    def _needs_barrier(self, target: ast.expr) -> bool:
        if isinstance(target, (ast.Tuple, ast.List)) and any(
                isinstance(e.value if isinstance(e, ast.Starred) else e, (ast.Tuple, ast.List))
                for e in target.elts):
            return True                          # nested unpacking: each level is viewed
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            return not self._fresh(target.value) or _slice_store(target)
        if isinstance(target, ast.Name):
            return self._resolve(target.id) in ("global", "boxed")
        if isinstance(target, (ast.Tuple, ast.List)):
            return any(self._needs_barrier(e) for e in target.elts)
        if isinstance(target, ast.Starred):
            return self._needs_barrier(target.value)
        return False

    def _store(self, target: ast.expr, value: ast.expr) -> list[ast.stmt]:
        """Statements that assign ``value`` (already evaluated: a Name) to ``target``."""
        tx = self.tx()
        if isinstance(target, (ast.Attribute, ast.Subscript)) and self._fresh(target.value):
            if _slice_store(target):
                # mine[:] = SHARED: C code iterates the source, past every barrier
                value = _call("_stm_view", tx, value)
            return [ast.Assign(targets=[self.visit(target)], value=value)]
        if isinstance(target, ast.Attribute):
            call = _call("_stm_sa", tx, self.visit(target.value), _const(target.attr), value)
        elif isinstance(target, ast.Subscript):
            call = _call("_stm_si", tx, self.visit(target.value), self._index(target.slice), value)
        elif isinstance(target, ast.Name) and self._resolve(target.id) == "global":
            call = _call("_stm_sg", tx, _name(GLOBALS_NAME), _const(target.id), value)
        elif isinstance(target, ast.Name) and self._resolve(target.id) == "boxed":
            call = _call("_stm_sa", tx, _name(target.id), _const("value"), value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            # Unpack into temporaries (keeping starred semantics), then
            # assign them left to right, as Python does.
            # A nested target ((a, b), c = ...) unpacks an item in its turn:
            # that item is read through view() like the whole value.
            temps: list[tuple[str, ast.expr]] = []

            def replace(node: ast.expr) -> ast.expr:
                if isinstance(node, ast.Starred):
                    return ast.Starred(value=replace(node.value), ctx=ast.Store())
                name = self.temp()
                temps.append((name, node))
                return ast.Name(id=name, ctx=ast.Store())
            top = ast.Tuple(elts=[replace(e) for e in target.elts], ctx=ast.Store())
            unpack: list[ast.stmt] = [ast.Assign(targets=[top], value=value)]
            for name, original in temps:
                item = (_call("_stm_view", self.tx(), _name(name))
                        if isinstance(original, (ast.Tuple, ast.List)) else _name(name))
                unpack.extend(self._store(original, item))
            return unpack
        else:
            return [ast.Assign(targets=[target], value=value)]
        return [ast.Expr(value=call)]

    def _located(self, stmts: list[ast.stmt], node: ast.AST) -> list[ast.stmt]:
        for stmt in stmts:
            for child in ast.walk(stmt):
                if not hasattr(child, "lineno") or getattr(child, "lineno", None) is None:
                    ast.copy_location(child, node)
        return [ast.fix_missing_locations(s) for s in stmts]

    def visit_Assign(self, node: ast.Assign) -> ast.AST | list[ast.stmt]:
        special = _special_method_bound(node.targets, attribute=True)
        if special is not None:
            # Resource.__del__ = release, Key.__eq__ = same_key: after the class statement
            _wrap_special_method(node, special)
        if not self._in_function():
            return self.generic_visit(node)
        if not any(self._needs_barrier(t) for t in node.targets):
            node.value = self._unpacked(node.targets, node.value)
            node.targets = [self.visit(t) for t in node.targets]
            return node
        value = self._unpacked(node.targets, node.value)
        temp = self.temp()
        stmts: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())],
                                            value=value)]
        for target in node.targets:
            stmts.extend(self._store(target, _name(temp)))
        return self._located(stmts, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | list[ast.stmt]:
        if not self._in_function() or node.value is None or not self._needs_barrier(node.target):
            if node.value is not None and self._in_function():
                node.value = self.visit(node.value)
            return node
        temp = self.temp()
        stmts: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())],
                                            value=self.visit(node.value))]
        stmts.extend(self._store(node.target, _name(temp)))
        return self._located(stmts, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST | list[ast.stmt]:
        if not self._in_function():
            return self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Attribute) and self._fresh(target.value):
            return self.generic_visit(node)
        if isinstance(target, ast.Subscript) and self._fresh(target.value):
            return self._fresh_item_augmented(node, target)
        if isinstance(target, ast.Name) and self._resolve(target.id) == "local" \
                and self.scope.kinds.get(target.id, UNKNOWN) >= SCALAR:
            # n += i on a local that never holds a shared container: plain Python.
            node.value = (self._deep(node.value) if isinstance(node.op, ast.Mod)
                          else self._wrapped("_stm_operand", node.value))
            return node
        op = ast.Attribute(value=_name("_stm_operator"), attr=_AUG_OPS[type(node.op)],
                           ctx=ast.Load())
        value = self.visit(node.value)
        stmts: list[ast.stmt] = []
        if isinstance(target, ast.Attribute):
            obj = self.temp()
            stmts.append(ast.Assign(targets=[ast.Name(id=obj, ctx=ast.Store())],
                                    value=self.visit(target.value)))
            current = _call("_stm_ga", self.tx(), _name(obj), _const(target.attr))
            new = _call("_stm_aug", self.tx(), op, current, value)
            stmts.append(ast.Expr(value=_call("_stm_sa", self.tx(), _name(obj),
                                              _const(target.attr), new)))
        elif isinstance(target, ast.Subscript):
            obj, key = self.temp(), self.temp()
            stmts.append(ast.Assign(targets=[ast.Name(id=obj, ctx=ast.Store())],
                                    value=self.visit(target.value)))
            stmts.append(ast.Assign(targets=[ast.Name(id=key, ctx=ast.Store())],
                                    value=self._index(target.slice)))
            current = _call("_stm_gi", self.tx(), _name(obj), _name(key))
            new = _call("_stm_aug", self.tx(), op, current, value)
            stmts.append(ast.Expr(value=_call("_stm_si", self.tx(), _name(obj), _name(key), new)))
        else:
            assert isinstance(target, ast.Name)
            current = self.visit_Name(ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()),
                                                        target))
            new = _call("_stm_aug", self.tx(), op, current, value)
            temp = self.temp()
            stmts.append(ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())], value=new))
            stmts.extend(self._store(ast.Name(id=target.id, ctx=ast.Store()), _name(temp)))
        return self._located(stmts, node)

    def _fresh_item_augmented(self, node: ast.AugAssign, target: ast.Subscript) -> list[ast.stmt]:
        """``mine[k] op= v`` on a container the section made: storing the item is
        plain, but the item may be shared (``routes = {"a": A}; routes["a"] +=
        [x]`` changes A in place): the operation is a barrier's (and a slice
        read is the section's own: ``barriers.own_item``)."""
        op = ast.Attribute(value=_name("_stm_operator"), attr=_AUG_OPS[type(node.op)],
                           ctx=ast.Load())
        value = self.visit(node.value)
        obj, key = self.temp(), self.temp()
        current = _call("_stm_own_item", self.tx(), _name(obj), _name(key))
        new = _call("_stm_aug", self.tx(), op, current, value)
        stmts: list[ast.stmt] = [
            ast.Assign(targets=[ast.Name(id=obj, ctx=ast.Store())], value=self.visit(target.value)),
            ast.Assign(targets=[ast.Name(id=key, ctx=ast.Store())], value=self._index(target.slice)),
            ast.Assign(targets=[ast.Subscript(value=_name(obj), slice=_name(key),
                                              ctx=ast.Store())], value=new)]
        return self._located(stmts, node)

    def visit_Delete(self, node: ast.Delete) -> ast.AST | list[ast.stmt]:
        # ``del (a.x, d[k])`` deletes each target in turn, left to right.
        targets = list(_each_target(node.targets))
        if not self._in_function() or not any(self._needs_barrier(t) for t in targets):
            return self.generic_visit(node)
        stmts: list[ast.stmt] = []
        for target in targets:
            tx = self.tx()
            if isinstance(target, (ast.Attribute, ast.Subscript)) and self._fresh(target.value):
                stmts.append(ast.Delete(targets=[self.visit(target)]))
                continue
            if isinstance(target, ast.Attribute):
                call = _call("_stm_da", tx, self.visit(target.value), _const(target.attr))
            elif isinstance(target, ast.Subscript):
                call = _call("_stm_di", tx, self.visit(target.value), self._index(target.slice))
            elif isinstance(target, ast.Name) and self._resolve(target.id) == "global":
                call = _call("_stm_dg", tx, _name(GLOBALS_NAME), _const(target.id))
            elif isinstance(target, ast.Name) and self._resolve(target.id) == "boxed":
                call = _call("_stm_da", tx, _name(target.id), _const("value"))
            else:
                stmts.append(ast.Delete(targets=[self.visit(target)]))
                continue
            stmts.append(ast.Expr(value=call))
        return self._located(stmts, node)

    def _iterable(self, node: ast.expr) -> ast.expr:
        """What a ``for`` loop or a comprehension iterates: iterate(tx, node), unless
        iterate() would return it as it is: a tuple, a range, an object this call
        made (a display, a comprehension, a fresh local), a module constant tuple."""
        if self._fresh(node) or isinstance(node, (ast.Tuple, *_MADE_HERE)) or \
                isinstance(self._constant_value(node), tuple) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "range" and "range" not in self.module_names
                and self._resolve("range") == "plain"):
            return self.visit(node)
        return ast.copy_location(_call("_stm_iter", self.tx(), self.visit(node)), node)

    def _items_are_tuples(self, iterable: ast.expr) -> bool:
        """True when every item of ``iterable`` is a tuple or a list this call made:
        a display of such displays, or a module constant tuple of tuples."""
        if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
            return all(isinstance(e, (ast.Tuple, ast.List)) for e in iterable.elts)
        value = self._constant_value(iterable)
        return isinstance(value, tuple) and all(isinstance(v, tuple) for v in value)

    def _constant_value(self, node: ast.expr) -> object:
        """The value of the module constant ``node`` names (fresh.module_constants), or None."""
        if isinstance(node, ast.Name) and self.scope is not None and \
                self._resolve(node.id) == "plain":
            return self.scope.constants.get(node.id)
        return None

    def _rebound(self, target: ast.expr, unpacked: bool) -> Optional[tuple[ast.Name, list[ast.stmt]]]:
        """How a statement that binds ``target`` itself (``for``, ``with ... as``) must bind it.

        None when Python may bind it directly. Otherwise a temporary to bind
        instead, and the statements that then assign it to ``target``
        through the barriers; with ``unpacked``, the value is first read
        through view() (unpacking reads it as it is now).
        """
        if not (self._needs_barrier(target) or unpacked):
            return None
        temp = self.temp()
        item = _call("_stm_view", self.tx(), _name(temp)) if unpacked else _name(temp)
        if self._needs_barrier(target) and not unpacked:
            stmts = self._store(target, item)
        elif self._needs_barrier(target):
            # The value first, then the target's parts, as Python evaluates them.
            value = self.temp()
            stmts = [ast.Assign(targets=[ast.Name(id=value, ctx=ast.Store())], value=item)]
            stmts += self._store(target, _name(value))
        else:
            stmts = [ast.Assign(targets=[target], value=item)]
        return (ast.copy_location(ast.Name(id=temp, ctx=ast.Store()), target),
                self._located(stmts, target))

    def visit_For(self, node: ast.For) -> ast.AST:
        if not self._in_function():
            return self.generic_visit(node)
        plain_items = self._items_are_tuples(node.iter)
        node.iter = self._iterable(node.iter)
        # for a, b in pairs: each item is unpacked as it is read now, through
        # view(), unless every item is a tuple or a list this call made.
        unpacked = isinstance(node.target, (ast.Tuple, ast.List)) and not plain_items
        rebound = self._rebound(node.target, unpacked)
        node.body = self._visit_body(node.body)
        if rebound is not None:
            node.target, assign = rebound
            node.body = assign + node.body
        node.orelse = self._visit_body(node.orelse)
        return node

    def visit_With(self, node: ast.With) -> ast.AST:
        """``with cm as target``: a target that is shared (``obj.attr``, ``d[k]``,
        a global, a nonlocal) or unpacked is assigned through the barriers at
        the start of the block. Items after such a one are split into a
        nested ``with`` (which is what several items mean), so that they see
        the assignment in the same order as Python makes it."""
        if not self._in_function():
            return self.generic_visit(node)
        for index, item in enumerate(node.items):
            item.context_expr = ast.copy_location(
                _call("_stm_cm", self.tx(), self.visit(item.context_expr)), item.context_expr)
            target = item.optional_vars
            unpacked = isinstance(target, (ast.Tuple, ast.List))
            rebound = None if target is None else self._rebound(target, unpacked)
            if rebound is None:
                if target is not None:
                    item.optional_vars = self.visit(target)
                continue
            item.optional_vars, assign = rebound
            rest = node.items[index + 1:]
            node.items = node.items[:index + 1]
            if rest:
                inner = ast.copy_location(ast.With(items=rest, body=node.body), node)
                node.body = assign + [self.visit_With(inner)]
            else:
                node.body = assign + self._visit_body(node.body)
            return node
        node.body = self._visit_body(node.body)
        return node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> ast.AST:
        """``yield from it`` iterates ``it`` as a ``for`` loop does: a shared
        container through the section's read shadow, a shared iterator only
        inevitably."""
        if not self._in_function():
            return self.generic_visit(node)
        node.value = self._iterable(node.value)
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        """``raise exc``: ``exc`` is seen by a barrier first (raising writes the
        object's ``__traceback__`` and ``__context__`` in place)."""
        node = self.generic_visit(node)
        if self._in_function() and node.exc is not None:
            node.exc = ast.copy_location(_call("_stm_raise", self.tx(), node.exc), node.exc)
        return node

    def visit_Await(self, node: ast.Await) -> ast.AST:
        """``await x``: ``x`` is seen by a barrier first (a future of another
        event loop is shared with that loop's tasks)."""
        node = self.generic_visit(node)
        if self._in_function():
            node.value = ast.copy_location(_call("_stm_await", node.value), node.value)
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        """``async with cm``: the context manager is seen by a barrier first, as in ``with``."""
        node = self.generic_visit(node)
        if self._in_function():
            for item in node.items:
                item.context_expr = ast.copy_location(
                    _call("_stm_cm", self.tx(), item.context_expr), item.context_expr)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        """``except E as name`` for a global or a nonlocal: Python binds the name,
        runs the block, then sets it to None and deletes it. The exception is
        bound to a temporary instead, and the name is bound at the start of
        the block and deleted at its end through the barriers, in that order."""
        if node.type is not None:
            node.type = self.visit(node.type)
        if node.name is None or not self._in_function() or self._resolve(node.name) not in (
                "global", "boxed"):
            node.body = self._visit_body(node.body)
            return node
        target = ast.copy_location(ast.Name(id=node.name, ctx=ast.Store()), node)
        temp = self.temp()
        node.name = temp
        cleared = self._store(target, _const(None))
        deleted = self.visit_Delete(ast.copy_location(
            ast.Delete(targets=[ast.Name(id=target.id, ctx=ast.Del())]), node))
        guarded = ast.Try(body=self._visit_body(node.body), handlers=[], orelse=[],
                          finalbody=cleared + (deleted if isinstance(deleted, list) else [deleted]))
        node.body = self._store(target, _name(temp)) + [ast.copy_location(guarded, node)]
        node.body = self._located(node.body, node)
        return node

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
        """``(name := value)`` for a global or a nonlocal: stored through the barriers."""
        node.value = self.visit(node.value)
        if not self._in_function():
            return node
        kind = self._resolve(node.target.id)
        if kind == "global":
            holder, name = _name(GLOBALS_NAME), node.target.id
        elif kind == "boxed":
            holder, name = _name(node.target.id), "value"
        else:
            return node
        return ast.copy_location(
            _call("_stm_named", self.tx(), holder, _const(name), node.value), node)


def _function_scope(scope: Optional[_Scope]) -> Optional[_Scope]:
    """``scope``, or the first function scope around it when it is a class body."""
    while scope is not None and scope.is_class:
        scope = scope.parent
    return scope


#: Scopes whose code runs in a frame of its own: barrier names in them stay global.
_OWN_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp)
#: The suffix of a barrier name bound to a local (see _alias_barriers).
ALIAS_SUFFIX = "_l"


def _alias_barriers(body: list[ast.stmt]) -> list[ast.Assign]:
    """Rename the barriers a function calls inside loops to locals bound at its start.

    A global name costs a dictionary lookup on every use where the
    interpreter does not specialize ``LOAD_GLOBAL`` (the free-threaded 3.13
    build), a local a ``LOAD_FAST``. Loops and list, set and dict
    comprehensions (inlined into the function's frame) of the function's own
    code use the locals; nested functions, lambdas and generator
    expressions keep the global names. Returns the assignments to prepend.
    """
    uses: list[ast.Name] = []
    looped: set[str] = set()
    stack: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in body]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, ast.Name) and node.id in RUNTIME_NAMES:
            uses.append(node)
            if in_loop:
                looped.add(node.id)
        in_loop = in_loop or isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.ListComp,
                                               ast.SetComp, ast.DictComp))
        stack.extend((child, in_loop) for child in ast.iter_child_nodes(node)
                     if not isinstance(child, _OWN_FRAMES))
    for use in uses:
        if use.id in looped:
            use.id += ALIAS_SUFFIX
    return [ast.Assign(targets=[ast.Name(id=name + ALIAS_SUFFIX, ctx=ast.Store())],
                       value=_name(name)) for name in sorted(looped)]


def _statements(rewritten: ast.AST | list[ast.stmt]) -> list[ast.stmt]:
    """A statement's rewriting (one statement or several), as a list."""
    return rewritten if isinstance(rewritten, list) else [rewritten]


def _reassigned(table: Optional[symtable.SymbolTable],
                function: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> set[str]:
    """Those of ``names`` that ``function`` binds in its body, by any binding
    form (assignment, ``for``, ``with``, ``def``, ``class``, ``import``,
    ``except ... as``, a ``match`` capture, ``del``), as its symbol table says;
    without one, every name stored to in its body, nested scopes included."""
    if table is not None:
        found = set()
        for name in names:
            try:
                symbol = table.lookup(name)
            except KeyError:
                continue
            if symbol.is_local() and (symbol.is_assigned() or symbol.is_imported()):
                found.add(name)
        return found
    return names & {node.id for statement in function.body for node in ast.walk(statement)
                    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))}


def _suspends(call: ast.Call) -> bool:
    """True when computing the arguments of ``call`` may end a step: an
    ``await``, a ``yield`` or an ``async for`` comprehension among them (a
    coroutine step's method lookup must then be made before, in the step
    where plain Python makes it)."""
    return any(isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom))
               or isinstance(node, ast.comprehension) and node.is_async
               for part in (*call.args, *call.keywords) for node in ast.walk(part))


def _params(args: ast.arguments) -> list[str]:
    """The names a function's parameters bind."""
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def rewrite(source: str, filename: str) -> ast.Module:
    """Parse and rewrite a module's source; the result is ready for ``compile``."""
    return rewrite_module(source, filename)[0]


def rewrite_module(source: str, filename: str) -> tuple[ast.Module, frozenset[str]]:
    """:func:`rewrite`, and the module's globals that its functions read
    plainly, without a barrier (those no function declares ``global``)."""
    tree = ast.parse(source, filename)
    rewriter = Rewriter(source, filename, tree)
    tree = rewriter.visit(tree)
    return ast.fix_missing_locations(tree), frozenset(rewriter.plain_global_reads)
