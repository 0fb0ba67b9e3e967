"""`remote_channel`: the channel for an ACP endpoint's URL, by its scheme.

``ws://`` and ``wss://`` go over one WebSocket (`WebSocketChannel`), ``http://`` and
``https://`` over Streamable HTTP (`StreamableHttpChannel`); both are the transport RFD.
A ``?token=`` in the URL (as ``gemwire serve`` prints its URL) is the token when none is
given; it goes as ``Authorization: Bearer``, never in the URL (nor in a message).

    >>> channel = remote_channel("wss://build-box/acp/gemini?token=s3cret")
    >>> type(channel).__name__, channel.url
    ('WebSocketChannel', 'wss://build-box/acp/gemini')
    >>> remote_channel("ftp://build-box/acp/gemini")
    Traceback (most recent call last):
    gemwire.errors.InvalidOptions: an ACP endpoint is ws://, wss://, http:// or https://, not 'ftp://build-box/acp/gemini'
"""

from __future__ import annotations

from gemwire.errors import InvalidOptions
from gemwire.runners.acp._remote import shown, split_token
from gemwire.runners.acp.channel import AgentChannel
from gemwire.runners.acp.http_channel import StreamableHttpChannel
from gemwire.runners.acp.websocket_channel import WebSocketChannel

__all__ = ("remote_channel",)


def remote_channel(url: str, *, token: str | None = None) -> AgentChannel:
    """The channel to the ACP endpoint at ``url``, with ``token`` (else the URL's
    ``?token=``) as its bearer token."""
    url, given = split_token(url)
    token = token or given
    scheme = url.partition("://")[0].lower()
    if scheme in ("ws", "wss"):
        return WebSocketChannel(url, token=token)
    if scheme in ("http", "https"):
        return StreamableHttpChannel(url, token=token)
    raise InvalidOptions(
        f"an ACP endpoint is ws://, wss://, http:// or https://, not {shown(url)!r}"
    )
