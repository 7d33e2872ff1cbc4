"""Minimal: a module whose class has a property 'hits' (setter writes _hits).
Serial invariant: after N sections doing modprop.hits += 1, modprop.hits == N.
Red-team round 18: BAD on every run. A property of a module's own class
answers before the namespace (barriers._module_class_answers).
Attacks: module attribute barriers that read and write the namespace,
past a property of the module's own class.
"""
import sys
import transaction
from appstate import modprop

N = 10


def step(i):
    modprop.hits += 1


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    print("dict has hits:", "hits" in vars(modprop), vars(modprop).get("hits"), "_hits", modprop._hits)
    if modprop.hits != N:
        print("BAD", modprop.hits); sys.exit(1)
    print("OK", modprop.hits)


main()
