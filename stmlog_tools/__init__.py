"""stmlog_tools: read, write, analyse and draw PYPYSTM logs (PyPy-STM's and ours).

Modules, one job each:

* :mod:`stmlog_tools.format`   - headers, record layouts, event numberings, markers
* :mod:`stmlog_tools.writer`   - ``LogWriter``, the thread-safe writer the runtime uses
* :mod:`stmlog_tools.logfile`  - opening files, FIFOs and stdin; the header check; errors
* :mod:`stmlog_tools.reader`   - streaming, chunked, vectorised reading (numpy)
* :mod:`stmlog_tools.guess`    - ``--events auto``: which C8 numbering a log uses (resolve_numbering)
* :mod:`stmlog_tools.analysis` - picks the pass and builds the report dict (the JSON)
* :mod:`stmlog_tools.c8numpy`  - PyPy's C8 rules, vectorised per chunk
* ``stmlog_tools._fastc8``     - the same C8 rules in C (optional, the fast default)
* :mod:`stmlog_tools.c7`       - PyPy's C7 rules, a plain loop
* :mod:`stmlog_tools.tallies`  - what the passes add up
* :mod:`stmlog_tools.report`   - the text report in PyPy's layout (and its ``percent``)
* :mod:`stmlog_tools.timeline` - the HTML/SVG picture, one lane per thread; Chrome trace JSON
* :mod:`stmlog_tools.cli`      - the ``stmlog`` command (``python -m stmlog_tools``)
"""

__version__ = "0.1.0"
