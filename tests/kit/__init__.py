"""The test kit: helpers shared by the test files, and the suite's own checks (plugins loaded
by tests/conftest.py)."""
