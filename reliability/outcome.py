"""What one reliability scenario reports: its figures and whether every guarantee held."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """One scenario's result, as docs/reliability.md shows it.

    ``figures`` are counts and measurements by name (requests tried, acknowledged, stored,
    lost, duplicated, latency percentiles, ...); ``errors_by_code`` counts the GraphQL error
    codes the clients saw; ``failures`` names every guarantee that did not hold, so an empty
    list is a pass.

    >>> outcome = Outcome("load", "concurrent recording")
    >>> outcome.count("UNAVAILABLE"); outcome.count("UNAVAILABLE")
    >>> outcome.errors_by_code, outcome.passed
    ({'UNAVAILABLE': 2}, True)
    >>> outcome.require(False, "3 acknowledged decisions are missing"); outcome.passed
    False
    """

    name: str
    description: str
    figures: dict[str, Any] = field(default_factory=dict)
    errors_by_code: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures

    def count(self, code: str, n: int = 1) -> None:
        self.errors_by_code[code] = self.errors_by_code.get(code, 0) + n

    def require(self, holds: bool, failure: str) -> None:
        """Record ``failure`` unless ``holds``: a guarantee checked, not asserted, so the run goes on."""
        if not holds:
            self.failures.append(failure)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "figures": self.figures,
            "errors_by_code": dict(sorted(self.errors_by_code.items())),
            "failures": self.failures,
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
        }
