"""Storing captured fragments: one source, one transaction, idempotent by ref.

A chat message stored before that comes back with other text (the same Telegram, JSONL,
ChatGPT or Claude message id, edited since) is never dropped as "already known": its new
text is stored as a new fragment whose locator links the old one (`edit_of`), and the
edit is journaled. The old fragment stays as it was, so a fact drawn from the old words
still shows exactly those words as its evidence; changing it in place would make that
fact cite words it was never drawn from. The new version is unread, so the sleep cycle
reads it like any new message. Its ref is the old ref and a digest of the new text, so
importing the same version again finds it, and any earlier version is known.

A fragment dated in the future (a wrong clock, a hostile export: "2999-01-01") is
stored at its import time instead, with a warning naming its ref (and its line, for
a chat export): left as it was, it would look like the owner's newest message forever
and hold the sleep cycle's quiet gate shut.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from persona_desktop.domain.dates import clamp_future
from persona_desktop.domain.message_versions import version_ref
from persona_desktop.domain.model import Author, Fragment, NewFragment, SourceInfo
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import (
    ChatRecord,
    ImportedMessage,
    SkippedMessage,
    SkipReason,
    UnitOfWork,
    UnitOfWorkFactory,
)

BATCH = 2000  # messages held in memory before they go to the store
MAX_UNREADABLE_LISTED = 20
MAX_NAMED = 20  # future-date warnings name this many fragments, then count the rest


@dataclass(frozen=True, slots=True)
class IngestResult:
    source_key: str
    source_id: int
    added: int
    skipped: int
    warnings: list[str] = field(default_factory=list)


def clamp_to_import_time(
    fragment: NewFragment, at: datetime, place: str = ""
) -> tuple[NewFragment, str | None]:
    """The fragment, moved to `at` if it is dated after it; and the warning that says so."""
    when, moved = clamp_future(fragment.captured_at, at)
    if not moved:
        return fragment, None
    where = f"{place}: " if place else ""
    warning = (
        f"{where}{fragment.ref}: dated {fragment.captured_at.isoformat()}, in the future; stored as "
        f"imported now ({when.isoformat(timespec='seconds')})"
    )
    return dataclasses.replace(fragment, captured_at=when), warning


def _capped(warnings: list[str], total: int) -> list[str]:
    if total <= len(warnings):
        return warnings
    return [*warnings, f"... and {total - len(warnings)} more dated in the future"]


def store_fragments(
    uow: UnitOfWork, source: SourceInfo, fragments: Sequence[NewFragment], at: datetime
) -> IngestResult:
    """Within an open unit of work: upsert the source, add new fragments, journal it."""
    clamped: list[NewFragment] = []
    warnings: list[str] = []
    moved = 0
    for fragment in fragments:
        fragment, warning = clamp_to_import_time(fragment, at)
        clamped.append(fragment)
        if warning is not None:
            moved += 1
            if len(warnings) < MAX_NAMED:
                warnings.append(warning)
    warnings = _capped(warnings, moved)
    source_id = uow.sources.upsert(source)
    added = uow.fragments.add_many(source_id, clamped)
    _journal_ingested(uow, source, source_id, added, len(clamped) - added, at, warnings)
    return IngestResult(source.key, source_id, added, len(clamped) - added, warnings)


def _journal_ingested(
    uow: UnitOfWork,
    source: SourceInfo,
    source_id: int,
    added: int,
    known: int,
    at: datetime,
    warnings: Sequence[str] = (),
) -> None:
    if added:
        data: dict[str, Any] = {
            "source": source.key,
            "kind": source.kind.value,
            "added": added,
            "skipped": known,
        }
        if warnings:
            data["future_dates_clamped"] = list(warnings)
        uow.journal.append(
            at=at,
            actor="capture",
            action="fragments.ingested",
            entity="source",
            entity_id=source_id,
            data=data,
        )


def ingest(
    uow_factory: UnitOfWorkFactory,
    sources: Sequence[tuple[SourceInfo, Sequence[NewFragment]]],
    at: datetime,
) -> list[IngestResult]:
    """Store several sources atomically: either all of them land, or none does."""
    results: list[IngestResult] = []
    with uow_factory() as uow:
        for source, fragments in sources:
            results.append(store_fragments(uow, source, fragments, at))
        uow.commit()
    return results


def note_owner_activity(uow_factory: UnitOfWorkFactory, at: datetime) -> None:
    """The sleep cycle's quiet gate reads this (besides the owner's chat messages)."""
    with uow_factory() as uow:
        uow.kv.set("owner.last_active_at", at.isoformat())
        uow.commit()


# --- chat exports: streamed, one transaction per file ------------------------------------


@dataclass(slots=True)
class SourceImport:
    """What one chat of an export brought: new messages and ones already stored."""

    source: SourceInfo
    source_id: int
    added: int = 0
    known: int = 0
    edited: int = 0  # stored before with other text: the new text stored as a new version
    edits: list[dict[str, str]] = field(default_factory=list)  # the first MAX_NAMED (journaled)
    clamped: list[str] = field(default_factory=list)  # its future-dated messages (journaled)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.source_id,
            "key": self.source.key,
            "label": self.source.label,
            "added": self.added,
            "already_known": self.known,
            "edited": self.edited,
        }


@dataclass(slots=True)
class ChatImportReport:
    """Per file: every message read is imported, already known, or skipped for a reason."""

    sources: list[SourceImport] = field(default_factory=list)
    skipped: Counter[SkipReason] = field(default_factory=Counter)
    unreadable: list[SkippedMessage] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # messages dated in the future, clamped
    clamped: int = 0
    # The owner's messages the importer could not vouch for (locator `doubt`: e.g. a WhatsApp
    # line that may have been typed inside someone else's message), stored untrusted.
    doubted: int = 0

    @property
    def added(self) -> int:
        return sum(s.added for s in self.sources)

    @property
    def known(self) -> int:
        return sum(s.known for s in self.sources)

    @property
    def edited(self) -> int:
        return sum(s.edited for s in self.sources)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def to_json(self) -> dict[str, Any]:
        """The import in the CLI's JSON (`ingest chat --json`, after the file and its format)."""
        return {
            "chats": len(self.sources),
            "added": self.added,
            "already_known": self.known,
            "edited": self.edited,
            "doubted": self.doubted,
            "skipped": {reason.value: self.skipped.get(reason, 0) for reason in SkipReason},
            "skipped_total": self.skipped_total,
            "unreadable": [{"place": s.place, "why": s.detail} for s in self.unreadable],
            "warnings": self.warnings,
            "sources": [s.to_json() for s in self.sources],
        }


class _ChatWriter:
    """Batches messages per source into the open unit of work, counting as it goes.

    The same message twice in one file with different text is an error naming both
    places: the store itself is the index (every fragment written since `floor` came from
    this file), so the check costs no memory per message. Only messages edited since an
    earlier import are remembered for the whole file (few); a message given its stored
    text and, more than one batch later, other text is taken as an edit, not an error.
    """

    def __init__(self, uow: UnitOfWork, report: ChatImportReport, label: str, at: datetime) -> None:
        self._uow = uow
        self._report = report
        self._label = label
        self._at = at
        self._floor = uow.fragments.max_id()
        self._by_key: dict[str, SourceImport] = {}
        self._pending: dict[str, list[ImportedMessage]] = {}
        self._held = 0
        self._edited: dict[str, tuple[str, str]] = {}  # ref -> (new text, place) edited in this file

    def add(self, message: ImportedMessage) -> None:
        key = message.source.key
        if key not in self._by_key:
            entry = self._open_source(message)
            self._by_key[key] = entry
            self._report.sources.append(entry)
        stored_key = self._by_key[key].source.key
        if stored_key != key and message.fragment.session == key:  # join the stored conversation
            message = dataclasses.replace(
                message, fragment=dataclasses.replace(message.fragment, session=stored_key)
            )
        if message.fragment.author is Author.OWNER and "doubt" in message.fragment.locator:
            self._report.doubted += 1
        fragment, warning = clamp_to_import_time(message.fragment, self._at, message.place)
        if warning is not None:
            message = dataclasses.replace(message, fragment=fragment)
            self._report.clamped += 1
            if len(self._report.warnings) < MAX_NAMED:
                self._report.warnings.append(warning)
                self._by_key[key].clamped.append(warning)
        self._pending.setdefault(key, []).append(message)
        self._held += 1
        if self._held >= BATCH:
            self.flush()

    def _open_source(self, message: ImportedMessage) -> SourceImport:
        """The source to store into: by its key; else as an earlier version of the importer
        stored it (the same chat name), which is then kept; else a new one."""
        source = message.source
        found = self._uow.sources.find(source.key)
        if found is None and message.legacy_source is not None:
            legacy = self._uow.sources.find(message.legacy_source)
            if legacy is not None and legacy[1].label == source.label:
                return SourceImport(legacy[1], legacy[0])
        return SourceImport(source, found[0] if found else self._uow.sources.upsert(source))

    def _resolve(self) -> dict[str, Fragment]:
        """The stored fragment of each pending message, by its ref or by the ref an earlier
        version of the importer stored it under (the same chat and id): such a message then
        goes on under the stored ref. A stored fragment of another chat under the same ref
        (an old unescaped ref can read both ways) is an error, never taken for this one."""
        stored = self._uow.fragments.by_refs([m.fragment.ref for ms in self._pending.values() for m in ms])
        wanted = [
            m.legacy_ref
            for ms in self._pending.values()
            for m in ms
            if m.legacy_ref is not None and m.fragment.ref not in stored
        ]
        legacy = self._uow.fragments.by_refs(wanted) if wanted else {}
        for messages in self._pending.values():
            for i, message in enumerate(messages):
                old = legacy.get(message.legacy_ref or "")
                if (
                    message.fragment.ref not in stored
                    and old is not None
                    and _same_message(old, message.fragment)
                ):
                    messages[i] = dataclasses.replace(
                        message, fragment=dataclasses.replace(message.fragment, ref=old.ref)
                    )
                    stored[old.ref] = old
        for message in (m for ms in self._pending.values() for m in ms):
            other = stored.get(message.fragment.ref)
            if other is not None and other.id <= self._floor and not _same_message(other, message.fragment):
                raise ImportFormatError(
                    f"{self._label}: {message.place}: message {message.fragment.ref} is stored already as "
                    f"message {other.locator.get('message_id')!r} of chat {other.locator.get('chat_id')!r} "
                    "(a ref written by an earlier version); it cannot be imported beside it"
                )
        return stored

    def flush(self) -> None:
        stored = self._resolve()
        batch = [m for messages in self._pending.values() for m in messages]
        earlier: dict[str, tuple[str, str]] = {
            ref: (f.text, _place_of(f.locator)) for ref, f in stored.items() if f.id > self._floor
        }
        versions: dict[int, NewFragment] = {}  # id(message) -> its new version
        for message in batch:
            ref, text = message.fragment.ref, message.fragment.text
            old = stored.get(ref)
            if old is not None and old.id <= self._floor and old.text != text:
                self._claim(earlier, ref, text, message.place, edit=True)
                versions[id(message)] = _new_version(message.fragment, old)
            else:
                self._claim(earlier, ref, text, message.place, edit=False)
        already = self._stored_versions(list(versions.values()))
        for key, messages in self._pending.items():
            entry = self._by_key[key]
            plain = [m.fragment for m in messages if id(m) not in versions]
            edits = [versions[id(m)] for m in messages if id(m) in versions]
            added = self._uow.fragments.add_many(entry.source_id, plain)
            edited = self._uow.fragments.add_many(entry.source_id, edits)
            entry.added += added
            entry.edited += edited
            entry.known += len(plain) - added + len(edits) - edited
            fresh = {f.ref: f for f in edits if f.ref not in already}
            for f in list(fresh.values())[: MAX_NAMED - len(entry.edits)]:
                entry.edits.append({"ref": f.ref, "edit_of": str(f.locator["edit_of"])})
        self._pending.clear()
        self._held = 0

    def _claim(
        self, earlier: dict[str, tuple[str, str]], ref: str, text: str, place: str, edit: bool
    ) -> None:
        """The text this file gives `ref`: an error if it gave it other text before."""
        first = self._edited.get(ref) or earlier.get(ref)
        if first is None:
            (self._edited if edit else earlier)[ref] = (text, place)
        elif first[0] != text:
            raise ImportFormatError(
                f"{self._label}: {place}: message {ref} was already used at {first[1]} with different text"
            )

    def _stored_versions(self, versions: list[NewFragment]) -> set[str]:
        """The versions already stored. One stored with other text (a digest collision) would
        drop the edit as known: refuse instead."""
        if not versions:
            return set()
        stored = self._uow.fragments.by_refs([f.ref for f in versions])
        for f in versions:
            other = stored.get(f.ref)
            if other is not None and other.text != f.text:
                raise ImportFormatError(
                    f"{self._label}: the edited version {f.ref} is stored with other text"
                )
        return set(stored)


def _same_message(old: Fragment, new: NewFragment) -> bool:
    """The stored fragment is this message: the same chat and message id, where both say."""
    return all(
        str(old.locator.get(k)) == str(new.locator.get(k))
        for k in ("chat_id", "message_id")
        if k in old.locator and k in new.locator
    )


def _new_version(fragment: NewFragment, old: Fragment) -> NewFragment:
    locator = {**fragment.locator, "edit_of": old.ref}
    return dataclasses.replace(fragment, ref=version_ref(old.ref, fragment.text), locator=locator)


def _place_of(locator: dict[str, Any]) -> str:
    line = locator.get("line")
    return f"line {line}" if isinstance(line, int) else "an earlier message of this file"


def _journal_edited(uow: UnitOfWork, entry: SourceImport, at: datetime) -> None:
    if entry.edited:
        uow.journal.append(
            at=at,
            actor="capture",
            action="fragments.edited",
            entity="source",
            entity_id=entry.source_id,
            data={"source": entry.source.key, "edited": entry.edited, "edits": entry.edits},
        )


def import_chat(
    uow_factory: UnitOfWorkFactory, records: Iterable[ChatRecord], at: datetime, label: str
) -> ChatImportReport:
    """Store a chat export as it is read, in one transaction: all of the file, or nothing.

    `records` is consumed lazily, so an export of any size is held in memory one batch at
    a time; an error raised while reading it (a broken file) rolls everything back.
    """
    report = ChatImportReport()
    with uow_factory() as uow:
        writer = _ChatWriter(uow, report, label, at)
        for record in records:
            if isinstance(record, ImportedMessage):
                writer.add(record)
                continue
            report.skipped[record.reason] += 1
            if record.reason is SkipReason.UNREADABLE and len(report.unreadable) < MAX_UNREADABLE_LISTED:
                report.unreadable.append(record)
        writer.flush()
        report.warnings = _capped(report.warnings, report.clamped)
        for entry in report.sources:
            _journal_ingested(uow, entry.source, entry.source_id, entry.added, entry.known, at, entry.clamped)
            _journal_edited(uow, entry, at)
        uow.commit()
    return report
