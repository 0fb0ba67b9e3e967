"""Content blocks: what prompts, message chunks and tool call content carry."""

from __future__ import annotations

from gemwire.wire.acp._base import AcpStruct

__all__ = (
    "Annotations",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
)


class Annotations(AcpStruct, frozen=True, kw_only=True):
    audience: list[str] | None = None
    last_modified: str | None = None
    priority: float | None = None


class _Block(AcpStruct, frozen=True, kw_only=True, tag_field="type"):
    annotations: Annotations | None = None


class TextContent(_Block, frozen=True, kw_only=True, tag="text"):
    text: str


class ImageContent(_Block, frozen=True, kw_only=True, tag="image"):
    data: str
    """Base64."""
    mime_type: str
    uri: str | None = None


class AudioContent(_Block, frozen=True, kw_only=True, tag="audio"):
    data: str
    mime_type: str


class ResourceLink(_Block, frozen=True, kw_only=True, tag="resource_link"):
    name: str
    uri: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class ResourceContents(AcpStruct, frozen=True, kw_only=True):
    """Upstream's ``TextResourceContents | BlobResourceContents`` in one type.

    The two differ only by having ``text`` or ``blob`` and carry no tag, which a typed
    decoder cannot tell apart; exactly one of the two is set.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


class EmbeddedResource(_Block, frozen=True, kw_only=True, tag="resource"):
    resource: ResourceContents


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
