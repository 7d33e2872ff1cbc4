"""The application a user serves (``server:app``); its handlers live in ``cpu``."""

from cpu import make_app

app = make_app()
