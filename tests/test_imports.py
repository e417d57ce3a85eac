"""Imports point one way: the pure rooms (domain/, checks/, analytics/, exports/) load no database driver, no GraphQL, no storage.

Each check imports the room in a fresh interpreter and lists what came with it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("neo4j", "strawberry", "starlette", "langgraph", "decisiontrail.graphdb", "decisiontrail.services")


@pytest.mark.parametrize(
    "room", ["decisiontrail.domain", "decisiontrail.checks", "decisiontrail.analytics", "decisiontrail.exports"]
)
def test_a_pure_room_loads_no_io(room: str) -> None:
    script = f"import sys, json, {room}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)
    wrong = sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))
    assert wrong == [], f"importing {room} loads {wrong}"
