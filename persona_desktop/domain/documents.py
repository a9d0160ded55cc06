"""Cutting unread fragments into documents for phase 1.

A document is a run of fragments from one source session and one UTC day, at most
`MAX_LINES` lines and `MAX_CHARS` characters, written one fragment per line as
``[<ref>] <text>``. Which fragments are read next is `services/reading_plan.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from persona_desktop.domain.model import Author, Fragment, FragmentHead

MAX_LINES = 60
MAX_CHARS = 6000
MAX_LINE_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Document:
    fragments: tuple[Fragment, ...]

    @property
    def refs(self) -> frozenset[str]:
        return frozenset(f.ref for f in self.fragments)

    @property
    def has_non_assistant(self) -> bool:
        return any(f.author is not Author.ASSISTANT for f in self.fragments)

    def lines(self) -> list[str]:
        return [f"[{f.ref}] {_one_line(f.text)}" for f in self.fragments]

    def text(self) -> str:
        return "\n".join(self.lines())

    def digest(self) -> str:
        h = hashlib.sha256()
        for f in self.fragments:
            h.update(f"{f.id}\x1f{f.ref}\x1f{f.text}\x1e".encode())
        return h.hexdigest()[:32]


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_LINE_CHARS else flat[: MAX_LINE_CHARS - 1] + "…"


def build_documents(fragments: Iterable[Fragment]) -> list[Document]:
    """Group fragments (in id order) by source, session and day; cut long groups.

    Documents come back ordered by their smallest fragment id.
    """
    groups: dict[tuple[int, str, str], list[Fragment]] = {}
    for f in sorted(fragments, key=lambda f: f.id):
        day = f.captured_at.date().isoformat()
        groups.setdefault((f.source_id, f.session, day), []).append(f)
    docs: list[Document] = []
    for members in groups.values():
        members.sort(key=lambda f: (f.captured_at, f.seq, f.id))
        chunk: list[Fragment] = []
        size = 0
        for f in members:
            line = min(len(f.text), MAX_LINE_CHARS) + len(f.ref) + 3
            if chunk and (len(chunk) >= MAX_LINES or size + line > MAX_CHARS):
                docs.append(Document(tuple(chunk)))
                chunk, size = [], 0
            chunk.append(f)
            size += line
        if chunk:
            docs.append(Document(tuple(chunk)))
    docs.sort(key=lambda d: min(f.id for f in d.fragments))
    return docs


def plan_documents(heads: Iterable[FragmentHead]) -> list[list[int]]:
    """The same grouping as `build_documents`, on heads only: fragment ids per document.

    Lets the cycle read 50,000 fragment heads cheaply and load full rows only for
    the documents it will send.
    """
    groups: dict[tuple[int, str, str], list[FragmentHead]] = {}
    for h in sorted(heads, key=lambda h: h.id):
        groups.setdefault((h.source_id, h.session, h.captured_at.date().isoformat()), []).append(h)
    plans: list[list[int]] = []
    for members in groups.values():
        members.sort(key=lambda h: (h.captured_at, h.seq, h.id))
        chunk: list[int] = []
        size = 0
        for h in members:
            line = min(h.text_len, MAX_LINE_CHARS) + len(h.ref) + 3
            if chunk and (len(chunk) >= MAX_LINES or size + line > MAX_CHARS):
                plans.append(chunk)
                chunk, size = [], 0
            chunk.append(h.id)
            size += line
        if chunk:
            plans.append(chunk)
    plans.sort(key=min)
    return plans
