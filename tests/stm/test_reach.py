"""What an unknown call run in place is found to reach (tornado_stm.stm.reach).

The corpus programs lib_setattr_targets, lib_nested_reach and
lib_reshape_torn show the end-to-end effect (no lost update, no torn
read); these tests pin the walk itself: what it finds, that it never runs
application code while it looks, and that it gives up safely.
"""

from __future__ import annotations

import collections
import functools
import types

from tornado_stm.stm import reach


class Cfg:
    n = 0
    handlers: list = []


def test_a_partial_reaches_the_class_it_sets_and_what_the_class_holds() -> None:
    found = reach.reached_state(None, functools.partial(setattr, Cfg, "n"), (1,), {})
    assert Cfg in found.owners
    assert any(c is Cfg.handlers for c in found.containers)
    assert [klass for klass, _ in found.classes] == [Cfg]
    assert not found.everything


def test_a_library_instance_reaches_the_containers_its_attributes_hold() -> None:
    front, base = {"n": 0}, {"z": 1}
    chain = collections.ChainMap(front, base)
    found = reach.reached_state(None, chain.__setitem__, ("n", 1), {})
    assert chain in found.owners
    assert any(c is front for c in found.containers)
    assert any(c is base for c in found.containers)


def test_a_namespace_and_a_slotted_object_are_owners_of_their_attributes() -> None:
    class Slotted:
        __slots__ = ("items",)

    slotted = Slotted()
    slotted.items = [1]
    space = types.SimpleNamespace(n=0)
    found = reach.reached_state(None, print, (space, slotted), {})
    assert space in found.owners and slotted in found.owners
    assert any(c is slotted.items for c in found.containers)
    assert reach.attribute_names(slotted) == ["items"]


def test_a_module_is_held_by_its_globals_and_is_versioned_from_then_on() -> None:
    module = types.ModuleType("reach_probe")
    module.x = 1
    found = reach.reached_state(None, setattr, (module, "x", 2), {})
    assert any(c is module.__dict__ for c in found.containers)
    # It was read plainly until now: every overlapping section must abort.
    assert found.everything
    assert module in reach.VERSIONED_MODULES
    reach.VERSIONED_MODULES.discard(module)


def test_the_walk_never_runs_a_metaclass_getattribute() -> None:
    asked = []

    class Meta(type):
        def __getattribute__(cls, name):
            asked.append(name)
            return type.__getattribute__(cls, name)

    class Watched(metaclass=Meta):
        price = 1

    asked.clear()
    found = reach.reached_state(None, setattr, (Watched, "price", 2), {})
    assert Watched in found.owners
    assert asked == []


def test_past_the_budget_the_call_holds_everything() -> None:
    big = [[i] for i in range(reach.REACH_BUDGET)]
    assert reach.reached_state(None, sorted, (big,), {}).everything
    assert not reach.reached_state(None, sorted, (big[:10],), {}).everything


def test_values_the_section_made_are_walked_but_not_held() -> None:
    shared = {"n": 0}
    private = [shared]

    section = types.SimpleNamespace(private={id(private): private})
    found = reach.reached_state(section, len, (private,), {})
    assert [id(c) for c in found.containers] == [id(shared)]


def test_a_class_whose_name_changes_kind_is_forgotten(monkeypatch) -> None:
    forgotten = []
    monkeypatch.setattr(reach.attrkinds, "forget", forgotten.append)
    held = []
    monkeypatch.setattr(reach, "hold", held.append)

    class Shaped:
        rate = 1

    reach._forget_if_reshaped(Shaped, dict(vars(Shaped)))
    assert forgotten == []
    before = dict(vars(Shaped))
    Shaped.rate = property(lambda self: 2)
    reach._forget_if_reshaped(Shaped, before)
    assert forgotten == [Shaped]
    assert held == [(reach.RESHAPE_STRIPE,)]
