"""docs/deployment.md's balancer configuration, run: nginx accepts it in its ``http {}`` context, and
it configures what the page says of it (WebSockets passed through, a refusing replica skipped and
nothing else retried, upstream connections kept alive), as the replicas scenario runs it.
(The page's ``docker`` commands need a Docker engine; tests/test_deployment.py checks the Dockerfile.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from docs_examples import DOCS, example
from reliability.balanced import Balancer

PAGE = "docs/deployment.md"

Directive = tuple[str, tuple[str, ...], list["Directive"] | None]
"""A directive's name, its arguments (quotes taken off) and its block's directives (None: no block)."""

TOKEN = re.compile(r"""#[^\n]*|'([^']*)'|"([^"]*)"|([{};])|([^\s{};'"#]+)""")


def _parse(text: str) -> list[Directive]:
    """nginx's configuration syntax, as far as the page's uses it: directives ending in ``;`` or a
    ``{ ... }`` block, quoted arguments, ``#`` comments."""
    stack: list[list[Directive]] = [[]]
    words: list[str] = []
    for match in TOKEN.finditer(text):
        single, double, punctuation, word = match.groups()
        if punctuation == "{":
            assert words, f"a block with no directive: {text[: match.end()]!r}"
            block: list[Directive] = []
            stack[-1].append((words[0], tuple(words[1:]), block))
            stack.append(block)
            words = []
        elif punctuation == "}":
            assert not words and len(stack) > 1, f"an unbalanced }}: {text[: match.end()]!r}"
            stack.pop()
        elif punctuation == ";":
            assert words, f"an empty directive: {text[: match.end()]!r}"
            stack[-1].append((words[0], tuple(words[1:]), None))
            words = []
        elif single is not None or double is not None or word is not None:
            words.append(next(w for w in (single, double, word) if w is not None))
    assert not words and len(stack) == 1, "the configuration ends inside a directive or a block"
    return stack[0]


def _one(directives: list[Directive], name: str, *args: str) -> Directive:
    """The one directive ``name`` (whose arguments begin with ``args``) of ``directives``."""
    found = [d for d in directives if d[0] == name and d[1][: len(args)] == args]
    assert len(found) == 1, f"{len(found)} {name} {' '.join(args)} among {[d[0] for d in directives]}"
    return found[0]


def _block(directives: list[Directive], name: str, *args: str) -> list[Directive]:
    block = _one(directives, name, *args)[2]
    assert block is not None, f"{name} {' '.join(args)} has no block"
    return block


def _settings(directives: list[Directive]) -> set[tuple[str, tuple[str, ...]]]:
    """The directives of a block without blocks of their own, as a set to compare."""
    return {(name, args) for name, args, block in directives if block is None}


def _snippet() -> str:
    return example(PAGE, "map $http_upgrade $connection_upgrade { default upgrade; '' ''; }")


def test_nginx_accepts_the_pages_balancer_configuration(tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        assert not os.environ.get("CI"), "CI installs nginx (.ci/run): the replicas scenario needs it"
        pytest.skip("nginx is not installed here (apt-get install nginx)")
    snippet = _snippet()
    if os.geteuid() != 0:  # `nginx -t` binds what it listens on, and only root may bind port 80
        assert "  listen 80;\n" in snippet, snippet
        snippet = snippet.replace("  listen 80;\n", "  listen 127.0.0.1:8080;\n")  # one in use would do
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        # As root, nginx hands its workers to `nobody`, who may not write the test's directory.
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"pid {tmp_path}/nginx.pid;\n"
        + f"error_log {tmp_path}/error.log warn;\n"
        + "events { worker_connections 64; }\n"
        + "http {\n"
        + f"  access_log {tmp_path}/access.log;\n"
        + "".join(f"  {kind}_temp_path {tmp_path}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        + snippet
        + "}\n",
        encoding="utf-8",
    )

    checked = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True, text=True, timeout=60)

    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr, checked.stderr


def test_the_configuration_is_what_the_page_says_it_is() -> None:
    parsed = _parse(_snippet())
    assert [(name, args) for name, args, _ in parsed] == [
        ("map", ("$http_upgrade", "$connection_upgrade")),
        ("upstream", ("decisiontrail",)),
        ("server", ()),
    ]
    # WebSockets (subscriptions): a request asking to upgrade is sent on with Connection: upgrade,
    # any other with no Connection header (not nginx's `close`), so its upstream connection is kept alive
    assert _settings(_block(parsed, "map")) == {("default", ("upgrade",)), ("", ("",))}
    upstream = _block(parsed, "upstream")
    servers = [args for name, args, _ in upstream if name == "server"]
    assert len(servers) >= 2, "a deployment's balancer names its replicas"
    assert _one(upstream, "keepalive")[1] == ("32",)
    location = _block(_block(parsed, "server"), "location", "/")
    assert _settings(location) >= {
        ("proxy_pass", ("http://decisiontrail",)),  # the upstream above
        ("proxy_http_version", ("1.1",)),  # what both keepalive and an upgrade need
        ("proxy_set_header", ("Upgrade", "$http_upgrade")),
        ("proxy_set_header", ("Connection", "$connection_upgrade")),
    }
    # a refusing replica is skipped; a request one took is never sent to another (no
    # non_idempotent, no http_502): the client retries with its idempotency key
    assert _one(location, "proxy_next_upstream")[1] == ("error", "timeout")
    text = (DOCS / "deployment.md").read_text(encoding="utf-8")
    for name in ("proxy_next_upstream", "proxy_read_timeout"):
        said = re.search(rf"^- `{name} ([^`]+)`:", text, re.MULTILINE)
        assert said is not None, f"the page no longer says what {name} does"
        assert _one(location, name)[1] == tuple(said.group(1).split()), name


def test_the_configuration_is_the_one_the_replicas_scenario_runs(tmp_path: Path) -> None:
    """The page says so: the same map, upstream and proxying, but for the addresses it listens on
    and sends to."""
    page = _parse(_snippet())
    ran = _block(_parse(Balancer(tmp_path, ["127.0.0.1:18001", "127.0.0.1:18002"]).config()), "http")

    def without(names: set[str], directives: list[Directive]) -> set[tuple[str, tuple[str, ...]]]:
        return {d for d in _settings(directives) if d[0] not in names}

    assert _settings(_block(page, "map")) == _settings(_block(ran, "map"))
    assert without({"server"}, _block(page, "upstream")) == without({"server"}, _block(ran, "upstream"))
    # each replica's server line: its address apart, the same options
    assert {args[1:] for name, args, _ in _block(page, "upstream") if name == "server"} == {
        args[1:] for name, args, _ in _block(ran, "upstream") if name == "server"
    }
    assert without({"listen"}, _block(page, "server")) == without({"listen"}, _block(ran, "server"))
    assert _settings(_block(_block(page, "server"), "location", "/")) == _settings(_block(_block(ran, "server"), "location", "/"))
