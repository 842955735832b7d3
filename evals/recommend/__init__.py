"""End-to-end agent evaluation: spec fields through the whole graph, multi-turn scripts, recommendation checks."""
