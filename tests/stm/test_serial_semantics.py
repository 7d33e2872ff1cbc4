"""Ordinary Python behaves as in a serial run: one deterministic scenario per mechanism.

Each of these failed before the engine handled it (issue 9); the generated
programs of test_differential.py cover the same ground at random.
"""

from __future__ import annotations

import collections
import threading

import pytest

from tests.stm import helpers
from tests.stm.conftest import instrumented
from tornado_stm import stm


@pytest.fixture
def app():
    module = instrumented("serial")
    module.reset()
    stm.reset_stats()
    yield module
    helpers.release()
    helpers.disarm()


def _paused(section, *args):
    """Start ``section(*args)`` on a thread and return it once it reached helpers.pause()."""
    helpers.arm()
    thread = threading.Thread(target=section, args=args)
    thread.start()
    assert helpers.wait_until_paused()
    return thread


def _read_beside_a_paused_writer(writer, argument, read) -> list:
    """What ``read()`` returns on a thread of its own while ``writer(argument)`` is paused.

    The reader must wait (or abort and retry) rather than see half of the
    writer's work: it gets 0.3 s before the writer goes on.
    """
    paused = _paused(writer, argument)
    seen: list = []
    reader = threading.Thread(target=lambda: seen.append(read()))
    reader.start()
    reader.join(0.3)
    helpers.release()
    paused.join(30)
    reader.join(30)
    return seen


def test_an_inevitable_section_is_never_seen_half_done(app) -> None:
    seen = _read_beside_a_paused_writer(app.write_pair_inevitably_across_a_pause, 7,
                                        app.read_pair)
    assert seen in ([(7, 7)], [(0, 0)])           # never (7, 0)


def test_a_generator_expression_sees_the_section_s_later_writes(app) -> None:
    assert app.lazy_sum_after_own_append() == 106


def test_a_truth_test_sees_the_section_s_own_writes(app) -> None:
    assert app.truth_after_own_clear() == "empty"


def test_an_operator_sees_the_section_s_own_writes(app) -> None:
    assert app.operator_after_own_append() == [1, 2, 3, 4, 5]


def test_a_container_method_reads_its_argument_as_the_section_wrote_it(app) -> None:
    assert app.extend_from_a_list_written_here() == [1, 2]
    assert app.DST == [1, 2]


def test_ordereddict_popitem_is_undone_when_the_section_is_retried(app) -> None:
    section = _paused(app.popitem_across_a_conflict)
    app.bump_gate()                       # conflicts: the paused section must retry
    helpers.release()
    section.join(30)
    assert list(app.ORDER) == ["b", "c", "d"]       # one popitem, not two
    assert app.GATE["v"] == 2
    assert stm.stats()["aborts"] >= 1


def test_a_write_to_a_base_class_attribute_conflicts_with_a_read_through_the_subclass(app) -> None:
    section = _paused(app.copy_sub_x_across_a_pause)
    app.set_base_x(5)
    helpers.release()
    section.join(30)
    assert app.GATE["v"] == 5             # the stale 0 was not committed
    assert stm.stats()["aborts"] >= 1


def test_an_exception_keeps_the_writes_made_before_it(app) -> None:
    with pytest.raises(KeyError):
        app.fail_after_writing(3)
    assert app.PAIR["a"] == 3


def test_nested_unpacking_reads_the_inner_item_through_a_barrier() -> None:
    from tornado_stm.instrument.rewriter import rewrite
    import ast
    code = ast.unparse(rewrite("def f(P):\n    (a, b), = [P]\n    return a, b\n", "n.py"))
    assert "= _stm_view(_stm_tx, _stm_t2)" in code


def test_a_key_added_in_place_by_an_inevitable_call_conflicts_with_its_membership_test(app) -> None:
    app.drop_k()
    section = _paused(app.note_whether_k_is_there_across_a_pause)
    app.add_k_inevitably()               # dict.update in place: the new key's stripe is bumped
    helpers.release()
    section.join(30)
    assert app.GATE["v"] is True         # the stale "not there" was not committed
    assert stm.stats()["aborts"] >= 1
    app.drop_k()


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_container_subclasses_that_override_their_methods_run_inevitably(app, threads) -> None:
    """A list whose __setitem__ calls super() recursed on its copy and hung the
    commit; a dict whose __missing__ stores into self lost every write. Such
    sections rerun inevitably; a subclass that only adds methods stays optimistic."""
    app.reset_subclasses()
    rounds = 60
    helpers.run_threads(threads, lambda i: [
        (app.bump_slot(i + threads * n), app.register(i + threads * n), app.bump_tagged(n))
        for n in range(rounds)])
    total = threads * rounds
    assert sum(app.SLOTS) == total
    assert sorted(x for items in app.REGISTRY.values() for x in items) == list(range(total))
    assert app.TAGGED[0] == total
    causes = stm.stats()["inevitable_by_cause"]
    assert any("Slots" in cause for cause in causes) and any("Registry" in cause for cause in causes)
    assert not any("Tagged" in cause for cause in causes), causes


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_shared_seeded_generator_gives_the_serial_stream(app, threads) -> None:
    """random.Random.randint was 'pure': aborted attempts consumed draws, so the
    values drawn were not the first ones of the seeded stream."""
    import random
    app.reset_draws()
    rounds = 50
    helpers.run_threads(threads, lambda i: [app.draw(n) for n in range(rounds)])
    expected = random.Random(2014)
    assert sorted(app.DRAWS) == sorted(expected.randint(0, 10**9)
                                       for _ in range(threads * rounds))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_shared_iterator_gives_out_each_item_once(app, threads) -> None:
    """next() on a shared itertools.count() ran in place in optimistic attempts:
    every abort burnt ids. Iterators the section makes stay optimistic."""
    app.reset_ids()
    rounds = 50
    helpers.run_threads(threads, lambda i: [app.take_id(n) for n in range(rounds)])
    assert sorted(app.TAKEN) == list(range(threads * rounds))
    causes = stm.stats()["inevitable_by_cause"]
    assert set(causes) <= {"advancing an iterator or generator from outside the section",
                           "too many aborts"}, causes


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_mutable_buffers_read_by_builtins_lose_no_update(app, threads) -> None:
    """max(array) and bytes(bytearray) read the buffer without a version: a
    later (inevitable) write of it lost updates. A read of a shared buffer
    now makes the section inevitable."""
    app.reset_buffers()
    rounds = 50
    helpers.run_threads(threads, lambda i: [app.bump_buffers(n) for n in range(rounds)])
    assert app.COUNTS[0] == threads * rounds
    assert int.from_bytes(bytes(app.BYTES), "little") == threads * rounds


@pytest.mark.freethreaded
def test_reading_a_shared_ordereddict_whole_never_races_a_commit() -> None:
    """On 3.13t an OrderedDict iterated during a concurrent clear() crashes the
    interpreter: such a section reruns inevitably (in a subprocess, so a crash
    is a failure, not a lost test run)."""
    import subprocess
    import sys
    from pathlib import Path
    code = (
        "from tests.stm.conftest import instrumented\n"
        "from tests.stm.helpers import run_threads\n"
        "from tornado_stm import stm\n"
        "app = instrumented('serial')\n"
        "run_threads(4, lambda i: [app.scan_or_reorder(i + 4 * n) for n in range(3000)])\n"
        "causes = stm.stats()['inevitable_by_cause']\n"
        "print(sorted(app.ORDER) == list('abcd'), any('OrderedDict' in c for c in causes))\n")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]


def test_comprehension_unpacking_sees_the_section_s_own_writes(app) -> None:
    """[a for a, b in pairs] unpacked each item without a barrier: it missed the
    section's own write to a nested list."""
    assert app.first_of_pairs_after_own_write() == 51


def test_match_reads_the_section_s_own_writes(app) -> None:
    """match read a shared dict (mapping pattern) and an instance's attributes (class
    pattern) as last committed, missing the write just before it."""
    assert app.match_a_mapping_after_own_write() == 1
    assert app.match_a_class_after_own_write() == 1


def test_an_old_dict_view_sees_the_section_s_own_writes(app) -> None:
    """A d.values() made at import read the live dict: sum() and a loop missed the
    section's own deposit."""
    assert app.totals_through_an_old_view_after_own_deposit() == (205, 205)


@pytest.mark.parametrize("threads", [2, 4])
def test_an_old_dict_view_never_reads_a_torn_total(app, threads) -> None:
    totals: list[int] = []

    def work(index: int) -> None:
        for n in range(300):
            if index % 2:
                totals.append(app.total_through_the_old_view())
            else:
                app.move_between_balances(n)
    helpers.run_threads(threads, work)
    assert totals and set(totals) == {200}


def test_uninstrumented_readers_of_an_instance_see_the_section_s_own_writes(app) -> None:
    """copy.copy, an attrgetter key and a dataclass's generated __eq__/__repr__ read
    attributes without barriers: they missed the write the section had just made."""
    assert app.copy_after_own_deposit() == 1100
    assert app.richest_after_own_deposit() == 1
    assert app.dataclass_reads_after_own_write() == (True, "Mark(x=1, y=0)", "Mark(x=1, y=0)")


def test_values_nested_in_arguments_of_plain_readers_see_own_writes(app) -> None:
    """sum([a], []), map(len, rows), '{0[0][2]}'.format(rows), list(rows) == ...,
    [1, 2, 9] in [a, b] read the nested lists as last committed (found by the second
    adversarial round)."""
    assert app.nested_reads_after_own_append() == (
        [1, 2, 9], [3, 1], 15, "[[1, 2, 9]]", "9", "[1, 2, 9] [3]", True, True, True)
    assert app.format_an_attribute_after_own_write() == "1102"


def test_counter_and_defaultdict_behave_as_their_classes_do(app) -> None:
    """del counter[missing] raised KeyError, counter[deleted] raised KeyError instead of
    giving 0, a new default_factory was ignored by the next missing key."""
    assert app.counter_and_defaultdict_after_own_writes() == (0, {"k": 1})


def test_a_class_statement_in_a_section_reads_through_the_barriers(app) -> None:
    """A class body in a function was left uninstrumented: it read the committed value,
    and its method read the enclosing function's nonlocal cell as a Box."""
    assert app.class_statement_after_own_write() == (1, 12)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_key_s_own_eq_runs_where_a_serial_run_runs_it(app, threads) -> None:
    """A buffered d[k] = v met the key's __eq__ only at publication: its reads could
    abort a half-made publication, and its exception made the commit fail, each
    retry applying the section's earlier writes again (third adversarial round)."""
    rounds = 20
    helpers.run_threads(threads, lambda index: [app.count_then_store(n) for n in range(rounds)])
    assert app.TOTAL["v"] == threads * rounds
    assert sorted(key.n for key in app.KEYED) == [1, 2, 3, 4]


def test_walrus_and_with_as_targets_write_through_the_barriers(app) -> None:
    """``(g := ...)`` on a global and ``with cm as obj.attr`` wrote in place, so a
    retry applied them twice; ``(n := ...)`` on a nonlocal replaced its Box and
    the next read raised AttributeError (fourth round)."""
    section = _paused(app.bind_shared_names_across_a_conflict)
    app.bump_gate()                       # conflicts: the paused section must retry
    helpers.release()
    section.join(30)
    assert (app.HITS, app.HOLDER.value) == (1, 1)      # once each, not once per attempt
    assert app.GATE["v"] == 3                          # 1 (bump) + the nonlocal's 2 steps
    assert stm.stats()["aborts"] >= 1


def test_def_and_import_bind_globals_and_nonlocals_through_the_barriers(app) -> None:
    """A nested def (or import) of a nonlocal replaced its Box (AttributeError on
    the next read); a def of a global wrote it in place, unversioned. The global
    one now runs inevitably, with the name's stripes held."""
    assert app.bind_by_statements(7) == (0, "called", "[7]")
    assert app.HANDLER() == 7
    causes = stm.stats()["inevitable_by_cause"]
    assert "binding a global with def, class or import" in causes, causes


def test_a_deleted_attribute_falls_back_as_in_python(app) -> None:
    """After ``del obj.x`` in a section, reading ``obj.x`` raised AttributeError
    instead of showing the class default or recomputing a cached_property."""
    app.reset_attributes()
    assert app.deleted_attributes_fall_back() == ("red", 10)
    assert (app.SETTINGS.color, app.CART.total) == ("red", 10)


def test_vars_of_a_shared_object_is_its_attributes(app) -> None:
    """``vars(obj)[k] = v`` went to a dict log that ``obj.k`` did not read: the
    section did not see its own write (fourth round)."""
    app.reset_attributes()
    assert app.count_through_vars() == (1, 1)
    assert app.SHAPED.a == 1


@pytest.mark.parametrize("threads", [2, 4])
def test_a_class_switch_is_never_seen_half_done(app, threads) -> None:
    """``obj.__class__ = B`` is read back by type(), isinstance and method lookups,
    none versioned: readers saw the new class with the old counter (fourth round:
    190 of 1000 checks). Every section overlapping the switch now aborts."""
    app.reset_attributes()
    verdicts: list = []
    helpers.run_threads(threads, lambda index: [
        app.flip_class(n) if (index + n) % 2 else verdicts.append(app.class_agrees_with_flag(n))
        for n in range(150)])
    assert verdicts and all(verdicts), verdicts.count(False)
    assert (type(app.SHAPED) is app.Flagged) == (app.FLAGGED[0] == 1)


def test_a_container_the_section_wrote_is_kept_by_calls_as_itself(app) -> None:
    """A call was handed the section's copy of a container it had written, so
    that it read the section's writes; but list.append, dict(...), an
    application class and an exception kept the copy, and min() returned it:
    writes through those references were lost (fourth round: 994 appends of 2000)."""
    app.reset_aliases()
    with pytest.raises(app.Carried) as raised:
        app.keep_written_containers()
    assert raised.value.where is app.BATCH and raised.value.args[0] is app.BATCH
    assert app.identities_after_keep() == (True, True, [1, 2], [0, 1, "job"])


@pytest.mark.parametrize("threads", [2, 4])
def test_plain_code_handed_a_shared_container_loses_no_update(app, threads) -> None:
    """map(EVENTS.append, ...) appended to the section's read copy (dropped);
    partial(EVENTS.append)(x) and methodcaller('append', x)(EVENTS) ran in
    place, inevitably, without a new version, so a concurrent section
    published its older copy over them (HTTP adversarial round: 395 of 400)."""
    app.reset_events()
    rounds = 60
    helpers.run_threads(threads, lambda index: [app.record_event(index * rounds + n)
                                                for n in range(rounds)])
    assert sorted(app.EVENTS) == list(range(threads * rounds))
    assert sorted(app.EVENT_KEYS) == [i for i in range(threads * rounds) if i % 4 == 1]


def test_except_as_binds_globals_and_nonlocals_through_the_barriers(app) -> None:
    """``except E as name`` on a global wrote the module dict in place: a
    concurrent section read the exception of a section still running; on a
    nonlocal it replaced the Box (fifth round)."""
    app.LAST_ERROR = "none"
    catching = _paused(app.catch_into_a_global)
    assert app.read_last_error() == "none"              # not the running section's binding
    helpers.release()
    catching.join(30)
    assert app.read_last_error() == "unbound"           # Python unbinds the name at the end
    assert app.catch_into_a_nonlocal() == ("KeyError('k')", "unbound")


def test_a_partial_keeps_the_written_list_itself(app) -> None:
    """``functools.partial(f, batch)`` after the section wrote ``batch`` kept the
    section's copy: items added through it later were lost (fifth round)."""
    app.BATCH[:] = []
    app.keep_a_partial_of_a_written_list()
    app.add_through_the_kept_partials()
    assert app.BATCH == [1, 2, 3]


@pytest.mark.parametrize("route", ["getattr", "attrgetter", "object.__getattribute__",
                                   "__getstate__", "__reduce_ex__", "the __dict__ descriptor"])
def test_getattr_dict_in_an_inevitable_section_is_never_seen_half_done(app, route) -> None:
    """``getattr(obj, "__dict__")``, ``attrgetter("__dict__")`` and
    ``object.__getattribute__(obj, "__dict__")`` in a section already
    inevitable handed out the live dict without holding RESHAPE_STRIPE: a
    concurrent ``obj.a`` read saw the first of two in-place writes (fifth
    round: 1009 of 1200 counts kept)."""
    app.reset_attributes()
    seen = _read_beside_a_paused_writer(app.count_through_getattr_dict_inevitably, route,
                                        app.read_shaped_pair)
    assert seen in ([(0, 0)], [(1, 1)])


def test_a_functools_wraps_decorator_runs_when_called_from_a_section(app) -> None:
    """The call barrier took ``__wrapped__`` for the function an entry wrapper
    wraps; ``functools.wraps`` sets it on the application's own wrapper, so a
    call from a section skipped the decorator (a permission check, a counter;
    fifth round)."""
    app.AUDIT[:] = []
    assert app.call_a_decorated_function() == 6
    assert app.AUDIT == ["three"]


def test_a_new_object_published_by_an_inevitable_turn_is_never_seen_half_filled(app) -> None:
    """A list the section made, stored, then filled after the section turned
    inevitable: the turn published it and unlocked its stripes, and readers
    saw [7, 0] (fifth round: half-built orders, a KeyError over HTTP)."""
    app.CURRENT["pair"] = [1, 1]
    seen = _read_beside_a_paused_writer(app.publish_then_fill_inevitably, 7,
                                        app.read_current_pair)
    assert seen in ([(1, 1)], [(7, 7)])


def test_augmented_assignment_to_a_shared_bytearray_is_applied_once(app) -> None:
    """``log += b"y"`` changed the shared bytearray in place in an optimistic
    section: a retry applied it again (634 bytes for 600 calls, and hangs on
    3.13t; fifth round). It now runs inevitably, under W."""
    app.LOG["bytes"] = bytearray()
    section = _paused(app.add_a_byte_across_a_conflict)
    app.bump_gate()
    helpers.release()
    section.join(30)
    assert bytes(app.LOG["bytes"]) == b"y"
    assert app.GATE["v"] == 2


def test_an_iterator_or_view_kept_for_later_reads_the_live_container(app) -> None:
    """``d.values()`` and ``iter(lst)`` made in a section read its private copy
    (one consistent state); kept in a global, they read that copy for ever:
    a later section missed every change (a feed cursor never showed new posts;
    fifth round). A section that keeps one runs again inevitably."""
    app.SETTINGS_MAP["a"] = 0
    app.FEED[:] = ["a"]
    stm.reset_stats()
    app.keep_readers()
    app.change_what_they_read()
    assert app.use_kept_readers() == (5, ["b"])
    causes = stm.stats()["inevitable_by_cause"]
    assert causes.get("an iterator or view over the section's copy of a shared container "
                      "is kept") == 1, causes


def test_the_first_write_to_a_library_module_aborts_its_plain_readers(app) -> None:
    """Attributes of a module that no section writes (``heapq.heappush``) are
    read without a read-log entry; the first write to one (``lib.VALUE = 2``)
    makes the writer inevitable and holds RESHAPE_STRIPE, so a section that
    read the old value plainly cannot commit beside it."""
    from tests.stm import libstate
    from tornado_stm.stm.registry import VERSIONED_MODULES

    VERSIONED_MODULES.discard(libstate)
    libstate.VALUE = 1
    reader = []
    thread = _paused(lambda: reader.append(app.read_library_value_twice()))
    app.set_library_value(2)
    helpers.release()
    thread.join(30)
    assert reader == [(2, 2)]
    assert libstate in VERSIONED_MODULES
    assert "the first write to module tests.stm.libstate" in stm.stats()["inevitable_by_cause"]


def test_a_shuffle_by_a_private_generator_shuffles_the_shared_list(app) -> None:
    """``random.Random(seed).shuffle(DECK)``: the table said it changes only the
    generator, so the shuffle went to the section's copy of DECK and was lost
    (or, with no copy, permuted the live list unversioned; sixth round)."""
    app.DECK[:] = range(10)
    shuffled = app.shuffle_after_a_whole_read(7)
    assert app.DECK == shuffled != list(range(10))
    assert sorted(app.DECK) == list(range(10))


def test_init_called_again_refills_the_shared_container(app) -> None:
    """``list.__init__(L, items)``, ``S.__init__(...)``: the table took __init__
    for a reader; after a whole read the refill went to the section's copy and
    was lost, and otherwise changed the live object unversioned (sixth round)."""
    app.REFILLED.update(list=[0], set={0}, dict={"n": 0}, deque=collections.deque([0]))
    assert app.init_again_after_whole_reads() == [1, 1, 1, 1]
    assert app.REFILLED == {"list": [1, 2], "set": {3}, "dict": {"n": 4},
                            "deque": collections.deque([5])}


def test_finalizers_run_once_for_the_objects_a_serial_run_makes(app) -> None:
    """``__del__`` of an object made by an aborted attempt ran outside any
    section and committed (a live count went negative), and one that died
    inside another section was lost with that section's abort (sixth round).
    An aborted attempt's objects now finalize inside a transaction that is
    dropped; any other object's ``__del__`` runs as a section of its own
    after the section in which it died."""
    _no_resources(app)
    app.replace_a_resource_across_a_conflict("r")       # one alive
    section = _paused(app.replace_a_resource_across_a_conflict, "r")
    app.bump_gate()                                       # the paused attempt must retry
    _one_resource_left_after(app, section)


def test_a_shared_object_whose_last_reference_an_aborted_attempt_held_is_finalized(app) -> None:
    """Its ``__del__`` ran inside the transaction that drops the aborted
    attempt, and its writes were dropped with it (round 7: a live count 1 to
    4 above its target). Only what the attempt made dies with the attempt
    now; this object is finalized after the section, once."""
    _no_resources(app)
    app.replace_a_resource("r")                        # shared, one alive
    section = _paused(app.hold_a_resource_across_a_conflict, "r")
    app.replace_a_resource("r")       # the paused attempt holds the old one's last reference
    app.bump_gate()                   # and must abort
    _one_resource_left_after(app, section)


def test_an_object_whose_init_an_abort_cut_short_is_never_finalized(app) -> None:
    """An attempt aborted inside ``__init__`` had not yet registered the object
    it was building (that happened when the class call returned), so its
    ``__del__`` would count a release for an object no serial run made. A
    class with a ``__del__`` is registered as soon as ``__new__`` returns."""
    _no_resources(app)
    section = _paused(app.make_a_slow_resource, "s")
    app.bump_gate()                   # the paused __init__ reads GATE next: an abort there
    _one_resource_left_after(app, section)


def test_a_finalizer_on_a_thread_waiting_in_run_waits_for_a_safe_point(app) -> None:
    """Free-threaded CPython frees an object on the thread that made it: the
    ``__del__`` of a resource the main thread made and a worker's commit
    dropped ran on the main thread, wherever it was in ``transaction.run()``,
    as plain module-body code: ``ALIVE["n"] -= 1`` read and wrote between two
    of the workers' commits (round 9's sink_del, one run in eight short). It
    now waits for ``run()``'s next safe point and runs as a section."""
    from tornado_stm.stm.section import module_body

    _no_resources(app)
    with module_body():
        app.replace_a_resource("r")                     # plain code: one alive
        assert app.ALIVE["n"] == 1
        with stm.beside_the_workers():
            app.HELD.clear()                            # as if a worker dropped it here
            assert app.ALIVE["n"] == 1, "ran where it died"
            before = stm.stats()["commits"]
            stm.run_deferred_finalizers()
            assert app.ALIVE["n"] == 0
            assert stm.stats()["commits"] == before + 1, "not run as a section"
        app.replace_a_resource("r")
        app.HELD.clear()                                # module-body code again: at once
        assert app.ALIVE["n"] == 0


def _no_resources(app) -> None:
    import gc

    app.HELD.clear()
    gc.collect()
    app.ALIVE["n"] = 0


def _one_resource_left_after(app, section) -> None:
    """Let the paused ``section`` finish (it aborted once): one resource alive, held."""
    import gc

    helpers.release()
    section.join(30)
    gc.collect()
    assert stm.stats()["aborts"] >= 1
    assert app.ALIVE["n"] == len(app.HELD) == 1
    app.HELD.clear()                                      # nothing left for interpreter exit


@pytest.mark.parametrize("replace", ["replace_a_handle", "replace_a_cursor",
                                     "replace_a_watched_object", "replace_an_aliased_resource"])
def test_finalizers_of_objects_dropped_inside_another_section_run_once(app, replace) -> None:
    """A ``weakref.finalize`` or ``weakref.ref`` callback, or the ``finally`` of
    a generator closed because it was collected, ran inside whatever section its object died in.
    In one whose snapshot was stale, its read raised AbortSection, which
    CPython swallowed ("Exception ignored"), and the retry had nothing left
    to release (round 6: 1477 of 1492 releases counted). It now runs after
    that section, on its own."""
    import gc

    app.HELD.clear()
    gc.collect()
    app.ALIVE["n"] = 0
    getattr(app, replace)("h")
    section = _paused(app.let_go_of_a_handle_after_a_pause, "h")
    getattr(app, replace)("h")       # the paused section holds the old one's last reference
    helpers.release()
    section.join(30)
    gc.collect()
    assert stm.stats()["aborts"] >= 1
    assert app.ALIVE["n"] == len(app.HELD) == 1
    app.HELD.clear()
    gc.collect()
    assert app.ALIVE["n"] == 0


def test_a_section_that_closes_a_generator_sees_its_finally(app) -> None:
    """An explicit close() is an ordinary call: the ``finally`` runs there, in
    the section, whether the section or an earlier one made the generator."""
    app.HELD.clear()
    app.ALIVE["n"] = 0
    app.replace_a_cursor("c")
    assert app.close_and_count("c") == (1, 0)
    assert app.ALIVE["n"] == 0
    assert app.open_close_and_count() == (1, 0)
