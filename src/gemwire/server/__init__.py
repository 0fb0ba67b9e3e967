"""`gemwire serve`: agents, saved sessions, usage and batches over HTTP (docs/server.md)."""
