"""An uninstrumented helper module for generated programs.

Its functions are plain Python that the safe-call policy does not know,
so a section that calls one becomes inevitable (irrevocable) first. The
generated programs use them to make a section inevitable in the middle of
its work, and then keep writing.
"""

from __future__ import annotations

import io
import threading

#: Where note() writes: an in-memory sink, never a real file.
SINK = io.StringIO()
_lock = threading.Lock()


def note(value: object) -> None:
    """An irrevocable effect: append a line to the in-memory sink."""
    with _lock:
        SINK.write(f"{value}\n")
        if SINK.tell() > 1 << 16:
            SINK.seek(0)
            SINK.truncate()
