"""The one model port a sandbox carries, from whichever agents' base URLs are set."""

from __future__ import annotations

import pytest

from gemwire import GeminiOptions, InvalidOptions
from gemwire.batch._sandboxed import model_endpoint


def _endpoint(**env: str) -> tuple[str, int]:
    return model_endpoint(GeminiOptions(env=env, inherit_env=False))


def test_an_openai_base_url_alone_names_the_model() -> None:
    assert _endpoint(OPENAI_BASE_URL="http://localhost:8123/v1") == ("127.0.0.1", 8123)


def test_every_base_url_set_names_the_same_port() -> None:
    same = {
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8123",
        "OPENAI_BASE_URL": "http://127.0.0.1:8123/v1",
    }
    assert _endpoint(**same) == ("127.0.0.1", 8123)
    with pytest.raises(
        InvalidOptions, match="GOOGLE_GEMINI_BASE_URL, ANTHROPIC_BASE_URL name different ones"
    ):
        _endpoint(
            GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:8123", ANTHROPIC_BASE_URL="http://[::1]:8124"
        )


def test_one_base_url_off_the_loopback_is_refused_by_name() -> None:
    with pytest.raises(
        InvalidOptions, match=r"as OPENAI_BASE_URL=http://127\.0\.0\.1:PORT; it is https://api"
    ):
        _endpoint(
            GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:8123", OPENAI_BASE_URL="https://api.example/v1"
        )
