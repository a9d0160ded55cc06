"""The Markdown export touches only its own files, whatever the folder holds.

Attacks: a planted manifest (other data dir, `../`, absolute paths), symlinks at a
note's name, at a temp file's name and at `skills/`, an owner's edit, model text
that tries to become a heading or frontmatter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.model import Subject
from persona_desktop.domain.proposals import NewSkill
from persona_desktop.domain.text import statement_key
from persona_desktop.errors import PersonaError
from persona_desktop.services.markdown_export import MANIFEST, PROFILE, export
from tests.chat_support import add_fact
from tests.conftest import Cli

NOW = datetime.now(UTC)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    return folder


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_text("precious\n", encoding="utf-8")
    return path


def test_a_planted_manifest_cannot_make_it_delete_anything(
    runtime: Runtime, vault: Path, victim: Path, tmp_path: Path
) -> None:
    add_fact(runtime, "The owner drinks green tea")
    inside = vault / "notes.md"
    inside.write_text("mine\n", encoding="utf-8")
    data = victim.read_bytes()
    (vault / MANIFEST).write_text(
        json.dumps(
            {
                "files": {
                    "../outside/victim.txt": _sha(data),
                    str(victim): _sha(data),
                    "skills/../../outside/victim.txt": _sha(data),
                    "notes.md": _sha(b"mine\n"),  # listed with its real digest, but not a name we write
                    "skills/x.md\0": "0",
                }
            }
        ),
        encoding="utf-8",
    )
    result = export(runtime.uow, vault, NOW)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert inside.read_text(encoding="utf-8") == "mine\n"
    assert result.removed == []
    manifest = json.loads((vault / MANIFEST).read_text(encoding="utf-8"))
    assert set(manifest["files"]) == {PROFILE}


def test_a_folder_exported_by_another_data_dir_is_refused(
    runtime: Runtime, vault: Path, tmp_path: Path
) -> None:
    add_fact(runtime, "The owner drinks green tea")
    export(runtime.uow, vault, NOW)
    before = {p.name: p.read_bytes() for p in vault.iterdir()}
    other = open_runtime(tmp_path / "other-data")
    try:
        with pytest.raises(
            PersonaError, match="already the Markdown export of another Persona Desktop data dir"
        ):
            export(other.uow, vault, NOW)
    finally:
        other.close()
    assert {p.name: p.read_bytes() for p in vault.iterdir()} == before


def test_a_symlink_at_a_note_name_is_never_written_through(
    runtime: Runtime, vault: Path, victim: Path
) -> None:
    add_fact(runtime, "The owner drinks green tea")
    (vault / PROFILE).symlink_to(victim)
    result = export(runtime.uow, vault, NOW)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (vault / PROFILE).is_symlink()
    assert result.conflicts == {PROFILE: "Persona profile (Persona Desktop copy).md"}
    assert "green tea" in (vault / "Persona profile (Persona Desktop copy).md").read_text(encoding="utf-8")


def test_symlinks_at_temp_file_names_are_never_followed(runtime: Runtime, vault: Path, victim: Path) -> None:
    """The old export wrote `.Persona profile.md.tmp` whatever was there: a link there overwrote its target."""
    add_fact(runtime, "The owner drinks green tea")
    for name in (f".{PROFILE}.tmp", f".{MANIFEST}.tmp", ".tmp"):
        (vault / name).symlink_to(victim)
    export(runtime.uow, vault, NOW)
    add_fact(runtime, "The owner works as a nurse")
    export(runtime.uow, vault, NOW)  # the second run replaces the notes it wrote
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert "nurse" in (vault / PROFILE).read_text(encoding="utf-8")


def test_a_symlinked_skills_folder_is_not_entered(runtime: Runtime, vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (vault / "skills").symlink_to(outside, target_is_directory=True)
    with runtime.uow() as uow:
        uow.skills.add("packing", "# Packing\n\nLight.\n", NOW)
        uow.commit()
    result = export(runtime.uow, vault, NOW)
    assert list(outside.iterdir()) == []
    assert result.skipped == ["skills/packing.md"]


def test_an_edited_note_is_never_overwritten_a_conflict_copy_gets_the_new_version(
    runtime: Runtime, vault: Path
) -> None:
    add_fact(runtime, "The owner drinks green tea")
    export(runtime.uow, vault, NOW)
    edited = (vault / PROFILE).read_text(encoding="utf-8") + "\nMy own note at the end.\n"
    (vault / PROFILE).write_text(edited, encoding="utf-8")
    add_fact(runtime, "The owner works as a nurse")
    result = export(runtime.uow, vault, NOW)
    assert (vault / PROFILE).read_text(encoding="utf-8") == edited
    copy = vault / "Persona profile (Persona Desktop copy).md"
    assert "nurse" in copy.read_text(encoding="utf-8")
    assert "kept your version of Persona profile.md" in result.message()
    again = export(runtime.uow, vault, NOW)  # stable: the copy is now the export's own note
    assert (vault / PROFILE).read_text(encoding="utf-8") == edited
    assert again.unchanged == ["Persona profile (Persona Desktop copy).md"]


def test_undo_never_deletes_a_skill_note_the_owner_edited(runtime: Runtime, cli: Cli, vault: Path) -> None:
    with runtime.uow() as uow:
        cid = uow.candidates.add(
            statement="New skill: packing",
            subject=Subject.OWNER,
            key=statement_key("New skill: packing"),
            category="skill",
            origin="review",
            run_id=None,
            proposal=NewSkill("packing", "# Packing\n\nLight.\n"),
            supersedes_fact_id=None,
            created_at=NOW,
        )
        uow.commit()
    assert cli("config", "set", "export.enabled", "true").code == 0
    assert cli("config", "set", "export.path", str(vault)).code == 0
    assert cli("approve", str(cid)).code == 0
    note = vault / "skills" / "packing.md"
    assert "Light." in note.read_text(encoding="utf-8")
    note.write_text(note.read_text(encoding="utf-8") + "\n- my own packing list\n", encoding="utf-8")
    undone = cli("undo")
    assert undone.code == 0
    assert note.exists() and "my own packing list" in note.read_text(encoding="utf-8")
    assert "not removed because you edited them: skills/packing.md" in undone.err
    # an unedited skill note does go with its skill
    assert cli("approve", str(cid)).code == 0
    copy = vault / "skills" / "packing (Persona Desktop copy).md"
    assert copy.exists()
    assert cli("undo").code == 0
    assert not copy.exists() and note.exists()


def test_model_text_cannot_become_a_heading_link_or_frontmatter(runtime: Runtime, vault: Path) -> None:
    add_fact(
        runtime,
        "likes tea\n# Injected heading\n---\ntitle: evil\n---\n[[Secret note]] <script>x</script> #tag ^fact-999",
        category="work\n## Owned\n---",
    )
    export(runtime.uow, vault, NOW)
    text = (vault / PROFILE).read_text(encoding="utf-8")
    assert text.count("\n---\n") == 1 and text.startswith("---\n")  # one frontmatter, closed once
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# Persona profile", r"## Work \#\# owned \-\-\-"]
    [bullet] = [line for line in text.splitlines() if line.startswith("- ")]
    assert bullet.endswith(" ^fact-1")
    assert "[[" not in bullet and "<script>" not in bullet and " #tag" not in bullet
    assert re.search(r"\\\^fact\\-999", bullet)
    front = text.split("\n---\n")[0]
    assert json.loads(front.split("categories: ")[1].splitlines()[0]) == ["work ## owned ---"]


def test_the_export_files_are_private(runtime: Runtime, vault: Path) -> None:
    add_fact(runtime, "The owner drinks green tea")
    old = os.umask(0)
    try:
        export(runtime.uow, vault, NOW)
    finally:
        os.umask(old)
    assert os.stat(vault / PROFILE).st_mode & 0o777 == 0o600
