"""Caller introspection from application helpers: f_back, sys._getframe(1),
inspect.stack()[1], logging's %(funcName)s / %(filename)s, traceback.format_stack.
Serial invariant (plain Python): every helper names its caller 'step' in this file.
Attacks: engine frames seen by caller introspection: frame.f_back of an
application frame under the pure-Python barriers (fault injection) was the
call barrier's frame (barriers.get_attr now skips the engine's frames).
Red-team round 18.
"""
import sys, inspect, logging, traceback, io, os
import transaction

BAD = []
STREAM = io.StringIO()
LOG = logging.getLogger("r18")
h = logging.StreamHandler(STREAM)
h.setFormatter(logging.Formatter("%(funcName)s|%(filename)s"))
LOG.addHandler(h)
LOG.setLevel(logging.INFO)
LOG.propagate = False
ME = os.path.basename(__file__)


def helper(i):
    names = [sys._getframe().f_back.f_code.co_name,
             sys._getframe(1).f_code.co_name,
             inspect.stack()[1].function,
             inspect.currentframe().f_back.f_code.co_name,
             traceback.extract_stack()[-2].name,
             traceback.format_stack()[-2].split(", in ")[1].split()[0]]
    if any(n != "step" for n in names):
        BAD.append((i, names))


def logs(i):
    LOG.info("x")


def step(i):
    helper(i)
    LOG.info("x")


def main():
    for i in range(20):
        transaction.add(step, i)
    transaction.run()
    lines = set(STREAM.getvalue().splitlines())
    if BAD or lines != {"step|" + ME}:
        print("BAD", BAD[:2], lines); sys.exit(1)
    print("OK", lines)


main()
