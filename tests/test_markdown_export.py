"""The Markdown export mirrors applied facts and skills, and never touches a file it did not write."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from persona_desktop.bootstrap import Runtime
from persona_desktop.services.markdown_export import MANIFEST, PROFILE, export
from tests.chat_support import add_fact
from tests.conftest import Cli
from tests.ui_support import seed_memory


def _bullets(folder: Path) -> dict[int, str]:
    text = (folder / PROFILE).read_text(encoding="utf-8")
    return {
        int(m.group(2)): re.sub(r"\\(.)", r"\1", m.group(1))  # model text is backslash-escaped
        for m in re.finditer(r"^- (.*) \^fact-(\d+)$", text, re.MULTILINE)
    }


def _applied(cli: Cli) -> dict[int, str]:
    return {f["id"]: f["statement"] for f in cli("facts", "--json", "--status", "applied").json()}


def test_the_export_follows_approve_revert_and_undo_and_leaves_foreign_files_alone(
    runtime: Runtime, cli: Cli, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    (vault / "skills").mkdir(parents=True)
    foreign = {vault / "My diary.md": "dear diary\n", vault / "skills" / "mine.md": "my own skill\n"}
    for path, text in foreign.items():
        path.write_text(text, encoding="utf-8")
    seeded = seed_memory(runtime, pending=2, applied=1)
    assert cli("config", "set", "export.enabled", "true").code == 0
    assert cli("config", "set", "export.path", str(vault)).code == 0
    assert not (vault / PROFILE).exists()  # the export is written on the next apply or revert

    assert cli("approve", str(seeded.pending[1])).code == 0
    assert _bullets(vault) == _applied(cli) and len(_applied(cli)) == 2
    front = (vault / PROFILE).read_text(encoding="utf-8").split("---")[1]
    assert "facts: 2" in front and 'categories: ["preference"]' in front
    assert "## Preference" in (vault / PROFILE).read_text(encoding="utf-8")

    assert cli("facts", "revert", str(seeded.applied[0])).code == 0
    assert _bullets(vault) == _applied(cli) and len(_applied(cli)) == 1
    assert cli("undo").code == 0
    assert _bullets(vault) == _applied(cli) and len(_applied(cli)) == 2

    for path, text in foreign.items():
        assert path.read_text(encoding="utf-8") == text
    manifest = json.loads((vault / MANIFEST).read_text(encoding="utf-8"))
    assert set(manifest["files"]) == {PROFILE}


def test_skills_get_one_note_each_and_a_retired_skill_note_is_removed(
    runtime: Runtime, tmp_path: Path
) -> None:
    from persona_desktop.services.skills import retire

    now = datetime.now(UTC)
    add_fact(runtime, "The owner drinks green tea")
    add_fact(runtime, "The owner works as a nurse", category="work")
    with runtime.uow() as uow:
        uow.skills.add("weekly-report", "# Weekly report\n\nSend it on Friday.\n", now)
        uow.skills.add("packing", "# Packing\n\nLight.\n", now)
        uow.commit()
    vault = tmp_path / "vault"
    (vault / "skills").mkdir(parents=True)
    (vault / "skills" / "packing.md").write_text("the owner's own packing note\n", encoding="utf-8")
    first = export(runtime.uow, vault, now)
    # the name is taken by a file Persona did not create: left alone, Persona's note goes next to it
    assert first.conflicts == {"skills/packing.md": "skills/packing (Persona Desktop copy).md"}
    assert (vault / "skills" / "packing.md").read_text(encoding="utf-8") == "the owner's own packing note\n"
    assert "Light." in (vault / "skills" / "packing (Persona Desktop copy).md").read_text(encoding="utf-8")
    note = (vault / "skills" / "weekly-report.md").read_text(encoding="utf-8")
    assert note.startswith("---\n") and "kind: skill" in note and "Send it on Friday." in note
    profile = (vault / PROFILE).read_text(encoding="utf-8")
    assert profile.index("## Preference") < profile.index("## Work")

    again = export(runtime.uow, vault, now)
    assert again.written == []
    assert sorted(again.unchanged) == [
        PROFILE,
        "skills/packing (Persona Desktop copy).md",
        "skills/weekly-report.md",
    ]

    retire(runtime.uow, "weekly-report", now)
    gone = export(runtime.uow, vault, now)
    assert gone.removed == ["skills/weekly-report.md"]
    assert not (vault / "skills" / "weekly-report.md").exists()
    assert (vault / "skills" / "packing.md").exists()


def test_an_enabled_export_without_a_folder_warns_and_keeps_the_decision(runtime: Runtime, cli: Cli) -> None:
    seeded = seed_memory(runtime, pending=1, applied=0)
    cli("config", "set", "export.enabled", "true")
    result = cli("approve", str(seeded.pending[0]))
    assert result.code == 0
    assert "export.path is empty" in result.err
    assert len(_applied(cli)) == 1
