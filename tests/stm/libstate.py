"""A library module for tests/stm: never instrumented, its attributes read plainly
until instrumented code first writes one (see test_serial_semantics)."""

VALUE = 1
