"""The STM engine: atomic sections, barriers, commit, abort and retry.

See docs/architecture.md and docs/semantics.md.
"""
