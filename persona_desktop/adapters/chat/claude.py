"""Claude data export `conversations.json`: a list of conversations with `chat_messages`.

A message's words are its `text` content blocks (else its `text`); tool use, tool
results and thinking are not conversation and a message of only those is counted as
"system, tool or hidden". Attachments without any text are counted as media. Where the
export records branches (`parent_message_uuid` and `current_leaf_message_uuid`), only
the branch that leads to the current leaf is imported; the others are counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from persona_desktop.adapters.chat.assistants import (
    ConversationsReader,
    assistant_chat_fragment,
    conversation_source,
)
from persona_desktop.adapters.chat.dates import Unreadable, iso_date
from persona_desktop.adapters.chat.fields import clean_text, string
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

SENDERS = {"human": True, "user": True, "assistant": False}
TOOL_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "token_budget"}


def _text_of(msg: dict[str, Any]) -> tuple[str, bool]:
    """The message's words, and whether it held only tool or thinking blocks."""
    blocks = msg.get("content")
    texts: list[str] = []
    tools = False
    if isinstance(blocks, list):
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if string(block.get("type")) in TOOL_BLOCKS:
                tools = True
            elif isinstance(block.get("text"), str):
                texts.append(block["text"])
    text = clean_text("\n\n".join(t for t in texts if t.strip()))
    if not text and isinstance(msg.get("text"), str) and not tools:
        text = clean_text(msg["text"])
    return text, tools


def _on_branch(conv: dict[str, Any], messages: list[Any]) -> set[int] | None:
    """Indexes of the messages on the current branch, or None when the export has no branches."""
    leaf = conv.get("current_leaf_message_uuid")
    by_uuid = {m["uuid"]: i for i, m in enumerate(messages) if isinstance(m, dict) and string(m.get("uuid"))}
    if not isinstance(leaf, str) or leaf not in by_uuid:
        return None
    if not any(isinstance(m, dict) and "parent_message_uuid" in m for m in messages):
        return None
    keep: set[int] = set()
    index: int | None = by_uuid[leaf]
    while index is not None and index not in keep:
        keep.add(index)
        parent = messages[index].get("parent_message_uuid")
        index = by_uuid.get(parent) if isinstance(parent, str) else None
    return keep


class ClaudeReader(ConversationsReader):
    def conversation(self, conv: dict[str, Any], place: str) -> Iterator[ChatRecord]:
        file = self.file.label
        conv_id = conv.get("uuid")
        if not isinstance(conv_id, str) or not conv_id.strip():
            raise ImportFormatError(f"{file}: {place}: the conversation has no 'uuid'")
        messages = conv.get("chat_messages")
        if not isinstance(messages, list):
            raise ImportFormatError(f"{file}: {place}.chat_messages: expected a list of messages")
        title = clean_text(str(conv.get("name") or "")) or "Claude conversation"
        source = conversation_source("claude", conv_id, title, "claude")
        branch = _on_branch(conv, messages)
        seq = 0
        for i, msg in enumerate(messages):
            where = f"{place}.chat_messages[{i}]"
            if branch is not None and i not in branch:
                yield SkippedMessage(SkipReason.EDITED_AWAY, where)
                continue
            if not isinstance(msg, dict):
                yield SkippedMessage(SkipReason.UNREADABLE, where, "the message is not an object")
                continue
            sender = string(msg.get("sender"))
            if sender == "system":
                yield SkippedMessage(SkipReason.SYSTEM, where)
                continue
            if sender not in SENDERS:
                yield SkippedMessage(
                    SkipReason.UNREADABLE, where, f"sender {sender!r} is not human or assistant"
                )
                continue
            text, tools = _text_of(msg)
            if not text:
                media = bool(msg.get("attachments") or msg.get("files") or msg.get("files_v2"))
                reason = SkipReason.SYSTEM if tools else SkipReason.MEDIA if media else SkipReason.EMPTY
                yield SkippedMessage(reason, where)
                continue
            message_id = msg.get("uuid")
            if not isinstance(message_id, str) or not message_id:
                raise ImportFormatError(f"{file}: {where}: message has no 'uuid'")
            created = msg.get("created_at")
            try:
                if not isinstance(created, str):
                    raise Unreadable("no created_at")
                captured = iso_date(created)
            except Unreadable as exc:
                yield SkippedMessage(SkipReason.UNREADABLE, where, str(exc))
                continue
            except ValueError:
                yield SkippedMessage(SkipReason.UNREADABLE, where, f"created_at {created!r} is not ISO 8601")
                continue
            fragment = assistant_chat_fragment(
                prefix="claude",
                conversation_id=conv_id,
                title=title,
                message_id=message_id,
                owner=SENDERS[sender],
                text=text,
                captured=captured,
                seq=seq,
            )
            seq += 1
            yield ImportedMessage(source, fragment, where)
