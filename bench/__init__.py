"""Benchmark harness: workloads, scenarios, the @neo4j/graphql peer, and the report (`python -m bench`)."""
