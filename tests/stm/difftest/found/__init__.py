"""Minimal programs reduced from failures of the differential tester (see README.md)."""
