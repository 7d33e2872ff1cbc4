"""Application code for the STM tests: imported instrumented (and, for the
race demonstrations, a second time plain) by tests/stm/conftest.py."""
