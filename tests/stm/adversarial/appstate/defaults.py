"""Default values that a corpus program takes with ``from appstate.defaults import *``."""

hits = 0
