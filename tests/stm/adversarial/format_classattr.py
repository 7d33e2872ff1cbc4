"""``str.format`` reading a class-level attribute through an instance (``"{0.rate}"``).

Serial invariant: a call sets ``Plan.rate = i`` and ``Plan.label = "r%d" % i``
together, then formats ``"{0.rate}/{0.label}".format(p)``: it sees its
own values; readers format the same and always see a matching pair.

Attacks: ``"{0.rate}".format(p)`` looked ``rate`` up from C, past the
barriers: the class value live, without the call's own write or a version.
Now a format string whose fields reach into their values (``.name``,
``[key]``) is formatted by a ``string.Formatter`` that looks each field up
through the barriers (``specials._special_str_format``).
"""
import transaction

K = 2000
bad = []


class Plan:
    rate = 0
    label = "r0"


P = Plan()


def step(i):
    if i % 3 == 0:
        Plan.rate = i
        Plan.label = "r%d" % i
        text = "{0.rate}/{0.label}".format(P)
        if text != "%d/r%d" % (i, i):
            bad.append(("own", i, text))
    else:
        rate, label = "{0.rate}|{0.label}".format(P).split("|")
        if label != "r" + rate:
            bad.append(("torn", i, rate, label))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), sorted({b[0] for b in bad}), bad[:2])


main()
