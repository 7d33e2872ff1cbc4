"""A background flusher thread started by this module's top level, on import
(the corpus's lazy_import_thread imports it inside a queued call)."""

import queue
import threading

Q = queue.Queue()
FLUSHED = []


def _run():
    while True:
        item = Q.get()
        FLUSHED.append(item)
        Q.task_done()


_T = threading.Thread(target=_run, daemon=True)
_T.start()
