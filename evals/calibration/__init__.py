"""Measured peak-memory figures (published ones in `published.csv`, our own in `measured*.csv`) with sources."""
