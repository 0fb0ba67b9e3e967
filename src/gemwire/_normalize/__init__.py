"""Layer 2: pure, deterministic reducers from wire objects to normalized events."""
