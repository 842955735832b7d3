"""Multi-turn conversation eval: scripted dialogues (it/id/en) with behaviour checks on every turn."""
