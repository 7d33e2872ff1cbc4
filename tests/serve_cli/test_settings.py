"""serve's settings: logging, the environment and --env-file, --version, --help; packaging."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.serve_cli.helpers import ROOT, env, get, run_serve, start

# Tornado's LogFormatter: [I 250101 12:00:00 web:2400] 200 GET / (127.0.0.1) 0.52ms
ACCESS_LINE = re.compile(r"^\[I \d{6} \d\d:\d\d:\d\d web:\d+\] 200 GET /who \(127\.0\.0\.1\) "
                         r"[\d.]+ms$", re.MULTILINE)


def served_output(tmp_path, *options: str, environment=None, paths=("/who",)) -> str:
    served = start(str(tmp_path / "out"), "shapes_app:app", "--port", "0", *options,
                   environment=environment)
    try:
        for path in paths:
            assert get(served.urls[0], path)[0] in (200, 404)
    finally:
        assert served.stop() == 0, served.output()
    return served.output()


def test_access_log_in_tornado_format_by_default(tmp_path) -> None:
    assert ACCESS_LINE.search(served_output(tmp_path))


def test_no_access_log_keeps_the_warnings(tmp_path) -> None:
    output = served_output(tmp_path, "--no-access-log", paths=("/who", "/missing"))
    assert not ACCESS_LINE.search(output)
    assert re.search(r"^\[W .*\] 404 GET /missing", output, re.MULTILINE), output


def test_log_level_warning_hides_info(tmp_path) -> None:
    output = served_output(tmp_path, "--log-level", "warning")
    assert "[I " not in output


def test_log_level_holds_for_an_app_that_parses_tornado_options(tmp_path) -> None:
    """parse_command_line() reset the root logger to its own --logging default
    (info), so --log-level warning showed the access lines again."""
    served = start(str(tmp_path / "out"), "shapes_app:make_app_with_options", "--port", "0",
                   "--log-level", "warning")
    try:
        assert get(served.urls[0], "/who")[0] == 200
    finally:
        assert served.stop() == 0, served.output()
    assert not ACCESS_LINE.search(served.output()), served.output()
    # The application's own --logging, given after --, is still its choice.
    served = start(str(tmp_path / "own"), "shapes_app:make_app_with_options", "--port", "0",
                   "--log-level", "warning", "--", "--logging=info")
    try:
        assert get(served.urls[0], "/who")[0] == 200
    finally:
        assert served.stop() == 0, served.output()
    assert ACCESS_LINE.search(served.output()), served.output()


def test_environment_sets_options_and_the_command_line_wins(tmp_path) -> None:
    environment = env(TORNADO_STM_THREADS="3", TORNADO_STM_ACCESS_LOG="off",
                      TORNADO_STM_HOST="127.0.0.1")
    output = served_output(tmp_path, environment=environment)
    assert "threads: 3," in output and not ACCESS_LINE.search(output)
    output = served_output(tmp_path, "--threads", "2", environment=environment)
    assert "threads: 2," in output


def test_env_file_feeds_options_and_the_application(tmp_path) -> None:
    env_file = tmp_path / "serve.env"
    env_file.write_text("# settings\nexport TORNADO_STM_THREADS=3\n"
                        "SHAPES_APP_COLOUR='dark blue'  # the app reads it\n"
                        "TORNADO_STM_LOG_LEVEL=warning\n")
    # The environment wins over the file.
    environment = env(TORNADO_STM_LOG_LEVEL="info")
    served = start(str(tmp_path / "out"), "shapes_app:app", "--port", "0",
                   "--env-file", str(env_file), environment=environment)
    try:
        status, body = get(served.urls[0], "/")
    finally:
        assert served.stop() == 0, served.output()
    assert json.loads(body)["env"] == "dark blue"
    assert "threads: 3," in served.output()
    assert ACCESS_LINE.search(served.output()) is None  # "/" is not /who; the level is info
    assert "[I " in served.output()


@pytest.mark.parametrize("variables,fragments", [
    ({"TORNADO_STM_PORT": "70001"}, ["TORNADO_STM_PORT='70001'", "--port",
                                     "not a port number"]),
    ({"TORNADO_STM_THREADS": "lots"}, ["TORNADO_STM_THREADS='lots'", "not a whole number"]),
    ({"TORNADO_STM_LOG_LEVEL": "loud"}, ["TORNADO_STM_LOG_LEVEL='loud'", "not one of"]),
    ({"TORNADO_STM_RELOAD": "maybe"}, ["TORNADO_STM_RELOAD='maybe'", "1/true/yes/on"]),
])
def test_bad_environment_is_one_line_naming_the_variable(variables, fragments) -> None:
    result = run_serve("shapes_app:app", environment=env(**variables))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_bad_env_file_is_one_line(tmp_path) -> None:
    result = run_serve("shapes_app:app", "--env-file", str(tmp_path / "missing.env"))
    assert result.returncode == 2 and "--env-file" in result.stderr
    assert "missing.env: No such file or directory" in result.stderr
    broken = tmp_path / "broken.env"
    broken.write_text("GOOD=1\njust words\n")
    result = run_serve("shapes_app:app", "--env-file", str(broken))
    assert result.returncode == 2 and "line 2: 'just words' is not KEY=VALUE" in result.stderr


def test_help_lists_the_environment() -> None:
    result = run_serve("--help")
    assert result.returncode == 0
    for text in ("TORNADO_STM_THREADS", "TORNADO_STM_PORT", "TORNADO_STM_HOST", "--env-file",
                 "--host", "--bind", "--fd", "--certfile", "--keyfile", "--proxy-headers",
                 "--forwarded-allow-ips", "--log-level", "--access-log", "--no-access-log",
                 "--reload", "--version"):
        assert text in result.stdout, text
    # Which of two log levels wins is said where the option is.
    assert "its own '-- --logging=LEVEL' wins" in " ".join(result.stdout.split())


@pytest.mark.parametrize("command", [
    ["-m", "tornado_stm", "--version"], ["-m", "tornado_stm", "serve", "--version"],
    ["-m", "tornado_stm", "exec", "--version"], ["-m", "tornado_stm", "info", "--version"],
    ["-m", "stmlog_tools", "--version"], ["-m", "stmlog_tools", "report", "--version"],
    ["-m", "stmlog_tools", "dump", "--version"], ["-m", "stmlog_tools", "timeline", "--version"],
    ["-m", "stmlog_tools", "trace", "--version"],
])
def test_version_on_every_command(command) -> None:
    result = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert re.match(r"(tornado-stm|stmlog) \d+\.\d+", result.stdout), result.stdout


def test_demo_apps_and_test_tooling_are_not_packaged() -> None:
    """``pip install .`` must not put top-level ``apps``, ``bench`` or ``testsupport`` packages
    into site-packages: they are used from the checkout."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as stream:
        project = tomllib.load(stream)
    setuptools_config = project["tool"]["setuptools"]
    include = setuptools_config["packages"]["find"]["include"]
    packaged = [name for name in ("apps", "apps.static", "bench", "testsupport",
                                  "tornado_stm", "stmlog_tools")
                if any(fnmatch.fnmatchcase(name, pattern) for pattern in include)]
    assert packaged == ["tornado_stm", "stmlog_tools"]
    assert "apps" not in setuptools_config.get("package-data", {})
