"""The Markdown export (off by default): applied facts and active skills mirrored into a folder.

One profile note with YAML frontmatter and a section per category, one note per
skill under `skills/` (markdown_notes.py). Rewritten after every apply or revert.

The export touches only its own files (export_folder.py does the I/O):

- its manifest (`.persona-export.json`) names this store's id: a folder another data
  dir exports to is refused, and a manifest that lists `../x`, `/etc/x` or any name
  the export never writes is ignored for those entries;
- a file is overwritten or deleted only while its content is exactly what the export
  wrote (its digest in the manifest): a note the owner edited, or a file of that name
  the export did not create, is left alone, and the new version goes to a conflict
  copy next to it ("Persona profile (Persona Desktop copy).md");
- no symlink is followed, no temp file name is trusted.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from persona_desktop.domain.model import FactStatus
from persona_desktop.errors import ConfigError, PersonaError
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.export_folder import Entry, ExportFolder, NotOurs
from persona_desktop.services.markdown_notes import profile_note, skill_note
from persona_desktop.services.skills import ACTIVE

MANIFEST = ".persona-export.json"
PROFILE = "Persona profile.md"
SKILLS_DIR = "skills"
CONFLICT_SUFFIX = " (Persona Desktop copy)"
STORE_ID = "store.id"
_MAX_MANIFEST = 1024 * 1024

__all__ = ["MANIFEST", "PROFILE", "ExportResult", "export", "export_if_enabled", "profile_note", "skill_note"]


@dataclass
class ExportResult:
    folder: Path
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # names the export could not place at all
    conflicts: dict[str, str] = field(default_factory=dict)  # taken name -> where this version went
    kept: list[str] = field(default_factory=list)  # the export's old notes the owner edited: kept

    def message(self) -> str:
        text = (
            f"Markdown export to {self.folder}: {len(self.written)} written, "
            f"{len(self.removed)} removed, {len(self.unchanged)} unchanged"
        )
        if self.conflicts:
            text += "; kept your version of " + ", ".join(
                f"{name} (Persona's is in {copy})" for name, copy in self.conflicts.items()
            )
        if self.kept:
            text += f"; not removed because you edited them: {', '.join(self.kept)}"
        if self.skipped:
            text += f"; left alone (not created by Persona): {', '.join(self.skipped)}"
        return text

    @property
    def needs_attention(self) -> bool:
        return bool(self.skipped or self.conflicts or self.kept)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def conflict_name(name: str) -> str:
    path = PurePosixPath(name)
    return str(path.with_name(f"{path.stem}{CONFLICT_SUFFIX}{path.suffix}"))


def exportable(name: object) -> bool:
    """Only names this export itself writes: the profile, skills/<slug>.md, their conflict copies."""
    if not isinstance(name, str) or "\\" in name or "\0" in name:
        return False
    path = PurePosixPath(name)
    if path.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in path.parts):
        return False
    if path.parts in ((PROFILE,), (conflict_name(PROFILE),)):
        return True
    return len(path.parts) == 2 and path.parts[0] == SKILLS_DIR and path.suffix == ".md"


@dataclass
class _Manifest:
    store: str | None
    files: dict[str, str]


def _read_manifest(root: ExportFolder, store_id: str) -> _Manifest:
    entry = root.entry(MANIFEST)
    if entry is Entry.MISSING:
        return _Manifest(None, {})
    where = root.path / MANIFEST
    try:
        value = json.loads(root.read(MANIFEST, _MAX_MANIFEST).decode("utf-8"))
    except NotOurs:
        raise PersonaError(
            f"{where} is not a regular file; remove it or choose another export.path"
        ) from None
    except (ValueError, UnicodeDecodeError):
        raise PersonaError(f"the export manifest {where} cannot be read; fix or delete it") from None
    if not isinstance(value, dict):
        raise PersonaError(f"the export manifest {where} is not Persona Desktop's; fix or delete it")
    owner = value.get("store")
    if owner is not None and owner != store_id:
        raise PersonaError(
            f"{root.path} is already the Markdown export of another Persona Desktop data dir: "
            f"choose another export.path (or delete {where} if that data dir is gone)"
        )
    files = value.get("files", {})
    if not isinstance(files, dict):
        files = {}
    return _Manifest(
        owner if isinstance(owner, str) else None,
        {k: v for k, v in files.items() if exportable(k) and isinstance(v, str)},
    )


def _store_id(uow_factory: UnitOfWorkFactory) -> str:
    with uow_factory.read() as uow:
        found = uow.kv.get(STORE_ID)
    if found:
        return found
    with uow_factory() as uow:  # a store that predates the id
        found = uow.kv.get(STORE_ID) or uuid.uuid4().hex
        uow.kv.set(STORE_ID, found)
        uow.commit()
    return found


def export(uow_factory: UnitOfWorkFactory, folder: Path, at: datetime) -> ExportResult:
    store_id = _store_id(uow_factory)
    with uow_factory.read() as uow:
        facts = uow.facts.all(FactStatus.APPLIED)
        skills = uow.skills.all(ACTIVE)
    wanted = {PROFILE: profile_note(facts, at).encode("utf-8")}
    for skill in skills:
        wanted[f"{SKILLS_DIR}/{skill.name}.md"] = skill_note(skill).encode("utf-8")
    folder = folder.expanduser()
    try:
        with ExportFolder.open(folder) as root:
            return _Sync(root, _read_manifest(root, store_id), store_id).run(wanted)
    except OSError as exc:
        raise PersonaError(f"cannot write the Markdown export to {folder}: {exc.strerror or exc}") from None


class _Sync:
    def __init__(self, root: ExportFolder, manifest: _Manifest, store_id: str) -> None:
        self.root = root
        self.owned = manifest.files
        self.store_id = store_id
        self.result = ExportResult(root.path)
        self.files: dict[str, str] = {}
        self._skills: ExportFolder | None = None

    def _where(self, name: str, create: bool) -> tuple[ExportFolder, str] | None:
        parts = PurePosixPath(name).parts
        if len(parts) == 1:
            return self.root, parts[0]
        if self._skills is None:
            self._skills = self.root.sub(SKILLS_DIR, create)
        return (self._skills, parts[1]) if self._skills is not None else None

    def _is_ours(self, folder: ExportFolder, base: str, name: str) -> bool:
        """The file at `name` is exactly what this export last wrote there."""
        recorded = self.owned.get(name)
        if recorded is None:
            return False
        try:
            return _digest(folder.read(base)) == recorded
        except NotOurs:
            return False

    def _place(self, name: str, data: bytes) -> bool:
        """Write `data` at `name` if the name is free or holds our unedited output; True if placed."""
        where = self._where(name, create=True)
        if where is None:
            return False
        folder, base = where
        digest = _digest(data)
        entry = folder.entry(base)
        try:
            if entry is Entry.MISSING:
                folder.create(base, data)
                self.result.written.append(name)
            elif entry is Entry.FILE and self._is_ours(folder, base, name):
                if self.owned[name] == digest:
                    self.result.unchanged.append(name)
                else:
                    folder.replace(base, data)
                    self.result.written.append(name)
            else:
                return False
        except NotOurs:
            return False
        self.files[name] = digest
        return True

    def run(self, wanted: dict[str, bytes]) -> ExportResult:
        try:
            for name, data in wanted.items():
                if self._place(name, data):
                    continue
                copy = conflict_name(name)
                if self._place(copy, data):
                    self.result.conflicts[name] = copy
                else:
                    self.result.skipped.append(name)
            placed = set(self.files)
            for name in sorted(set(self.owned) - placed):
                self._retire(name)
            self._write_manifest()
        finally:
            if self._skills is not None:
                self._skills.close()
        return self.result

    def _retire(self, name: str) -> None:
        """A note the export no longer wants: deleted only while it is exactly what was written."""
        where = self._where(name, create=False)
        if where is None:
            return
        folder, base = where
        if folder.entry(base) is not Entry.FILE:
            return
        if self._is_ours(folder, base, name):
            folder.delete(base)
            self.result.removed.append(name)
        else:
            self.result.kept.append(name)  # the owner edited it: theirs now, and out of the manifest

    def _write_manifest(self) -> None:
        data = json.dumps(
            {"generator": "persona-desktop", "version": 2, "store": self.store_id, "files": self.files},
            indent=2,
            sort_keys=True,
        ).encode()
        entry = self.root.entry(MANIFEST)
        if entry is Entry.MISSING:
            self.root.create(MANIFEST, data)
        elif entry is Entry.FILE:
            self.root.replace(MANIFEST, data)  # read and checked above: ours, or a legacy one we adopt
        else:
            raise PersonaError(f"{self.root.path / MANIFEST} is not a regular file; remove it")


def export_if_enabled(
    enabled: bool, folder: str, uow_factory: UnitOfWorkFactory, at: datetime
) -> ExportResult | None:
    """After an apply or revert: mirror memory when the owner turned the export on
    (`export.enabled`, into `export.path`)."""
    if not enabled:
        return None
    path = folder.strip()
    if not path:
        raise ConfigError("export.enabled is true but export.path is empty: choose a folder first")
    return export(uow_factory, Path(path), at)
