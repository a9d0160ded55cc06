"""The storage budget the owner sets (`storage.max_mb`), and what uses the space.

Used space = the database's live pages + kept crops + kept clips + logs. Past 80 %
the tray warns; past 100 % the oldest screen captures and speech recordings that no
fact and no waiting candidate cites are deleted, with their crops and clips, until
the store is back under 90 % (so it does not trim again at the next capture). Chat
is the owner's own words and never trimmed. Each round is one journal entry naming
what went. Capture also pauses while the disk's free space is under
`storage.min_free_mb`, whatever the budget says.

The default budget, 2 GB, is sized from bench/bench_screen.py's "stored per hour" of
its mixed desktop: 1,131 lines, 84 KiB of text, 1.1 MiB with locators (word boxes), so
about 9 MB for a day of 8 hours and 270 MB a month before indexes: 2 GB holds
four months or more of screen text, beyond the default 30-day text retention. Kept
crops and clips fill it faster; that is when trimming starts.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from persona_desktop.ports import CaptureToFree, UnitOfWorkFactory
from persona_desktop.services.media import delete_media, media_paths

MB = 1_000_000
WARN_AT = 0.8
TRIM_TO = 0.9
MEDIA_FOLDERS = {"crops": "screens", "clips": "clips", "logs": "logs"}
_BATCH = 50


@dataclass(frozen=True, slots=True)
class SpaceReport:
    """What uses the space, in bytes."""

    database: int  # live pages of the store
    database_file: int  # the store's file and WAL on disk (free pages included)
    files: dict[str, int]  # crops, clips, logs
    text_by_kind: dict[str, int] = field(default_factory=dict)  # estimate: chat, screen, speech
    budget: int = 0
    free_disk: int = 0

    @property
    def used(self) -> int:
        return self.database + sum(self.files.values())

    @property
    def fraction(self) -> float:
        return self.used / self.budget if self.budget else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "used_bytes": self.used,
            "budget_bytes": self.budget,
            "used_fraction": round(self.fraction, 4),
            "database_bytes": self.database,
            "database_file_bytes": self.database_file,
            "text_bytes_by_kind": self.text_by_kind,
            "crops_bytes": self.files.get("crops", 0),
            "clips_bytes": self.files.get("clips", 0),
            "logs_bytes": self.files.get("logs", 0),
            "free_disk_bytes": self.free_disk,
        }

    def lines(self) -> list[str]:
        """For `sources` and `storage`: one line per use, largest first."""
        text = ", ".join(
            f"{k} {human(v)}" for k, v in sorted(self.text_by_kind.items(), key=lambda kv: -kv[1])
        )
        out = [
            f"storage: {human(self.used)} of {human(self.budget)} ({self.fraction:.0%}); "
            f"{human(self.free_disk)} free on the disk",
            f"  text and memory (database): {human(self.database)}"
            + (f" (fragments: {text})" if text else ""),
            f"  screen crops: {human(self.files.get('crops', 0))}",
            f"  speech clips: {human(self.files.get('clips', 0))}",
        ]
        if self.files.get("logs"):
            out.append(f"  logs: {human(self.files['logs'])}")
        return out


def human(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def free_disk(data_dir: Path) -> int:
    try:
        return shutil.disk_usage(data_dir).free
    except OSError:
        return 0


def measure(
    uow_factory: UnitOfWorkFactory, data_dir: Path, budget_mb: int, detailed: bool = False
) -> SpaceReport:
    with uow_factory.read() as uow:
        space = uow.storage.space(detailed)
    files = {name: folder_bytes(data_dir / folder) for name, folder in MEDIA_FOLDERS.items()}
    return SpaceReport(
        space.used_bytes,
        space.file_bytes,
        files,
        {k.value: v for k, v in space.text_by_kind.items()},
        budget_mb * MB,
        free_disk(data_dir),
    )


@dataclass(frozen=True, slots=True)
class TrimResult:
    before: SpaceReport
    after: SpaceReport
    captures: int = 0
    fragments: int = 0
    media_files: int = 0

    @property
    def still_over(self) -> bool:
        return self.after.fraction > 1.0


def enforce_budget(
    uow_factory: UnitOfWorkFactory, data_dir: Path, budget_mb: int, now: datetime
) -> TrimResult:
    """Past the budget, delete the oldest uncited captures (journaled) until under 90 %.

    Each round picks, oldest first, just enough captures to free what is over 90 %
    (their fragments' bytes and their crops' and clips' sizes), deletes them in one
    transaction with one journal entry, then measures again."""
    before = report = measure(uow_factory, data_dir, budget_mb)
    captures = fragments = files = 0
    while report.fraction > 1.0 or (captures and report.fraction > TRIM_TO):
        need = report.used - int(TRIM_TO * report.budget)
        with uow_factory() as uow:
            chosen: list[CaptureToFree] = []
            paths: set[str] = set()
            freed = 0
            for capture in uow.storage.uncited_captures(_BATCH):
                if freed >= need:
                    break
                own = media_paths(uow.fragments.of_source(capture.source_id))
                freed += capture.text_bytes + _sizes(own, data_dir)
                paths |= own
                chosen.append(capture)
            if not chosen:
                break
            deleted = sum(uow.fragments.delete_source(c.source_id) for c in chosen)
            uow.journal.append(
                at=now,
                actor="storage",
                action="captures.trimmed",
                entity="source",
                data={
                    "reason": f"over the storage budget ({report.fraction:.0%} of {budget_mb} MB)",
                    "rule": "oldest first; only captures that no fact and no waiting candidate cites",
                    "sources": [c.source_id for c in chosen],
                    "kinds": sorted({c.kind.value for c in chosen}),
                    "oldest": chosen[0].captured_at.isoformat(),
                    "newest": chosen[-1].captured_at.isoformat(),
                    "fragments": deleted,
                    "media_files": len(paths),
                },
            )
            uow.commit()
        files += delete_media(paths, data_dir)
        with uow_factory() as uow:
            uow.storage.reclaim()
            uow.commit()
        captures += len(chosen)
        fragments += deleted
        report = measure(uow_factory, data_dir, budget_mb)
    return TrimResult(before, report, captures, fragments, files)


def _sizes(paths: set[str], data_dir: Path) -> int:
    total = 0
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else data_dir / raw
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total
