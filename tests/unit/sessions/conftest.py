from __future__ import annotations

from materialized import Materialized, materialize

__all__ = ("Materialized", "materialize")
