"""The offline parser's rules, one module per field family: money, model, GPUs, data sizes, time, preferences."""
