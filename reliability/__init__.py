"""The reliability harness: ``python -m reliability`` (``make reliability``) fuzzes the API, loads it,
injects faults and writes docs/reliability.md; its quick part runs in ``make test``."""
