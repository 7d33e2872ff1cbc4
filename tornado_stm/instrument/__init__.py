"""Instrumentation of application code for the STM.

``install(patterns)`` must run before the application is imported; the
``serve`` command calls ``install(package_patterns("myapp"))``, that is
``["myapp", "myapp.*"]``, for the package of the application it serves. Modules whose names match
a pattern (``fnmatch`` syntax) are then loaded from source with their
function bodies rewritten (``rewriter``) so that heap accesses go through
the barriers of ``tornado_stm.stm.barriers`` and each function becomes an
atomic-section entry when called from uninstrumented code.

``compile_instrumented(source, filename)`` and ``prepare_module(module)``
do the same for code that is not imported (``tornado-stm exec`` runs a
script this way).
"""

from tornado_stm.instrument.hook import (InstrumentingFinder, compile_instrumented, install,
                                         package_patterns, prepare_module, prepare_namespace,
                                         uninstall)

__all__ = ["InstrumentingFinder", "compile_instrumented", "install", "package_patterns",
           "prepare_module", "prepare_namespace", "uninstall"]
