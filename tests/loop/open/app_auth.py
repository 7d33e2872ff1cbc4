"""@tornado.web.authenticated: get_current_user() and get() see the same session in stock Tornado."""
import tornado.web

SESSIONS = {}
STATS = {"me": 0, "login": 0, "logout": 0}


class Base(tornado.web.RequestHandler):
    def get_current_user(self):
        s = SESSIONS.get(self.get_argument("t"))
        return s["user"] if s else None


class Login(Base):
    def get(self):
        SESSIONS[self.get_argument("t")] = {"user": "u" + self.get_argument("t"), "n": 0}
        STATS["login"] += 1
        self.write("in")


class Logout(Base):
    def get(self):
        SESSIONS.pop(self.get_argument("t"), None)
        STATS["logout"] += 1
        self.write("out")


class Me(Base):
    @tornado.web.authenticated
    def get(self):
        s = SESSIONS[self.get_argument("t")]     # current_user said it exists
        s["n"] += 1
        STATS["me"] += 1
        self.write(f"{self.current_user}:{s['n']}")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({**STATS, "sessions": len(SESSIONS)})


def make_app():
    return tornado.web.Application([(r"/login", Login), (r"/logout", Logout), (r"/me", Me),
                                    (r"/state", State)], login_url="/login")
