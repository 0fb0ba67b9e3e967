"""Layer 3: the only place that spawns processes and touches pipes (anyio)."""
