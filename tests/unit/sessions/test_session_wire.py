"""Every recorded session record fits the exact wire types, with no field left undeclared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kit.corpus import RECORDINGS

from gemwire.protocol._strict import unknown_fields
from gemwire.wire.gemini_session import (
    ConversationRecord,
    FileDiff,
    MessageRecord,
    MetadataUpdateRecord,
    PartialMetadataRecord,
    ProjectRegistryData,
    RewindRecord,
)

FILES = sorted(
    p for p in RECORDINGS.glob("*/*/*/gemini-home/tmp/*/chats/**/*.json*") if p.is_file()
)


def check(document: Any, typ: Any) -> None:
    msgspec.convert(document, typ)
    assert unknown_fields(document, typ) == []


def check_message(message: dict[str, Any]) -> None:
    check(message, MessageRecord)
    for call in message.get("toolCalls", []):
        display = call.get("resultDisplay")
        if isinstance(display, dict) and "fileDiff" in display:
            check(display, FileDiff)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(RECORDINGS)))
def test_recorded_records_fit_the_wire_types(path: Path) -> None:
    if path.suffix == ".json":
        document = json.loads(path.read_text())
        check({k: v for k, v in document.items() if k != "messages"}, ConversationRecord)
        for message in document["messages"]:
            check_message(message)
        return
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "id" in record:
            check_message(record)
        elif "$set" in record:
            check(record, MetadataUpdateRecord)
            for message in record["$set"].get("messages", []):
                check_message(message)
        elif "$rewindTo" in record:
            check(record, RewindRecord)
        else:
            check(record, PartialMetadataRecord)


def test_recorded_registries_fit() -> None:
    registries = sorted(RECORDINGS.glob("*/*/*/gemini-home/projects.json"))
    assert registries
    for path in registries:
        check(json.loads(path.read_text()), ProjectRegistryData)
