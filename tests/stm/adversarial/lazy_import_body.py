"""One call imports a plugin module on first use; its body counts 5000 into a shared dict while other calls count too.

Serial invariant: COUNTS["n"] == 5000 + the other calls (3000), the plugin
registered once: each call runs alone, the import's body inside the call
that first imports it.

Attacks: a module body is plain code (only functions are instrumented); run
by a first import inside a section (or a coroutine step), it wrote in place,
without W, racing the other sections' commits: updates lost both ways
(red-team round 38, finding 2). The first import in a section is now
inevitable, every overlapping section aborting (``barriers.importing``).
"""
import transaction

from appstate import registry


def bump():
    registry.COUNTS["n"] += 1


def first_use():
    from appstate import plugin     # noqa: F401 - imported for its body


def main():
    for _ in range(1500):
        transaction.add(bump)
    transaction.add(first_use)
    for _ in range(1500):
        transaction.add(bump)
    transaction.run()
    if registry.COUNTS["n"] == 8000 and registry.PLUGINS == ["plugin"]:
        print("OK", registry.COUNTS, registry.PLUGINS)
    else:
        print("BAD", registry.COUNTS, registry.PLUGINS)


main()
