"""Chooses the barrier implementation: the C fast path, or the pure-Python barriers.

This is the one place where that choice is made. ``tornado_stm.stm._fastpath``
(``_fastpath.c``) implements the hot cases of the barriers of
``tornado_stm.stm.barriers`` in C, with behaviour identical to the Python
functions, and hands every other case to those very functions. It is used
when it loads; ``TORNADO_STM_PURE=1`` in the environment forces the
pure-Python barriers (tests run both ways), and so does a failed build or
an interpreter that cannot load it (PyPy, odd platforms).

Loading the extension and the per-thread slot are the job of
:mod:`tornado_stm.stm.extension`, below the transaction module.
:func:`install` runs once, from :func:`tornado_stm.stm.start`: it hands
the extension what it needs from the engine (the Python barriers to fall
back to, the ``Transaction`` class, the version table...) and rebinds
the hot barriers in ``barriers``' namespace to the C ones, so that the
instrumenter, which takes the barriers from that module, emits calls to
them.

:data:`BACKEND` says which is in use (``"c"`` or ``"python"``);
:data:`PYTHON` keeps the pure-Python barriers and :data:`C` the C ones
(empty when not in use), for the identity tests.
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable

from tornado_stm.stm import extension

_ext = extension.EXTENSION

#: The barriers the extension replaces (names in ``tornado_stm.stm.barriers``).
HOT_BARRIERS = ("current", "get_attr", "set_attr", "del_attr", "get_item", "set_item",
                "del_item", "get_global", "call", "iterate", "contains", "new", "view",
                "deep_view", "truth", "touch", "tick", "binary", "compare", "compare_test", "operand",
                "recursive_callee", "method_to_call")

#: Why the C fast path is not in use ("" when it is).
REASON = extension.REASON
#: "c" when the C fast path is in use, "python" otherwise.
BACKEND = "c" if _ext is not None else "python"
#: name -> pure-Python barrier, filled by install().
PYTHON: dict[str, Callable] = {}
#: name -> C barrier, filled by install() when the extension is used.
C: dict[str, Callable] = {}


def install(namespace: dict) -> None:
    """Use the C barriers in ``namespace`` (``barriers``' globals) when the extension loaded."""
    if C:                               # barriers reloaded: the extension is configured once
        namespace.update(C)
        return
    PYTHON.update((name, namespace[name]) for name in HOT_BARRIERS)
    if _ext is None:
        _make_room_for_python_barriers()
        return
    missing = [name for name in HOT_BARRIERS if not hasattr(_ext, name)]
    if missing:                         # built from an older _fastpath.c
        _fall_back(f"the extension lacks {', '.join(missing)}: rebuild it (pip install -e .)")
        return
    try:
        _configure(namespace)
    except Exception as exc:            # an engine this extension does not match: stay pure
        _fall_back(f"configure() failed: {exc}")
        return
    for name in HOT_BARRIERS:
        C[name] = getattr(_ext, name)
        namespace[name] = C[name]
    # The C barriers check CURRENT.step in their prologue: steps may take W lazily.
    from tornado_stm.stm import txn
    txn.BARRIERS_CHECK_STEPS[0] = True


_ROOM_MADE = [False]


def _make_room_for_python_barriers() -> None:
    """Double the recursion limit, once: with the barriers in Python, each call
    of an instrumented function from another is two frames (the call
    barrier's and its own), and a recursion the application runs to 990
    levels in plain Python would stop at 500."""
    if not _ROOM_MADE[0]:
        _ROOM_MADE[0] = True
        sys.setrecursionlimit(2 * sys.getrecursionlimit())


def _fall_back(reason: str) -> None:
    global BACKEND, REASON
    _make_room_for_python_barriers()
    BACKEND, REASON = "python", reason
    warnings.warn(f"tornado_stm: pure-Python barriers ({reason})", RuntimeWarning, stacklevel=3)


def _configure(namespace: dict) -> None:
    from tornado_stm.stm import attrkinds, calls, policy, reach, registry, section, txn, versions

    if getattr(_ext, "PRUNE_PRIVATE_EVERY", None) != txn.PRUNE_PRIVATE_EVERY:
        raise RuntimeError("PRUNE_PRIVATE_EVERY differs between _fastpath.c and txn.py")

    _ext.configure(
        transaction=txn.Transaction,
        validate_every=txn.VALIDATE_EVERY,
        versions=versions.VERSIONS,
        stripe_mask=versions.STRIPE_MASK,
        key_salt=versions.KEY_SALT,
        immutable_types=attrkinds.IMMUTABLE_TYPES,
        read_cache=attrkinds.READ_CACHE,
        kinds=(attrkinds.PLAIN, attrkinds.IMMUTABLE, attrkinds.RUN, attrkinds.MODULE,
               attrkinds.NONDATA),
        call_policy=policy.CallPolicy,
        policy_cache=policy.LOOKUP_CACHE,
        irrevocable=policy.IRREVOCABLE,
        class_policies=calls.CLASS_POLICIES,
        deep_readers=calls.DEEP_READERS,
        instrumented_codes=registry.INSTRUMENTED_CODES,
        versioned_modules=registry.VERSIONED_MODULES,
        entry_code=section.ENTRY_CODE,
        frame_types=reach.FRAME_TYPES,
        container_types=txn.CONTAINER_TYPES,
        python={name: PYTHON[name] for name in HOT_BARRIERS},
    )
