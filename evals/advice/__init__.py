"""Advice eval: chat requests (it/id/en) with expert expectations on the headline pick (GPU class, count, nodes, spot,
feasible or the limit that binds). The set was written before tuning; see RESULTS.md for first-run and tuned scores."""
