"""The bench's offline rows compare what ``export --all`` wrote with the database, decision by
decision, at every size: the first run's document read back as a stream (``bench.exports``), every
other run's the same byte for byte. A comparison that cannot fail proves nothing, so each kind of
difference is planted in a real export here and must be named."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from bench import offline_rows
from bench import exports as exports_module
from bench.exports import Compared, Exports, compare_graphml, sha256_of
from bench.workload import WorkloadSpec, load
from decisiontrail.exports import ExportFormat
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, analysis
from decisiontrail.services.correction import correct
from decisiontrail.access import LOCAL

SMALL = WorkloadSpec(hierarchies=3, depth=1, fan_out=2, decisions_per_plan=12, depends_on_density=0.3, superseded_share=0.2)


@pytest.fixture
def exported(graph: Graph, store: Trail, tmp_path: Path) -> tuple[Path, int]:
    """``export --all`` of a small workload and one correction made through the service (its
    correction decision, CORRECTS edge and attempt node): the document and how many decisions are stored."""
    loaded = load(graph, SMALL)
    current = graph.driver.execute_query(
        "MATCH (d:Decision {decision_type: 'strategy_choice'}) WHERE d.superseded_at IS NULL "
        "RETURN d.decision_id AS id ORDER BY id LIMIT 1",
        database_=graph.database,
    ).records[0]["id"]
    correct(store, current, "revert", "another way", "the bench's export test", principal=LOCAL)
    path = tmp_path / "all.graphml"
    path.write_text(
        "".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.GRAPHML, principal=LOCAL)), encoding="utf-8"
    )
    stored = graph.driver.execute_query("MATCH (d:Decision) RETURN count(d) AS n", database_=graph.database).records[0]["n"]
    assert stored == loaded.decisions + 1
    return path, stored


def test_an_export_read_back_matches_every_stored_decision(graph: Graph, exported: tuple[Path, int]) -> None:
    path, stored = exported

    compared = compare_graphml(graph, path)

    assert compared.decisions == stored
    assert len(compared.sha256) == 64


def _planted(path: Path, change: "re.Pattern[str]", to: str) -> None:
    text = path.read_text(encoding="utf-8")
    changed, n = change.subn(to, text, count=1)
    assert n == 1, change.pattern
    path.write_text(changed, encoding="utf-8")


def test_a_property_exported_wrong_is_named(graph: Graph, exported: tuple[Path, int]) -> None:
    path, _ = exported
    _planted(path, re.compile(r'(<data key="n\.question">)[^<]*'), r"\1which way, really?")

    with pytest.raises(RuntimeError, match=r"decision \w+: question is '.*' stored, 'which way, really\?' exported"):
        compare_graphml(graph, path)


def test_an_edge_left_out_is_named(graph: Graph, exported: tuple[Path, int]) -> None:
    path, _ = exported
    _planted(path, re.compile(r'<edge source="[^"]+" target="[^"]+"><data key="e\.type">DEPENDS_ON</data>.*?</edge>\n'), "")

    with pytest.raises(RuntimeError, match=r"decision \w+: edges \[\"\('DEPENDS_ON', '\w+', \d+\)\"\] differ"):
        compare_graphml(graph, path)


def _first_decision(text: str) -> tuple[str, str]:
    """The first decision node's line in an exported document, and its id."""
    node = re.search(r'<node id="(\w+)"><data key="n\.kind">Decision</data>.*?</node>\n', text)
    assert node is not None
    return node.group(0), node.group(1)


def test_a_decision_left_out_is_named(graph: Graph, exported: tuple[Path, int]) -> None:
    path, _ = exported
    # A decision without its edges: the document stays well formed, one stored decision is missing.
    text = path.read_text(encoding="utf-8")
    node, decision_id = _first_decision(text)
    text = text.replace(node, "")
    text = re.sub(rf'<edge source="{decision_id}" [^\n]*\n', "", text)
    path.write_text(text, encoding="utf-8")

    with pytest.raises(RuntimeError, match=rf"decision {decision_id} is stored but not exported"):
        compare_graphml(graph, path)


def test_a_decision_the_database_does_not_hold_is_named(graph: Graph, exported: tuple[Path, int]) -> None:
    path, _ = exported
    node, decision_id = _first_decision(path.read_text(encoding="utf-8"))
    _planted(path, re.compile(re.escape(node)), node + node.replace(decision_id, "01KZZZZZZZZZZZZZZZZZZZZZZZ"))

    with pytest.raises(RuntimeError, match="decision 01KZZZZZZZZZZZZZZZZZZZZZZZ is exported but not stored"):
        compare_graphml(graph, path)


def test_a_later_run_is_held_to_the_first_byte_for_byte(graph: Graph, exported: tuple[Path, int], tmp_path: Path) -> None:
    path, _ = exported
    exports = Exports(graph, tmp_path, progress=lambda _: None)
    document = path.read_bytes()
    exports.path().write_bytes(document)
    exports.check(exports.path())  # the first: compared in full
    exports.path().write_bytes(document)
    exports.check(exports.path())  # the same document

    exports.path().write_bytes(document.replace(b"</graphml>", b"</graphml>\n"))
    with pytest.raises(RuntimeError, match="export run 3 wrote another document than the first"):
        exports.check(exports.path())
    assert not exports.path().exists()  # each run's document is removed once checked


def test_the_offline_rows_run_end_to_end_each_export_compared(
    graph: Graph, store: Trail, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load(graph, SMALL)
    checked: list[tuple[str, int]] = []  # how each run's document was checked, and its size

    def in_full(graph: Graph, path: Path) -> Compared:
        checked.append(("in full", path.stat().st_size))
        return compare_graphml(graph, path)

    def by_digest(path: Path) -> str:
        checked.append(("byte for byte", path.stat().st_size))
        return sha256_of(path)

    monkeypatch.setattr(exports_module, "compare_graphml", in_full)
    monkeypatch.setattr(exports_module, "sha256_of", by_digest)

    rows = offline_rows.offline_grouped(graph, loaded.decisions, progress=lambda _: None)

    assert [r.case.split(": ", 1)[1] for r in rows] == [
        "check --all group by group, --jobs 1",
        "check --all group by group, --jobs 2",
        "export --all group by group, GraphML",
        "export --all group by group, GraphML, --jobs 2",
    ]
    # One run each way (no warm-up at repeat 1): --jobs 1's document compared with the database,
    # --jobs 2's with it; each the document the run reported writing.
    assert [how for how, _ in checked] == ["in full", "byte for byte"]
    assert [size for _, size in checked] == [row.extra["export_bytes"] for row in rows[2:]]
    for row in rows[2:]:
        assert row.extra["compared"] == Exports.COMPARED
    for row in rows:
        # Each side a whole process, timed by the bench from spawn to exit; memory summed over the command's processes.
        assert row.baseline is not None
        assert len(row.ours.samples_ms) == len(row.baseline.samples_ms) == 1
        assert min(row.ours.samples_ms + row.baseline.samples_ms) > 0
        assert row.ours.ops_per_sample == row.baseline.ops_per_sample == loaded.decisions
        assert row.extra["peak_rss_mb_summed"] >= row.extra["peak_rss_mb_largest"] > 0
        assert row.extra["peak_rss_mb_each"][0] == round(row.extra["peak_rss_mb_largest"], 1)
        assert row.extra["baseline_peak_rss_mb_summed"] > 0
        assert "peak_rss_mb_summed" in row.note
    for row in rows[:2]:
        assert (row.extra["violations"], row.extra["rules"]) == (0, 16)  # as check --all's JSON report said

    reference = offline_rows.offline(graph, loaded.decisions, progress=lambda _: None)
    assert reference.case == f"{loaded.decisions:,} decisions as one graph: load, 16 rules, GraphML export"
    assert reference.baseline is not None
    assert reference.ours.samples_ms[0] > max(reference.extra[phase] for phase in ("load_ms", "checks_ms", "export_ms"))
    assert reference.extra["peak_rss_mb_summed"] >= reference.extra["peak_rss_mb_largest"] > 0


def test_the_offline_rows_hold_the_command_to_the_workloads_count(graph: Graph, store: Trail) -> None:
    loaded = load(graph, SMALL)
    more = loaded.decisions + 1

    with pytest.raises(
        RuntimeError,
        match=f"check --all group by group, --jobs 1 counted {loaded.decisions:,} decisions, the workload has {more:,}",
    ):
        offline_rows.offline_grouped(graph, more, progress=lambda _: None, jobs=(1,))


def test_memory_is_summed_over_a_command_and_the_processes_it_starts() -> None:
    """A process holding 64 MB that starts one holding 32 MB: both are found, each one's own peak
    read (the child's not its parent's, which it held until its exec), and the two summed."""
    child = "import time; held = 'x' * (32 << 20); time.sleep(0.5)"
    parent = f"import subprocess, sys; held = 'x' * (64 << 20); subprocess.run([sys.executable, '-c', {child!r}], check=True)"

    run = offline_rows.run_measured([sys.executable, "-c", parent])

    assert len(run.peaks_kb) == 2
    smaller, larger = sorted(kb / 1024 for kb in run.peaks_kb.values())
    assert 32 < smaller < 64 < larger < 64 + 32  # the child's peak its own, not its parent's
    assert run.largest_mb == larger
    assert run.summed_mb == smaller + larger
    assert run.wall_ms >= 500
