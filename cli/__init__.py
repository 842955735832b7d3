"""The `gpu-advisor` command line, the top layer: it sits above agent/, web/ and tools/ and nothing imports it."""
