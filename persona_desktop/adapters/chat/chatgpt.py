"""ChatGPT data export `conversations.json`: a list of conversations, each a tree of messages.

Only the branch that leads to `current_node` (what the owner last saw) is imported;
messages on edited-away or regenerated branches are counted, not imported. System and
tool messages, tool calls, hidden context and the model's reasoning are counted as
"system, tool or hidden". Voice transcripts and text parts of multimodal messages are
read; images and files without text are counted as media.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from persona_desktop.adapters.chat.assistants import (
    ConversationsReader,
    assistant_chat_fragment,
    conversation_source,
)
from persona_desktop.adapters.chat.dates import Unreadable, unix_date
from persona_desktop.adapters.chat.fields import clean_text, string
from persona_desktop.adapters.chat.json_stream import as_number
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

HIDDEN_CONTENT = {
    "thoughts",
    "reasoning_recap",
    "user_editable_context",
    "model_editable_context",
    "system_error",
}


def _text_of(content: dict[str, Any]) -> tuple[str, bool]:
    """The readable text of a message's content, and whether it also held media."""
    pieces: list[str] = []
    media = False
    parts = content.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])  # e.g. audio_transcription in voice chats
            elif part is not None:
                media = True
    elif isinstance(content.get("text"), str):
        pieces.append(content["text"])
    elif isinstance(content.get("result"), str):
        pieces.append(content["result"])
    return clean_text("\n".join(p for p in pieces if p.strip())), media


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _classify(msg: dict[str, Any]) -> tuple[SkipReason | None, str]:
    """(None, text) for a message to import, else (why it is skipped, detail)."""
    role = string(_object(msg.get("author")).get("role"))
    content = _object(msg.get("content"))
    metadata = _object(msg.get("metadata"))
    kind = string(content.get("content_type"))
    if role in ("system", "tool") or metadata.get("is_visually_hidden_from_conversation"):
        return SkipReason.SYSTEM, ""
    if role == "assistant" and msg.get("recipient", "all") not in ("all", None):
        return SkipReason.SYSTEM, ""  # a call to a tool (browser, python, ...)
    if kind in HIDDEN_CONTENT:
        return SkipReason.SYSTEM, ""
    if role not in ("user", "assistant"):
        return SkipReason.UNREADABLE, f"author role {role!r} is not user, assistant, system or tool"
    text, media = _text_of(content)
    if text:
        return None, text
    return (SkipReason.MEDIA if media else SkipReason.EMPTY), ""


def _branch(conv: dict[str, Any], mapping: dict[str, Any], file: str, place: str) -> list[str]:
    """Node ids from the root to `current_node` (or the newest leaf when it is missing)."""
    current = conv.get("current_node")
    if current is None:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []
        current = max(leaves, key=lambda k: _node_time(mapping[k]))
    if not isinstance(current, str) or current not in mapping:
        raise ImportFormatError(f"{file}: {place}.current_node: {current!r} is not a node of its mapping")
    path: list[str] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping:
            raise ImportFormatError(f"{file}: {place}.mapping.{path[-1]}.parent: {node_id!r} is not a node")
        if node_id in seen:
            raise ImportFormatError(f"{file}: {place}.mapping.{node_id}: the parents go round in a circle")
        seen.add(node_id)
        path.append(node_id)
        node = mapping[node_id]
        node_id = node.get("parent") if isinstance(node, dict) else None
    path.reverse()
    return path


def _node_time(node: dict[str, Any]) -> float:
    msg = node.get("message")
    value = as_number(msg.get("create_time")) if isinstance(msg, dict) else None
    return value if value is not None else 0.0


class ChatGptReader(ConversationsReader):
    def conversation(self, conv: dict[str, Any], place: str) -> Iterator[ChatRecord]:
        file = self.file.label
        conv_id = conv.get("conversation_id") or conv.get("id")
        if not isinstance(conv_id, str) or not conv_id.strip():
            raise ImportFormatError(f"{file}: {place}: the conversation has no 'conversation_id' or 'id'")
        mapping = conv.get("mapping")
        if not isinstance(mapping, dict):
            raise ImportFormatError(f"{file}: {place}.mapping: expected an object of message nodes")
        title = clean_text(str(conv.get("title") or "")) or "ChatGPT conversation"
        branch = _branch(conv, mapping, file, place)
        on_branch = set(branch)
        for node_id, node in mapping.items():
            if node_id not in on_branch and isinstance(node, dict) and node.get("message") is not None:
                yield SkippedMessage(SkipReason.EDITED_AWAY, f"{place}.mapping.{node_id}")
        source = conversation_source("gpt", conv_id, title, "chatgpt")
        last_time: datetime | None = None
        try:
            last_time = unix_date(conv["create_time"]) if conv.get("create_time") is not None else None
        except ValueError:
            last_time = None
        seq = 0
        for node_id in branch:
            node = mapping[node_id]
            msg = node.get("message") if isinstance(node, dict) else None
            if msg is None:
                continue  # the tree's root holds no message
            where = f"{place}.mapping.{node_id}"
            if not isinstance(msg, dict):
                yield SkippedMessage(SkipReason.UNREADABLE, where, "the message is not an object")
                continue
            reason, text = _classify(msg)
            if reason is not None:
                yield SkippedMessage(reason, where, text)
                continue
            try:
                if msg.get("create_time") is not None:
                    last_time = unix_date(msg["create_time"])
                elif last_time is None:
                    raise Unreadable("no create_time")
            except ValueError as exc:
                yield SkippedMessage(SkipReason.UNREADABLE, where, str(exc))
                continue
            role = msg["author"]["role"]
            own_id = msg.get("id")
            message_id = own_id if isinstance(own_id, str) and own_id else node_id
            model = _object(msg.get("metadata")).get("model_slug")
            fragment = assistant_chat_fragment(
                prefix="gpt",
                conversation_id=conv_id,
                title=title,
                message_id=message_id,
                owner=role == "user",
                text=text,
                captured=last_time,
                seq=seq,
                extra={"model": model} if isinstance(model, str) and role == "assistant" else None,
            )
            seq += 1
            yield ImportedMessage(source, fragment, where)
