"""constraints.txt pins every package ``make install`` installs, within pyproject.toml's ranges,
and the environment running these tests was installed by it."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not name==version"
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in (*project["dependencies"], *project["optional-dependencies"]["test"])]


def test_every_requirement_is_pinned_to_a_version_its_range_allows() -> None:
    pins = _pins()
    wrong = {
        str(r): str(pins.get(canonicalize_name(r.name)))
        for r in _requirements()
        if (r.marker is None or r.marker.evaluate())
        and (canonicalize_name(r.name) not in pins or pins[canonicalize_name(r.name)] not in r.specifier)
    }
    assert wrong == {}


def test_what_is_installed_is_what_constraints_txt_pins() -> None:
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version) for d in metadata.distributions()}
    differing = {name: (str(pin), str(installed[name])) for name, pin in _pins().items() if installed.get(name, pin) != pin}
    missing = sorted(name for name in (canonicalize_name(r.name) for r in _requirements()) if name not in installed)
    assert (differing, missing) == ({}, [])
