"""Throughput eval: the job-time model's tokens/s per GPU against published training runs (tuned and held-out)."""
