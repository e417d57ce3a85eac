"""docs/deployment.md's recipe, as far as this machine can check it without a Docker engine: the
Dockerfile copies files that exist and are not left out of its context, runs a command the CLI
accepts; the balancer's configuration the replicas scenario runs is one nginx accepts; and the page
names every setting a replica reads."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from decisiontrail.cli import build_parser
from reliability.balanced import Balancer

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
PAGE = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")


def _ignored(path: str) -> bool:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    parts = Path(path).parts
    return any(
        fnmatch.fnmatch(path, p)
        or fnmatch.fnmatch(path, p.removeprefix("**/"))
        or parts[0] == p
        or p.removeprefix("**/") in parts
        for p in patterns
    )


def test_every_file_the_dockerfile_copies_is_in_its_context() -> None:
    copies = [line.split()[1:-1] for line in DOCKERFILE.splitlines() if line.startswith("COPY ") and "--from=" not in line]
    sources = [s for sources in copies for s in sources]
    assert "pyproject.toml" in sources and "src/" in sources, copies
    for source in sources:
        assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which the repository does not hold"
        assert not _ignored(source.rstrip("/")), f"the Dockerfile copies {source}, which .dockerignore leaves out"
    # what the image's install needs: the package's sources, not the tests or the docs
    assert _ignored("tests") and _ignored("explorer/node_modules") and not _ignored("src/decisiontrail/api.py")


def test_the_images_command_is_one_the_cli_accepts() -> None:
    entrypoint = re.search(r'^ENTRYPOINT \["(\w+)"\]$', DOCKERFILE, re.MULTILINE)
    command = re.search(r"^CMD (\[.*\])$", DOCKERFILE, re.MULTILINE)
    assert entrypoint is not None and entrypoint.group(1) == "decisiontrail"
    assert command is not None
    args = build_parser().parse_args(json.loads(command.group(1)))  # the exec form: a JSON array
    assert (args.command, args.host, args.port, args.access_log) == ("serve", "0.0.0.0", 8000, False)


def test_the_balancer_configuration_is_one_nginx_accepts(tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        assert not os.environ.get("CI"), "CI installs nginx (.ci/run): the replicas scenario needs it"
        pytest.skip("nginx is not installed here (apt-get install nginx)")
    balancer = Balancer(tmp_path, ["127.0.0.1:18001", "127.0.0.1:18002"])
    balancer.dir.mkdir(parents=True)
    conf = balancer.dir / "nginx.conf"
    conf.write_text(balancer.config(), encoding="utf-8")

    checked = subprocess.run([nginx, "-t", "-p", str(balancer.dir), "-c", str(conf)], capture_output=True, text=True)

    assert checked.returncode == 0, checked.stderr
    # the page shows the same upstream and proxy settings the scenario runs
    for line in ("proxy_next_upstream error timeout;", "proxy_set_header Connection $connection_upgrade;", "keepalive 32;"):
        assert line in balancer.config() and line in PAGE, line


def test_the_page_names_every_setting_a_replica_reads() -> None:
    read = set()
    for source in (ROOT / "src" / "decisiontrail").rglob("*.py"):
        read |= set(re.findall(r'"((?:DECISIONTRAIL|NEO4J)_[A-Z_]+)"', source.read_text(encoding="utf-8")))
    # the embedded Neo4j's own (a deployment has none), the scripted model's pace (tests and demos),
    # and an error code that looks like one
    local = {"DECISIONTRAIL_CACHE_DIR", "DECISIONTRAIL_DATA_DIR", "DECISIONTRAIL_SCRIPTED_PACE", "DECISIONTRAIL_ERROR"}
    named = set(re.findall(r"(?:DECISIONTRAIL|NEO4J)_[A-Z_]+", PAGE))
    prefixes = {n.removesuffix("_") for n in named if n.endswith("_")}
    missing = sorted(s for s in read - local - named if not any(s.startswith(p) for p in prefixes))
    assert not missing, f"docs/deployment.md does not say what a deployment gives {missing}"
