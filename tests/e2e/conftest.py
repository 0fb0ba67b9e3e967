from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Real CLIs are slow: asyncio only here; lifecycle tests parametrize both backends."""
    return "asyncio"
