"""Seat booking, written the ordinary single-threaded Tornado way: shared dicts, no locks.

Booking a seat reads the free seats, does a little work (a receipt), then
writes the booking: correct on one thread, a textbook lost update on
several. The stress test serves it with ``tornado-stm serve`` and checks
that the final state is exactly what the successful answers imply.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Optional

import tornado.web

CAPACITY = 120

#: seat number -> holder
SEATS: dict[int, str] = {}
STATS = {"booked": 0, "refused": 0, "forms": 0, "confirmed": 0}


def first_free_seat() -> Optional[int]:
    for seat in range(CAPACITY):
        if seat not in SEATS:
            return seat
    return None


def make_receipt(seat: int, holder: str) -> str:
    digest = f"{seat}:{holder}".encode()
    for _ in range(300):  # the work between the check and the write
        digest = hashlib.sha256(digest).digest()
    return digest.hex()[:16]


def book(holder: str) -> Optional[tuple[int, str]]:
    """Book the first free seat for ``holder``: (seat, receipt), or None when sold out."""
    seat = first_free_seat()
    if seat is None:
        STATS["refused"] += 1
        return None
    receipt = make_receipt(seat, holder)
    SEATS[seat] = holder
    STATS["booked"] += 1
    return seat, receipt


class BookHandler(tornado.web.RequestHandler):
    def post(self) -> None:
        holder = self.get_argument("holder")
        booking = book(holder)
        if booking is None:
            self.set_status(409)
            self.write({"error": "sold out"})
            return
        if self.get_argument("fail", None):
            raise RuntimeError("the handler fails after booking")
        seat, receipt = booking
        self.write({"seat": seat, "holder": holder, "receipt": receipt})


class BookOrRaiseHandler(tornado.web.RequestHandler):
    """The same booking, refused the other common way: an ``HTTPError``
    with a message for the log (Tornado logs it as a warning)."""

    def post(self) -> None:
        holder = self.get_argument("holder")
        booking = book(holder)
        if booking is None:
            raise tornado.web.HTTPError(409, "no seat for %s", holder)
        seat, receipt = booking
        self.write({"seat": seat, "holder": holder, "receipt": receipt})


class AsyncBookHandler(BookHandler):
    """The same booking from an ``async def`` handler: it waits a moment first."""

    async def post(self) -> None:
        await asyncio.sleep(0.001)
        BookHandler.post(self)


class FormHandler(tornado.web.RequestHandler):
    """A booking form protected the Tornado way: ``xsrf_form_html()`` in the
    page sets the token's cookie, and the post checks it."""

    def get(self) -> None:
        STATS["forms"] += 1
        self.set_header("X-Xsrf-Token", self.xsrf_token)
        self.write(f"<form method=post>{self.xsrf_form_html()}</form>")

    def post(self) -> None:
        self.check_xsrf_cookie()
        STATS["confirmed"] += 1
        self.write({"confirmed": STATS["confirmed"]})


class StateHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({"seats": {str(seat): holder for seat, holder in SEATS.items()}, **STATS})


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/book", BookHandler), (r"/abook", AsyncBookHandler),
                                    (r"/book-or-raise", BookOrRaiseHandler),
                                    (r"/form", FormHandler),
                                    (r"/state", StateHandler)])
