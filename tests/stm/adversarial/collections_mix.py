"""Many ``collections``, ``heapq``, ``bisect`` and ``itertools`` constructs on shared state.

Serial invariants (each kept by every call, so by every serial order):

* ``inv`` (a ``Counter``) totals 120, also through ``+``, ``&`` and ``most_common``;
* ``lru`` (an ``OrderedDict``) holds a permutation of ``0..N-1`` as values;
* ``ring`` (a ``deque`` with ``maxlen``) is a permutation of ``0..N-1``;
* ``heap`` is a heap holding ``0..N-1``; ``srt`` stays sorted with ``N`` items;
* every pair in ``pairs`` (a ``set``) sums to ``N``; ``groups`` (a
  ``defaultdict(list)``) holds ``N`` items in all;
* ``chain``, ``groupby``, ``islice`` and ``accumulate`` over them agree.

Attacks: the policy table's entries for library methods on shared
containers: mutators (``Counter.subtract``, ``move_to_end``, ``rotate``,
``heappush``, ``insort``...) buffered in the redo log, and readers (the
pure-Python ``Counter`` operators, ``OrderedDict`` iteration, which
serializes, ``itertools`` consuming shared containers) that must see the
section's own writes and one consistent snapshot.
"""

import bisect
import heapq
import itertools
from collections import Counter, OrderedDict, defaultdict, deque

import transaction

N = 12
inv = Counter({f"k{j}": 10 for j in range(N)})
lru = OrderedDict((f"k{j}", j) for j in range(N))
ring = deque(range(N), maxlen=N)
heap = list(range(N))
heapq.heapify(heap)
srt = list(range(0, 2 * N, 2))
pairs = {(j, N - j) for j in range(N)}
groups = defaultdict(list)
groups["a"] = list(range(N))
bad = []


def spin():
    x = 0
    for j in range(80):
        x += j
    return x


def counter_move(i):
    a, b = f"k{i % N}", f"k{(i * 5 + 1) % N}"
    if inv[a] > 0:
        inv.subtract({a: 1})
        spin()
        inv.update({b: 1})


def counter_arithmetic(i):
    total = sum((inv + Counter()).values())        # + drops non-positive counts
    both = inv & inv
    if total != 120 or sum(both.values()) != 120:
        bad.append(("counter", total))
    top = inv.most_common(3)
    if len(top) != 3 or top[0][1] < top[2][1]:
        bad.append(("most_common", top))


def ordered_dict(i):
    lru.move_to_end(f"k{i % N}", last=bool(i % 2))
    key, value = lru.popitem(last=False)
    spin()
    lru[key] = value
    if sorted(lru.values()) != list(range(N)):
        bad.append(("od", list(lru.items())))


def deque_shuffle(i):
    ring.rotate(i % 5 - 2)
    x = ring.popleft()
    y = ring.popleft()
    spin()
    ring.extendleft([x, y])
    if sorted(ring) != list(range(N)) or len(ring) != N:
        bad.append(("deque", list(ring)))


def heap_cycle(i):
    x = heapq.heappop(heap)
    spin()
    heapq.heappush(heap, x)
    if sorted(heap) != list(range(N)) or heap[0] != min(heap):
        bad.append(("heap", list(heap)))


def insort(i):
    x = srt.pop(i % len(srt))
    spin()
    bisect.insort(srt, x)
    if srt != sorted(srt) or len(srt) != N:
        bad.append(("insort", list(srt)))


def set_cycle(i):
    p = min(pairs)
    pairs.discard(p)
    spin()
    pairs.add((p[0], p[1]))
    if any(a + b != N for a, b in pairs) or len(pairs) != N:
        bad.append(("pairs",))
    if len(frozenset(pairs)) != N:
        bad.append(("frozenset",))


def group_move(i):
    src, dst = ("a", "b") if i % 2 else ("b", "a")
    if groups[src]:
        x = groups[src].pop()
        spin()
        groups[dst].append(x)
    if sum(len(v) for v in groups.values()) != N:
        bad.append(("groups", {k: len(v) for k, v in groups.items()}))
    sizes = list(itertools.accumulate(len(v) for v in groups.values()))
    if sizes[-1] != N:
        bad.append(("accumulate", sizes))


def audit(i):
    keys = ",".join(sorted(lru.keys() & set(inv.keys())))
    if len(keys.split(",")) != N:
        bad.append(("view-and", keys))
    if len(ring) + len(heap) + len(srt) != 3 * N:
        bad.append(("lens",))
    if len(list(itertools.chain(ring, heap, srt))) != 3 * N:
        bad.append(("chain",))
    runs = [(k, len(list(v))) for k, v in itertools.groupby(sorted(ring))]
    if len(runs) != N:
        bad.append(("groupby", runs))
    head = list(itertools.islice(srt, 3))
    if head != sorted(srt)[:3]:
        bad.append(("islice", head))


CALLS = [counter_move, counter_arithmetic, ordered_dict, deque_shuffle, heap_cycle, insort,
         set_cycle, group_move, audit]


def main():
    for i in range(900):
        transaction.add(CALLS[i % len(CALLS)], i)
    transaction.run()
    audit(0)
    counter_arithmetic(0)
    if sum(inv.values()) != 120:
        bad.append(("final inv", sum(inv.values())))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
