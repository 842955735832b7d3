"""Deterministic, pure tools behind every number gpu-advisor shows.

One module per tool — the model registry, the VRAM estimator, the GPU spec table, the offer catalog, the topology
checker, the time/cost estimator and the spot-risk calculator — plus the data they need in `tools/data/`. These
modules do no I/O beyond reading their own data files (and the catalog's SQLite file), never call an LLM, and take
and return plain values or pydantic models so they can be tested on their own.
"""
