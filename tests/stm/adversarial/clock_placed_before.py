"""Calls stamp a board's cells with ``time.monotonic_ns()``; each reads another cell first.

Serial invariant: calls run one after another and the clock never goes
back. So a call that read a cell saw the latest stamp written to it before
its own reading (the calls stamped earlier ran before it, those stamped
later after it), and each cell ends holding the highest stamp ever
written to it (its last writer read the clock last).

Attacks: a section overtaken by a later clock reader's commit goes before
it in the serial order when the two are independent
(txn.place_before_later_readers). The calls write other keys of one plain
dict (the writes that commute), read keys others write, and compute for
varying times, so overtakings are frequent and their placement is right
only if every read and write after the place is checked: a section placed
before one that read its cell makes that reader see an older stamp than a
serial run would show it, or leaves a lower stamp last in the cell.
"""
import time
import transaction

K = 3000
CELLS = 8
BOARD = {cell: (0, -1) for cell in range(CELLS)}       # cell -> (stamp, call)
RECORDS = {call: None for call in range(K)}            # filled in place: no key added


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def step(call):
    stamp = time.monotonic_ns()
    seen = BOARD[(call * 5 + 3) % CELLS]
    spin(200 + (call * 37) % 900)
    BOARD[call % CELLS] = (stamp, call)
    RECORDS[call] = (stamp, seen)


def main():
    for call in range(K):
        transaction.add(step, call)
    transaction.run()
    stamps = {call: record[0] for call, record in RECORDS.items() if record is not None}
    saw_later = [call for call, (stamp, (seen_stamp, writer)) in RECORDS.items()
                 if writer >= 0 and (seen_stamp != stamps[writer] or seen_stamp > stamp)]
    not_last = [cell for cell, (stamp, writer) in BOARD.items()
                if stamp != max(stamps[c] for c in stamps if c % CELLS == cell)]
    # What a call read is the latest write to that cell stamped before it
    # (those stamped before it ran before it), unless a stamp ties.
    by_cell = {cell: [stamps[c] for c in stamps if c % CELLS == cell] for cell in range(CELLS)}
    stale = []
    for call, (stamp, (seen_stamp, writer)) in RECORDS.items():
        written = by_cell[(call * 5 + 3) % CELLS]
        if stamp in written:
            continue
        if seen_stamp != max((s for s in written if s < stamp), default=0):
            stale.append(call)
    if len(stamps) == K and not saw_later and not not_last and not stale:
        print("OK", K, "calls, every stamp read was the latest earlier one, every cell holds its last")
    else:
        print("BAD", len(stamps), "recorded;", len(saw_later), "saw a later stamp;",
              len(stale), "missed an earlier write;", len(not_last), "cells not holding their highest")


main()
