"""One module per `gpu-advisor` command group; each exposes `register(app)` which adds its commands to the CLI."""
