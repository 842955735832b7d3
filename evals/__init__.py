"""Evaluation datasets and their runners.

`calibration/` holds published (and, where a GPU was at hand, our own) measured peak-memory figures that the VRAM
estimator is scored against; other datasets (parser fields, FAQ retrieval) live beside it. Each runner prints its
figures and the command that reproduces them.
"""
