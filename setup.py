"""Builds the optional C fast path of the STM barriers; all metadata is in pyproject.toml.

``tornado_stm/stm/_fastpath.c`` is built by ``pip install`` (editable
installs too) on CPython. It is optional: where it cannot be compiled (no
compiler, an odd platform) the install still succeeds and
``tornado_stm.stm.fastpath`` falls back to the pure-Python barriers. Other
implementations (PyPy) do not build it at all.
"""

import platform

from setuptools import Extension, setup

ext_modules = []
if platform.python_implementation() == "CPython":
    ext_modules.append(Extension(
        "tornado_stm.stm._fastpath",
        sources=["tornado_stm/stm/_fastpath.c"],
        optional=True,            # a failed build is a warning, not a failed install
    ))
    ext_modules.append(Extension(   # the C8 pass of stmlog_tools.analysis, also optional
        "stmlog_tools._fastc8",
        sources=["stmlog_tools/_fastc8.c"],
        optional=True,
    ))

setup(ext_modules=ext_modules)
