"""asv benchmarks for einplan: one bench_<theme>.py per theme, peers as the
``impl`` parameter, threads as ``threads`` (see common.py and ../README.md)."""
