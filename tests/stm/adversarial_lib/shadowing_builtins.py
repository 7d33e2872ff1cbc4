"""A library whose star import shadows a builtin: ``range`` here hands out shared lists.

Used by tests/stm/adversarial/builtins_shadowed.py (``from shadowing_builtins import *``).
"""

H = {"a": ["tok"], "b": []}


def range(n):
    return [H["a"], H["b"]]
