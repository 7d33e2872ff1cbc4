"""What the tests and the benchmark use to drive tornado-stm; not part of the wheel.

``serverproc``: start a server as a subprocess on a free loopback port,
wait for it, stop it (the end-to-end tests and every peer of the benchmark).
``tornado_suite``: Tornado's own test suite on our event loops
(``python -m testsupport.tornado_suite``, ``make test-tornado``).

Like ``apps/`` and ``bench/``, it is used from the checkout: pytest puts the
checkout on ``sys.path`` (``tests/`` is a package), and ``make`` runs
``python -m ...`` from it. pyproject.toml's package list leaves it out.
"""
