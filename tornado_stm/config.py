"""Where ``tornado-stm serve`` takes its settings from, besides the command line.

Every option listed in :data:`SERVE_ENVIRONMENT` can also come from an
environment variable (``--threads`` from ``TORNADO_STM_THREADS``...), and
``--env-file FILE`` reads ``KEY=VALUE`` lines into the environment first,
as uvicorn does: the file sets what the environment does not (so the
application sees its variables too), the environment what the command
line does not. A value from the environment is checked by the option's
own parser; a bad one is one line naming the variable, and exit 2.

How "given on the command line" is told apart from "left at its default":
:func:`use_environment` replaces the option's default by a marker
(:class:`_Unset`, or :class:`_UnsetList` for repeatable options), which
argparse leaves in place when the option is absent; :func:`resolve` then
puts the environment's value, or the real default, in its place.

``configure_logging`` sets up logging in Tornado's usual format
(``tornado.log.LogFormatter``: ``[I 250101 12:00:00 web:2400] 200 GET /
(127.0.0.1) 0.52ms``), with the access log on or off.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)

#: serve's options that the environment can set: option dest -> variable.
SERVE_ENVIRONMENT: dict[str, str] = {
    "host": "TORNADO_STM_HOST",
    "port": "TORNADO_STM_PORT",
    "bind": "TORNADO_STM_BIND",
    "fd": "TORNADO_STM_FD",
    "threads": "TORNADO_STM_THREADS",
    "instrument": "TORNADO_STM_INSTRUMENT",
    "certfile": "TORNADO_STM_CERTFILE",
    "keyfile": "TORNADO_STM_KEYFILE",
    "proxy_headers": "TORNADO_STM_PROXY_HEADERS",
    "forwarded_allow_ips": "TORNADO_STM_FORWARDED_ALLOW_IPS",
    "log_level": "TORNADO_STM_LOG_LEVEL",
    "access_log": "TORNADO_STM_ACCESS_LOG",
    "reload": "TORNADO_STM_RELOAD",
    "shutdown_timeout": "TORNADO_STM_SHUTDOWN_TIMEOUT",
}

ENV_FILE_VARIABLE = "TORNADO_STM_ENV_FILE"

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigError(Exception):
    """A bad setting; the message is the one line the user sees."""


class _Unset:
    """The default of an option the environment may set, until :func:`resolve`."""

    def __init__(self, default: Any) -> None:
        self.default = default

    def __repr__(self) -> str:
        return repr(self.default)


class _UnsetList(list):
    """The same for a repeatable (``append``) option.

    argparse copies the default before appending the first value given on
    the command line; the copy is a plain empty list, so that command-line
    values replace the environment's instead of adding to them.
    """

    def __init__(self, default: Optional[list]) -> None:
        super().__init__()
        self.default = default

    def __copy__(self) -> list:
        return []


@dataclass
class _Spec:
    """What :func:`resolve` needs to know about the options of one parser."""

    variables: dict[str, str]
    actions: dict[str, argparse.Action]


def use_environment(parser: argparse.ArgumentParser, variables: dict[str, str]) -> None:
    """Let the environment (and ``--env-file``) set these options of ``parser``.

    Adds ``--env-file`` and lists the variables at the end of ``--help``.
    Call it after every option has been added; :func:`resolve` must then be
    called on the parsed arguments before they are used.
    """
    parser.add_argument("--env-file", metavar="FILE", default=None,
                        help="read KEY=VALUE lines (as a .env file) into the environment "
                        "first, without overriding variables already set: both the "
                        f"TORNADO_STM_* settings below and the application see them "
                        f"(also ${ENV_FILE_VARIABLE})")
    actions = {action.dest: action for action in parser._actions if action.dest in variables}
    missing = set(variables) - set(actions)
    if missing:
        raise ValueError(f"no option for {sorted(missing)}")
    for dest, action in actions.items():
        if isinstance(action, argparse._AppendAction):
            action.default = _UnsetList(action.default)
        else:
            action.default = _Unset(action.default)
    parser.set_defaults(_environment=_Spec(dict(variables), actions))
    lines = ["environment (the command line wins over it; --env-file fills in what it "
             "does not set):"]
    for dest, variable in variables.items():
        option = actions[dest].option_strings[0]
        lines.append(f"  {variable:34} {option}")
    parser.epilog = "\n".join(lines)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def resolve(args: argparse.Namespace) -> set[str]:
    """Fill in the options not given on the command line; the set of options given.

    "Given" means on the command line or by the environment: the caller
    uses it to warn about options that do not apply.
    """
    spec: _Spec = args._environment
    env_file = args.env_file or os.environ.get(ENV_FILE_VARIABLE)
    if env_file:
        load_env_file(env_file)
    given: set[str] = set()
    for dest, action in spec.actions.items():
        value = getattr(args, dest)
        if not isinstance(value, (_Unset, _UnsetList)):
            given.add(dest)
            continue
        variable = spec.variables[dest]
        text = os.environ.get(variable)
        if text is None:
            default = value.default
            if isinstance(default, str) and action.type is not None:
                default = action.type(default)   # as argparse does with a string default
            setattr(args, dest, default)
            continue
        setattr(args, dest, _from_text(action, variable, text))
        given.add(dest)
    return given


def _from_text(action: argparse.Action, variable: str, text: str) -> Any:
    """Parse an environment variable as the option would parse its argument."""
    option = action.option_strings[0]

    def fail(problem: str) -> ConfigError:
        return ConfigError(f"environment variable {variable}={text!r} (for {option}): {problem}")

    if action.nargs == 0:   # a flag: --reload, --proxy-headers, --access-log/--no-access-log
        word = text.strip().lower()
        if word not in _TRUE | _FALSE:
            raise fail("not one of 1/true/yes/on or 0/false/no/off")
        on = word in _TRUE
        return (not on) if isinstance(action, argparse._StoreFalseAction) else on
    convert: Callable[[str], Any] = action.type or (lambda item: item)

    def one(item: str) -> Any:
        try:
            value = convert(item)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise fail(str(exc) or "invalid value") from None
        if action.choices is not None and value not in action.choices:
            raise fail(f"not one of {', '.join(map(str, action.choices))}")
        return value

    if isinstance(action, argparse._AppendAction):
        # Several values: separated by commas or spaces ("127.0.0.1,::1").
        return [one(item) for item in text.replace(",", " ").split()]
    return one(text.strip())


def load_env_file(path: str) -> list[str]:
    """Read ``KEY=VALUE`` lines into ``os.environ`` (existing variables win); the keys set.

    The usual .env syntax: blank lines and ``#`` comments are skipped, an
    ``export`` prefix is allowed, values may be quoted (shell rules).
    """
    try:
        with open(path, encoding="utf-8") as stream:
            lines = stream.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"--env-file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--env-file {path}: not UTF-8 text") from None
    set_here: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise ConfigError(f"--env-file {path}, line {number}: {raw.strip()!r} is not "
                              "KEY=VALUE")
        try:
            words = shlex.split(value, comments=True)
        except ValueError as exc:
            raise ConfigError(f"--env-file {path}, line {number}: {exc}") from None
        if key not in os.environ:
            os.environ[key] = " ".join(words)
            set_here.append(key)
    logger.debug("--env-file %s set %s", path, ", ".join(set_here) or "nothing")
    return set_here


def log_level(text: str) -> str:
    """The argparse type of ``--log-level``."""
    word = text.strip().lower()
    if word not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(LOG_LEVELS)}")
    return word


def configure_logging(level: str, access_log: bool, for_tornado_options: bool = False) -> None:
    """Log to stderr in Tornado's usual format, at ``level``.

    With ``access_log`` every request is one ``tornado.access`` line, as a
    Tornado app that calls ``parse_command_line()`` logs them; without, only
    the 4xx (warning) and 5xx (error) answers are.

    With ``for_tornado_options`` (``--log-level`` was given), ``level`` also
    becomes the default of ``tornado.options``' ``--logging``: an
    application calling ``parse_command_line()`` sets the root logger's
    level from it, and would otherwise reset it to its own default (info).
    An application given ``-- --logging=LEVEL`` still gets its own choice.
    """
    import tornado.log
    import tornado.options

    if for_tornado_options:
        tornado.options.options.logging = level

    handler = logging.StreamHandler()
    handler.setFormatter(tornado.log.LogFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):   # the plain one tornado-stm's main() set up
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    access = logging.getLogger("tornado.access")
    access.setLevel(logging.NOTSET if access_log else logging.WARNING)
