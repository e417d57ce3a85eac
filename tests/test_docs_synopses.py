"""The command synopses of README.md, docs/backup.md, docs/checks.md and docs/correction.md: each
command they show exists and takes every option and choice they show (its --help says so)."""

from __future__ import annotations

import docs_examples
from docs_examples import Cli, example

cli = docs_examples.cli  # the fixture: the command line on the test's database


def test_the_readmes_commands_take_what_it_shows(cli: Cli) -> None:
    cli.holds(
        example(
            "README.md",
            "decisiontrail plans [--project P] [--phase PHASE] [--search TEXT] [--limit N] [--json]   # newest first: the plan ids",
        )
    )


def test_the_backup_commands_take_what_their_page_shows(cli: Cli) -> None:
    cli.holds(
        example("docs/backup.md", "decisiontrail dump FILE      write the whole store to FILE (gzip-compressed JSON Lines)")
    )


def test_the_check_analyze_export_and_prune_commands_take_what_their_page_shows(cli: Cli) -> None:
    cli.holds(
        example(
            "docs/checks.md",
            "decisiontrail check   --plan PLAN | --hierarchy PLAN | --all   [--format text|json] [--jobs N] [--coverage FILE]",
        )
    )


def test_the_correction_commands_take_what_their_page_shows(cli: Cli) -> None:
    cli.holds(example("docs/correction.md", "decisiontrail tree PLAN_ID [--history] [--as-of TIME]"))
