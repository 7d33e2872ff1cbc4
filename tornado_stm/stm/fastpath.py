"""Chooses the barrier implementation: the C fast path, or the pure-Python barriers.

This is the one place where that choice is made. ``tornado_stm.stm._fastpath``
(``_fastpath.c``) implements the hot cases of the barriers of
``tornado_stm.stm.barriers`` in C, with behaviour identical to the Python
functions, and hands every other case to those very functions. It is used
when it loads; ``TORNADO_STM_PURE=1`` in the environment forces the
pure-Python barriers (tests run both ways), and so does a failed build or
an interpreter that cannot load it (PyPy, odd platforms).

Two hooks, each a one-line call in the engine's modules:

* :func:`thread_slot` makes ``txn._local``, the per-thread "current
  transaction" slot: a C object when the extension is used, so that the
  C barriers and ``current()`` read it without a ``threading.local``
  lookup; the engine's ``threading.local`` subclass otherwise.
* :func:`install` runs at the end of ``barriers``: it hands the extension
  what it needs from the engine (the Python barriers to fall back to, the
  ``Transaction`` class, the version table...) and rebinds the hot
  barriers in that module's namespace to the C ones, so the instrumenter,
  which takes the barriers from that module, emits calls to them.

:data:`BACKEND` says which is in use (``"c"`` or ``"python"``);
:data:`PYTHON` keeps the pure-Python barriers and :data:`C` the C ones
(empty when not in use), for the identity tests.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Optional

#: The barriers the extension replaces (names in ``tornado_stm.stm.barriers``).
HOT_BARRIERS = ("current", "get_attr", "set_attr", "del_attr", "get_item", "set_item",
                "del_item", "get_global", "call", "iterate", "contains", "new", "view",
                "deep_view", "truth", "touch", "tick", "binary", "compare")

_ext: Optional[Any] = None
#: Why the extension is not used ("" when it is).
REASON = ""
if os.environ.get("TORNADO_STM_PURE", "") not in ("", "0"):
    REASON = "TORNADO_STM_PURE is set"
elif os.environ.get("TORNADO_STM_FAULTS", ""):
    REASON = "TORNADO_STM_FAULTS is set (faults are injected in the Python barriers)"
else:
    try:
        from tornado_stm.stm import _fastpath as _ext
    except ImportError as exc:          # not built here, or not loadable by this interpreter
        REASON = f"the extension did not load: {exc}"

#: "c" when the C fast path is in use, "python" otherwise.
BACKEND = "c" if _ext is not None else "python"
#: name -> pure-Python barrier, filled by install().
PYTHON: dict[str, Callable] = {}
#: name -> C barrier, filled by install() when the extension is used.
C: dict[str, Callable] = {}


def thread_slot(fallback: Callable[[], Any]) -> Any:
    """The per-thread object whose ``tx`` attribute is the current transaction."""
    if _ext is not None:
        return _ext.TxSlot()
    return fallback()


def install(namespace: dict) -> None:
    """Called once at the end of ``barriers``; ``namespace`` is that module's globals."""
    if C:                               # barriers reloaded: the extension is configured once
        namespace.update(C)
        return
    PYTHON.update((name, namespace[name]) for name in HOT_BARRIERS)
    if _ext is None:
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


def _fall_back(reason: str) -> None:
    global BACKEND, REASON
    BACKEND, REASON = "python", reason
    warnings.warn(f"tornado_stm: pure-Python barriers ({reason})", RuntimeWarning, stacklevel=3)


def _configure(namespace: dict) -> None:
    from tornado_stm.stm import attrkinds, policy, registry, section, txn, versions

    _ext.configure(
        transaction=txn.Transaction,
        txn_module=txn,
        versions=versions.VERSIONS,
        stripe_mask=versions.STRIPE_MASK,
        key_salt=versions._KEY_SALT,
        immutable_types=attrkinds.IMMUTABLE_TYPES,
        read_cache=attrkinds._read_cache,
        kinds=(attrkinds.PLAIN, attrkinds.IMMUTABLE, attrkinds.RUN, attrkinds.MODULE),
        policy_cache=policy._cache,
        irrevocable=policy.IRREVOCABLE,
        class_policies=namespace.get("_class_policies"),
        instrumented_codes=registry.INSTRUMENTED_CODES,
        entry_code=section.ENTRY_CODE,
        frame_types=namespace["_FRAMES"],
        container_types=txn.CONTAINER_TYPES,
        python={name: PYTHON[name] for name in HOT_BARRIERS},
    )
