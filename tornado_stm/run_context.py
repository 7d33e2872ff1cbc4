"""The context of ``transaction.run()``: one chain of context variables, as in a serial run.

A serial run makes every queued call on one thread, in one
``contextvars`` context: what the script set before ``run()`` (a
``ContextVar``, ``decimal.getcontext().prec``) is seen by every call, and
what one call sets is seen by the calls after it. Worker threads each
have a context of their own, so without help a call would see neither.

:class:`RunContext` keeps the run's context as the committed calls left
it (``values``: variable -> value) and a generation number that grows
with each change. Each worker runs in a copy of the caller's context and
brings it up to date before each call (:meth:`RunContext.bring_up_to_date`),
so plain code (``decimal`` arithmetic, a library reading a variable) sees
what the calls before it committed. Reading or changing a context
variable from a section -- ``ContextVar.get``/``set``/``reset``,
``decimal.getcontext``/``setcontext``/``localcontext``,
``contextvars.copy_context`` -- makes the section inevitable (the call
policy of these functions), so it runs in the serial order, under the
world lock; :func:`_context_call` then brings the worker's context up to
date before the call, and what the section changed in the worker's
context (its first context call against its end) is handed to the run as
it commits (:func:`take_call_changes`). When ``run()`` returns, the
caller's context gets the run's values, as the serial run would have
left it.

A token made by ``var.set()`` in one worker's copy is refused by Python's
``reset`` in another copy; a token made through the policy is reset there
as the serial run's single context would (:func:`_reset_as_in_one_context`).

Plain code (decimal arithmetic) reads the worker's context: each change
of the run's bumps ``RunContext.generation``, which every queued call
reads through the barriers at its start (:func:`read_in_section`), so a
call that began before a change and would commit after it runs again.
Each worker has its own copy of a ``decimal.Context``; a call handed its
context by ``decimal.getcontext()`` may change it in place, which is
handed on as the call commits too, and so are the flags a call's plain
arithmetic raises (:func:`note_arithmetic`). The script's own context
object mirrors the run's, so that a script holding it sees what a serial
run would, and a call may change it in place. Only calls made in the worker's own
context change the run's (``_HOME``: not a copy, not asyncio's, not a
thread's), and only by what they changed.

What is still weaker than a serial run (docs/semantics.md, limit 1): a
variable without a default reset to "no value" by a call keeps its last
value for the calls on other workers; tokens the script's top-level code
makes or resets are unseen.
"""

from __future__ import annotations

import asyncio
import contextvars
import decimal
import threading
from typing import Any, Callable, Optional

from tornado_stm.stm import barriers, finalizer_safe_lock, policy
from tornado_stm.stm.txn import AT_INEVITABLE_COMMIT, CURRENT, Transaction, held_only_here

#: What reads or changes the calling thread's context.
CONTEXT_FUNCTIONS = (
    contextvars.ContextVar.get, contextvars.ContextVar.set, contextvars.ContextVar.reset,
    contextvars.copy_context, decimal.getcontext, decimal.setcontext, decimal.localcontext,
)


class _Worker(threading.local):
    #: The run this thread works for, if it is a worker of a multi-threaded run().
    run: Optional["RunContext"] = None
    #: The generation of the run's values this thread's context has.
    generation = -1
    #: The run's values as this worker last brought them in: variable -> value.
    seen: dict = {}
    #: What ``_HOME`` holds in this worker's own context (not in a copy of it).
    home: object = None
    #: variable -> the worker's own copy of the run's ``decimal.Context``.
    own_copies: dict = {}
    #: The running call made a context call: what it changes is handed on as it commits.
    touched = False
    #: The worker's context when the running call first made a context call
    #: (with what was brought up to date since): what the call changed is the difference.
    call_start: dict = {}


#: Tells a worker's own context from another one current on its thread: a
#: copy (``copy_context().run(job)``) gets a marker of its own, and a new
#: ``Context()``, or a thread's, has none. Only calls in the worker's own
#: context change the run's context, as the serial run's one context.
_HOME: contextvars.ContextVar[object] = contextvars.ContextVar("tornado_stm.run_context.home")


def _at_home() -> bool:
    # (a running loop: asyncio.run or a task, each in a copy of its own)
    return _HOME.get(None) is _worker.home and asyncio._get_running_loop() is None


_worker = _Worker()

_installed = False
_install_lock = threading.Lock()


def install() -> None:
    """Let sections of a run reach the run's context (idempotent)."""
    global _installed
    with _install_lock:
        if not _installed:
            for function in CONTEXT_FUNCTIONS:
                policy.register_special(function, _context_call)
            AT_INEVITABLE_COMMIT.append(take_call_changes)
            _installed = True


class RunContext:
    """The context variables of one multi-threaded ``run()``, as committed calls left them."""

    def __init__(self) -> None:
        install()
        # The script's decimal context, made now if the script has not used
        # decimal yet (as the serial run's first use would): a worker's made
        # lazily by C arithmetic would be nobody's copy, its changes lost.
        script_decimal = decimal.getcontext()
        self.base = contextvars.copy_context()
        self.values: dict[contextvars.ContextVar, Any] = dict(self.base.items())
        #: The script's decimal context, which it may hold (``CTX = getcontext()``)
        #: and use in calls: kept computing as the run's does, and a change a
        #: call makes to it in place is the run's (:meth:`take_call_changes`).
        self.script_decimal = script_decimal
        self.decimal_variable = next(variable for variable, value in self.base.items()
                                     if value is script_decimal)
        self._script_decimal_state = _decimal_state(script_decimal)
        #: Grows with each change of ``values``; sections read and write it
        #: through the barriers, so that a call that began before a change
        #: and would commit after it aborts, and runs again with the change.
        self.generation = 0
        # (values it replaces may die under it: their finalizers wait)
        self._lock = finalizer_safe_lock()
        #: The caller's event loop, if it has one: a serial run's calls,
        #: made on its thread, find it (``IOLoop.current()``,
        #: ``asyncio.get_event_loop()``), so the workers' calls must too.
        self.event_loop = _current_event_loop()

    def worker(self, work: Callable[[], Any]) -> Callable[[], Any]:
        """``work`` to run on a worker thread, in a copy of the caller's context."""
        context = self.base.copy()

        def run_in_context() -> Any:
            _worker.run = self
            _worker.generation = 0
            _worker.seen = dict(self.base.items())
            _worker.own_copies = {}
            _worker.home = context.run(_mark_home)
            context.run(_copy_decimal_contexts)
            if self.event_loop is not None:
                asyncio.set_event_loop(self.event_loop)
            try:
                return context.run(work)
            finally:
                _worker.run = None
                if self.event_loop is not None:
                    asyncio.set_event_loop(None)
        return run_in_context

    def bring_up_to_date(self) -> None:
        """Give this worker's context what the run's changed since it last looked.

        A variable the running call changed here meanwhile in plain code (a
        ``decimal.localcontext()`` block it is inside) keeps its value: the
        calls that changed the run's came before this one in the serial order.
        """
        if _worker.generation == self.generation:
            return
        with self._lock:
            values, generation = list(self.values.items()), self.generation
        seen, own = _worker.seen, _worker.own_copies
        for variable, value in values:
            before = seen.get(variable, _MISSING)
            if before is value:
                continue
            if variable.get(_MISSING) is own.get(variable, before):
                _install(variable, value)
            seen[variable] = value
        _worker.generation = generation

    def take_call_changes(self, touched: bool) -> None:
        """The running call commits (inevitable, under W): what it changed in this
        worker's context (if it made context calls: ``touched``), or in the
        script's decimal context, becomes the run's, in the serial order.

        The difference between the context at its first context call and
        now: a ``decimal.localcontext()`` block or an ``asyncio.run`` it
        entered and left changed nothing; a decimal context it changed in
        place (``getcontext().prec = 4``) did.
        """
        now = dict(contextvars.copy_context().items())
        start = _worker.call_start if touched else now
        changed = {variable: value for variable, value in now.items()
                   if start.get(variable, _MISSING) is not value}
        for variable, mine in _worker.own_copies.items():
            if now.get(variable) is mine and \
                    _decimal_state(mine) != _decimal_state(self.values.get(variable)):
                changed[variable] = mine
        if _decimal_state(self.script_decimal) != self._script_decimal_state:
            # CTX.prec = 5 on the script's context (inevitable: its attributes
            # are C code's): this worker computes so from now on, and the run.
            mine = _worker.own_copies.get(self.decimal_variable)
            if mine is not None and now.get(self.decimal_variable) is mine:
                _give_state(mine, self.script_decimal)
                changed[self.decimal_variable] = mine
            else:
                changed[self.decimal_variable] = self.script_decimal
        here = dict(changed)
        for variable in [variable for variable in start if variable not in now]:
            # reset to no value (a token made on this worker): the other
            # workers cannot unset it, but can give it its default, which
            # is what get() then answers
            default = _default_of(variable)
            if default is not _MISSING and self.values.get(variable, _MISSING) is not default:
                changed[variable] = default
                here[variable] = _MISSING
        self._hand_on(changed, here)

    def _hand_on(self, changed: dict, here: dict) -> None:
        """``changed`` (variable -> value) becomes the run's; ``here`` is what
        this worker's context holds for them (_MISSING: no value)."""
        if changed:
            # A decimal context is changed in place: each worker has a copy
            # of its own, and the run keeps one no worker holds.
            changed = {variable: value.copy() if type(value) is decimal.Context else value
                       for variable, value in changed.items()}
            with self._lock:
                self.values.update(changed)
                _worker.seen.update(changed)
                for variable, value in here.items():
                    if type(value) is decimal.Context:
                        _worker.own_copies[variable] = value
                    else:
                        _worker.own_copies.pop(variable, None)
                barriers.set_attr(CURRENT.tx, self, "generation", self.generation + 1)
                if _worker.generation == self.generation - 1:
                    _worker.generation = self.generation
            run_decimal = self.values.get(self.decimal_variable)
            if type(run_decimal) is decimal.Context:
                _give_state(self.script_decimal, run_decimal)
                self._script_decimal_state = _decimal_state(self.script_decimal)

    def hand_back(self) -> None:
        """``run()`` is over: the caller's context as the serial run would leave it.

        The tokens the calls made and the program no longer holds go too
        (with the values they replaced).
        """
        for variable, value in self.values.items():
            before = self.base.get(variable, _MISSING)
            if before is value:
                continue
            if before is self.script_decimal and type(value) is decimal.Context:
                pass    # (kept as the run's, in place: the script may hold it)
            else:
                variable.set(value)
        with _tokens_lock:
            for registry in (_TOKENS, _USED_TOKENS):
                _let_go_of_dropped(registry)


_MISSING = object()


def _current_event_loop() -> Optional[asyncio.AbstractEventLoop]:
    """The calling thread's running or current event loop; None, not a new one, if it has none."""
    loop = asyncio._get_running_loop()
    if loop is None:
        # (the policy's own per-thread slot: get_event_loop() would make one)
        loop = getattr(getattr(asyncio.get_event_loop_policy(), "_local", None), "_loop", None)
    return loop


def _mark_home() -> object:
    marker = object()
    _HOME.set(marker)
    return marker


def _install(variable: contextvars.ContextVar, value: Any) -> None:
    """Give this worker's context the run's ``value``: its own copy of a decimal context."""
    if type(value) is decimal.Context:
        value = _worker.own_copies[variable] = value.copy()
    else:
        _worker.own_copies.pop(variable, None)
    variable.set(value)
    if _worker.touched:
        _worker.call_start[variable] = value      # (not the running call's change)


def _copy_decimal_contexts() -> None:
    """At a worker's start: copies of its own of the decimal contexts the script set."""
    for variable, value in contextvars.copy_context().items():
        if type(value) is decimal.Context:
            _install(variable, value)


def _give_state(context: decimal.Context, source: decimal.Context) -> None:
    """Make ``context`` compute as ``source`` does: its settings, flags and traps."""
    for name in ("prec", "rounding", "Emin", "Emax", "capitals", "clamp"):
        setattr(context, name, getattr(source, name))
    _give_flags(context, source)
    context.clear_traps()
    for signal, trapped in source.traps.items():
        context.traps[signal] = trapped


def _give_flags(context: decimal.Context, source: decimal.Context) -> None:
    """Make ``context``'s raised flags those of ``source``."""
    context.clear_flags()
    for signal, raised in source.flags.items():
        context.flags[signal] = raised


def _decimal_state(context: Any) -> Any:
    if type(context) is not decimal.Context:
        return context
    return (context.prec, context.rounding, context.Emin, context.Emax, context.capitals,
            context.clamp, tuple(context.flags.values()), tuple(context.traps.values()))


def read_in_section(tx: Optional[Transaction]) -> None:
    """At a queued call's start, inside its section: read the run's generation
    through the barriers, and catch up with a change committed since
    :func:`bring_up_to_date` (the section then reads the context the run
    had at its snapshot; a later change aborts it at its commit)."""
    run = _worker.run
    if run is not None and tx is not None and _at_home():
        if barriers.get_attr(tx, run, "generation") != _worker.generation:
            run.bring_up_to_date()
        # Flags an aborted attempt's arithmetic raised are not the run's.
        for variable, mine in _worker.own_copies.items():
            known = _worker.seen.get(variable)
            if type(known) is decimal.Context and mine.flags != known.flags:
                _give_flags(mine, known)


def note_arithmetic(tx: Optional[Transaction]) -> None:
    """At a queued call's end, inside its section: decimal flags its plain
    arithmetic raised (``Inexact``...) are the run's, as in the one context of
    a serial run. The call becomes inevitable, and hands them on as it commits."""
    run = _worker.run
    if run is None or tx is None or not _at_home():
        return
    for variable, mine in _worker.own_copies.items():
        known = _worker.seen.get(variable)
        if type(known) is decimal.Context and mine.flags != known.flags \
                and variable.get(None) is mine:
            tx.become_inevitable("decimal flags raised")
            if not _worker.touched:
                _worker.call_start = dict(contextvars.copy_context().items())
                _worker.touched = True
            return


def take_call_changes(tx: Transaction) -> None:
    """An inevitable section commits (under W): see RunContext.take_call_changes."""
    run = _worker.run
    if run is None:
        return
    touched, _worker.touched = _worker.touched, False
    if _at_home():
        run.take_call_changes(touched)
    _worker.call_start = {}


def bring_up_to_date() -> None:
    """Before a queued call: this worker's context as the committed calls left the run's."""
    run = _worker.run
    if run is not None:
        run.bring_up_to_date()


def _context_call(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """The call policy of what reads or changes the context (``CONTEXT_FUNCTIONS``)."""
    if tx is not None:
        tx.become_inevitable(f"call to {policy.qualified_name(f)}")
    run = _worker.run
    if tx is None or run is None or not _at_home():
        # Outside a run (a request's own context, a thread a call started),
        # or in a copy of the worker's context or a new one: its own, as in
        # a serial run.
        return _copy_call(f, args, kwargs)
    run.bring_up_to_date()
    if not _worker.touched:
        _worker.call_start = dict(contextvars.copy_context().items())
        _worker.touched = True
    return _token_call(f)(f, args, kwargs)


def _copy_call(f: Any, args: tuple, kwargs: dict) -> Any:
    """``f`` as Python makes it; a copy of the context gets a home marker of its own."""
    result = f(*args, **kwargs)
    if f is contextvars.copy_context:
        result.run(_mark_home)
    return result


def _set_keeping_the_token(f: Any, args: tuple, kwargs: dict) -> Any:
    """``var.set(value)``: the token is remembered, for a reset from another context.

    Held while the application holds it (an id alone is soon another
    token's): the token holds the value it replaced, and a program that
    sets a variable per call without resetting it (a request's context)
    must not keep every old value alive.
    """
    token = f(*args, **kwargs)
    with _tokens_lock:       # (request code on several loops may set variables at once)
        _keep(_TOKENS, token)
    return token


def _reset_as_in_one_context(f: Any, args: tuple, kwargs: dict) -> Any:
    """``var.reset(token)`` of a token made in another copy of the run's context.

    A serial run makes every call, and the script around ``run()``, in one
    context: a token made by one call is good for a reset in a later call
    or after ``run()``. Here each worker has its own copy, and Python's
    reset refuses a token from another one. For a token made through this
    policy, the reset does what it would have done: the variable gets its
    value from before the ``set`` back -- or, when it had none, its
    default (a variable without a default, reset to no value, is still
    refused: docs/semantics.md, limit 1).
    """
    token = args[0] if args else kwargs.get("token")
    if type(token) is contextvars.Token and _USED_TOKENS.get(id(token)) is token:
        # (reset here already, where Python's own record says it was not)
        raise RuntimeError(f"{token!r} has already been used once")
    try:
        result = f(*args, **kwargs)
    except ValueError:
        variable = getattr(f, "__self__", None)
        if type(token) is not contextvars.Token:
            raise
        if token.var is not variable or _TOKENS.get(id(token)) is not token:
            raise
        old = token.old_value
        if old is contextvars.Token.MISSING:
            old = _default_of(variable)
            if old is _MISSING:
                raise
        _mark_used(token)
        variable.set(old)
        return None
    if type(token) is contextvars.Token and _TOKENS.get(id(token)) is token:
        # Reset by the context that made it: other workers' copies must
        # refuse it from now on, as Python's own record does here.
        _mark_used(token)
    return result


def _mark_used(token: contextvars.Token) -> None:
    """``token`` was reset: no longer one to reset, and refused from now on."""
    with _tokens_lock:
        _TOKENS.pop(id(token), None)
        _keep(_USED_TOKENS, token)


def _keep(registry: dict[int, contextvars.Token], token: contextvars.Token) -> None:
    """Put ``token`` in ``registry`` for as long as the application keeps it
    (the caller holds _tokens_lock).

    Held, not by id: a token that dies leaves its address to the next
    one. Those only the registry still holds go as it grows by a quarter
    (tokens take no weak references): a token the application dropped,
    and the value it replaced, stay alive a little longer than in a
    serial run, at a cost of a few steps per token.
    """
    if len(registry) >= _limits.get(id(registry), _TOKENS_FIRST_LIMIT):
        _let_go_of_dropped(registry)
    registry[id(token)] = token


def _let_go_of_dropped(registry: dict[int, contextvars.Token]) -> None:
    """Drop the tokens only ``registry`` holds; the next time is a quarter more on
    (the caller holds _tokens_lock)."""
    held_only_here(registry).clear()
    _limits[id(registry)] = _TOKENS_FIRST_LIMIT + len(registry) + len(registry) // 4


def _token_call(f: Any) -> Callable[[Any, tuple, dict], Any]:
    """How to make the call ``f`` in the worker's own context: ``ContextVar.set``
    and ``reset`` keep the meaning tokens have in a serial run's single
    context, and a copy of the context is told from the worker's own."""
    if type(getattr(f, "__self__", None)) is contextvars.ContextVar:
        if f.__name__ == "set":
            return _set_keeping_the_token
        if f.__name__ == "reset":
            return _reset_as_in_one_context
    return _copy_call


def _default_of(variable: contextvars.ContextVar) -> Any:
    """The default ``variable.get()`` answers where it has no value, or _MISSING."""
    return contextvars.Context().run(_value_or_missing, variable)


def _value_or_missing(variable: contextvars.ContextVar) -> Any:
    # (not variable.get(_MISSING): an argument given wins over the default)
    try:
        return variable.get()
    except LookupError:
        return _MISSING


#: Tokens made through the policy in a worker's own context, until reset
#: (by id; held while the application holds them: _keep).
_TOKENS: dict[int, contextvars.Token] = {}
#: Tokens reset here, while the application holds them: a second reset is refused.
_USED_TOKENS: dict[int, contextvars.Token] = {}
# (a dropped token frees the value it held, whose __del__ may set a variable:
# finalizers wait while it is held)
_tokens_lock = finalizer_safe_lock()
#: id(registry) -> its size at which the tokens only it holds are let go.
_limits: dict[int, int] = {}
_TOKENS_FIRST_LIMIT = 64
