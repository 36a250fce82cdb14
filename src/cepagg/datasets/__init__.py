"""Event generators for demos, tests and benchmarks, and loaders for real data sets."""
