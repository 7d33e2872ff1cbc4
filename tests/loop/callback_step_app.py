"""``async def`` handlers whose steps call application code back from C.

Each handler reads shared state, then has C code call the application
(``sorted``'s and ``list.sort``'s ``key=``, an f-string calling a
``__str__``), then writes what it read, with no ``await`` in between: one
coroutine step, which holds W from its first shared access to its end. In a
serial run no update is lost and no sort sees its list change under it.
"""

import tornado.web

TOTAL = {"n": 0}
ROWS = [(i, (i * 7) % 5) for i in range(4)]
#: Sorted in place by every /sort request, with the values it appended.
BOARD = [5, 3, 8, 1]


class Label:
    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text.upper()


LABEL = Label("hits")


class Ping(tornado.web.RequestHandler):
    def get(self):
        self.write("pong")


class BumpAroundKey(tornado.web.RequestHandler):
    async def post(self):
        seen = TOTAL["n"]
        order = sorted(ROWS, key=lambda row: row[1])
        TOTAL["n"] = seen + 1 + 0 * len(order)


class BumpAroundStr(tornado.web.RequestHandler):
    async def post(self):
        seen = TOTAL["n"]
        shown = f"{LABEL}"
        TOTAL["n"] = seen + 1 + 0 * len(shown)


class SortInPlace(tornado.web.RequestHandler):
    async def post(self):
        value = int(self.get_argument("value"))
        BOARD.append(value)
        BOARD.sort(key=lambda item: -item)
        self.write({"length": len(BOARD)})


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"n": TOTAL["n"], "board": BOARD})


def make_app():
    return tornado.web.Application([
        (r"/ping", Ping), (r"/bump-key", BumpAroundKey), (r"/bump-str", BumpAroundStr),
        (r"/sort", SortInPlace), (r"/state", State)])
