"""Layer 1: sans-IO protocol machinery: bytes in, wire objects out.

Never imports anyio, asyncio or subprocess (enforced by import-linter).
"""
