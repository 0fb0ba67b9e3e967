"""`gemwire.remote`: drive agents on a `gemwire serve` server with the local API's shapes."""
