"""Loads the C extension ``_fastpath`` (or says why not) and makes the per-thread slot.

This module sits below ``txn``: the transaction module needs the
per-thread "current transaction" slot when it is imported, and the C
barriers read that same slot. Installing and configuring the C barriers
is a separate, later step (:mod:`tornado_stm.stm.fastpath`), once the
engine's modules exist.

``TORNADO_STM_PURE=1`` in the environment forces the pure-Python
barriers (tests run both ways); so does ``TORNADO_STM_FAULTS`` (faults
are injected in the Python barriers), a failed build, or an interpreter
that cannot load the extension (PyPy, odd platforms).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

#: The loaded ``_fastpath`` module, or None.
EXTENSION: Optional[Any] = None
#: Why the extension is not used ("" when it is).
REASON = ""
if os.environ.get("TORNADO_STM_PURE", "") not in ("", "0"):
    REASON = "TORNADO_STM_PURE is set"
elif os.environ.get("TORNADO_STM_FAULTS", ""):
    REASON = "TORNADO_STM_FAULTS is set (faults are injected in the Python barriers)"
else:
    try:
        from tornado_stm.stm import _fastpath as EXTENSION
    except ImportError as exc:          # not built here, or not loadable by this interpreter
        REASON = f"the extension did not load: {exc}"


def _view_mapping() -> Optional[Callable[[Any], Any]]:
    try:
        from tornado_stm.stm._fastpath import view_mapping
    except ImportError:
        return None
    return view_mapping


#: ``_fastpath.view_mapping`` (the dict a dict view reads), also when the
#: barriers stay in Python (``TORNADO_STM_PURE``, faults): there is no safe
#: pure-Python way to it on the free-threaded build (``gc.get_referents``
#: stops the world). None where the extension is not built.
VIEW_MAPPING = _view_mapping()


def thread_slot(fallback: Callable[[], Any]) -> Any:
    """The per-thread object whose ``tx`` attribute is the current transaction.

    A C object when the extension is loaded, so that the C barriers read
    it without a ``threading.local`` lookup; ``fallback()`` otherwise.
    """
    if EXTENSION is not None:
        return EXTENSION.TxSlot()
    return fallback()
