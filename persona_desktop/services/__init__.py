"""Use cases: ingest, the sleep cycle, review decisions, queries. They use ports only."""
