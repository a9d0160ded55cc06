"""The Markdown export (off by default): applied facts and active skills mirrored into a folder.

One profile note with YAML frontmatter and a section per category, one note per
skill under `skills/`. Rewritten whole after every apply or revert. The export
keeps a manifest of the files it wrote and never touches any other file: a note
whose name is taken by a file it did not create is skipped and reported.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from persona_desktop.config import Settings
from persona_desktop.domain.model import Fact, FactStatus, Subject
from persona_desktop.errors import ConfigError, PersonaError
from persona_desktop.ports import Skill, UnitOfWorkFactory
from persona_desktop.services.skills import ACTIVE

MANIFEST = ".persona-export.json"
PROFILE = "Persona profile.md"
SKILLS_DIR = "skills"


@dataclass
class ExportResult:
    folder: Path
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # names taken by files the export did not create

    def message(self) -> str:
        text = (
            f"Markdown export to {self.folder}: {len(self.written)} written, "
            f"{len(self.removed)} removed, {len(self.unchanged)} unchanged"
        )
        if self.skipped:
            text += f"; left alone (not created by Persona): {', '.join(self.skipped)}"
        return text


def _yaml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def profile_note(facts: list[Fact], at: datetime) -> str:
    owner = [f for f in facts if f.subject is Subject.OWNER]
    others = [f for f in facts if f.subject is not Subject.OWNER]
    categories = sorted({(f.category or "general").strip().lower() or "general" for f in owner})
    lines = [
        "---",
        f"title: {_yaml_str('Persona profile')}",
        "generator: persona-desktop",
        f"updated: {_yaml_str(at.isoformat())}",
        f"facts: {len(facts)}",
        "categories: [" + ", ".join(_yaml_str(c) for c in categories) + "]",
        "tags: [persona]",
        "---",
        "",
        "# Persona profile",
        "",
        "What the assistant remembers about you: facts you approved or that were proven.",
        "This note is rewritten by Persona Desktop; edit memory in the app, not here.",
    ]
    for category in categories:
        lines += ["", f"## {category.capitalize()}", ""]
        lines += [
            f"- {f.statement} ^fact-{f.id}"
            for f in owner
            if ((f.category or "general").strip().lower() or "general") == category
        ]
    if others:
        lines += ["", "## About other people", ""]
        lines += [f"- {f.statement} ^fact-{f.id}" for f in others]
    if not facts:
        lines += ["", "_Nothing remembered yet._"]
    return "\n".join(lines) + "\n"


def skill_note(skill: Skill) -> str:
    head = [
        "---",
        f"title: {_yaml_str(skill.name)}",
        "generator: persona-desktop",
        "kind: skill",
        f"updated: {_yaml_str(skill.updated_at.isoformat())}",
        "tags: [persona, skill]",
        "---",
        "",
    ]
    return "\n".join(head) + skill.content.rstrip("\n") + "\n"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(folder: Path) -> dict[str, str]:
    path = folder / MANIFEST
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        files = value.get("files", {})
        return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
    except (OSError, ValueError, AttributeError) as exc:
        raise PersonaError(f"the export manifest {path} cannot be read ({exc}); fix or delete it") from None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def export(uow_factory: UnitOfWorkFactory, folder: Path, at: datetime) -> ExportResult:
    with uow_factory.read() as uow:
        facts = uow.facts.all(FactStatus.APPLIED)
        skills = uow.skills.all(ACTIVE)
    folder = folder.expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return _sync(folder, facts, skills, at)
    except OSError as exc:
        raise PersonaError(f"cannot write the Markdown export to {folder}: {exc.strerror or exc}") from None


def _sync(folder: Path, facts: list[Fact], skills: list[Skill], at: datetime) -> ExportResult:
    result = ExportResult(folder)
    owned = _read_manifest(folder)
    wanted = {PROFILE: profile_note(facts, at).encode("utf-8")}
    for skill in skills:
        wanted[f"{SKILLS_DIR}/{skill.name}.md"] = skill_note(skill).encode("utf-8")
    manifest: dict[str, str] = {}
    for name, data in wanted.items():
        path = folder / name
        if path.exists() and name not in owned:
            result.skipped.append(name)
            continue
        digest = _digest(data)
        if path.exists() and owned.get(name) == digest and _digest(path.read_bytes()) == digest:
            result.unchanged.append(name)
        else:
            _write(path, data)
            result.written.append(name)
        manifest[name] = digest
    for name in sorted(set(owned) - set(wanted)):
        path = folder / name
        if path.exists():
            path.unlink()
            result.removed.append(name)
    _write(
        folder / MANIFEST,
        json.dumps({"generator": "persona-desktop", "files": manifest}, indent=2, sort_keys=True).encode(),
    )
    return result


def export_if_enabled(
    settings: Settings, uow_factory: UnitOfWorkFactory, at: datetime
) -> ExportResult | None:
    """After an apply or revert: mirror memory when the owner turned the export on."""
    if not settings.get("export.enabled"):
        return None
    path = str(settings.get("export.path")).strip()
    if not path:
        raise ConfigError("export.enabled is true but export.path is empty: choose a folder first")
    return export(uow_factory, Path(path), at)
