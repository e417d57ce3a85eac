"""The wheel carries what the package loads at run time: its queries and the launcher sources."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import decisiontrail.cypher as cypher

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_every_query_and_the_launcher(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
    )
    (wheel,) = tmp_path.glob("decisiontrail-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())

    for query in cypher.QUERIES:
        assert f"decisiontrail/cypher/{query}.cypher" in names
    assert "decisiontrail/graphdb/launcher/pom.xml" in names
    assert "decisiontrail/graphdb/launcher/src/main/java/org/decisiontrail/launcher/EmbeddedNeo4j.java" in names
    assert "decisiontrail/py.typed" in names
