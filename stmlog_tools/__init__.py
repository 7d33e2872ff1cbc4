"""stmlog_tools: read, write, analyse and draw PYPYSTM logs (PyPy-STM's and ours).

Modules, one job each:

* :mod:`stmlog_tools.format`   - headers, record layouts, event numberings, markers
* :mod:`stmlog_tools.writer`   - ``LogWriter``, the thread-safe writer the runtime uses
* :mod:`stmlog_tools.reader`   - streaming, chunked, vectorised reading; clear errors
* :mod:`stmlog_tools.analysis` - PyPy's arithmetic (C7 and C8) and more; the JSON report
* :mod:`stmlog_tools.report`   - the text report in PyPy's layout
* :mod:`stmlog_tools.timeline` - the HTML/SVG picture, one lane per thread
* :mod:`stmlog_tools.cli`      - the ``stmlog`` command (``python -m stmlog_tools``)
"""

__version__ = "0.1.0"
