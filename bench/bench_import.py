"""Chat import: throughput and peak memory for each export format, at N and 2N messages.

`-utf16` formats are the same exports written as UTF-16LE with a byte order mark (as
WhatsApp on some phones and Windows tools write them); their time is also printed as a
ratio to the UTF-8 file's, measured in the same run.

Each import runs as its own `persona-desktop ingest chat` process on a fresh data dir;
its peak RSS comes from the kernel (wait4). Target: under 300 MB at any size, flat
when the file doubles (the exports are streamed, one message or conversation at a time).

    .venv/bin/python bench/bench_import.py [--messages 100000] [--formats telegram,chatgpt,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.store_modes import headless_keys  # noqa: E402

START = 1_700_000_000
WORDS = (  # noqa: SIM905
    "I think we should meet on Sunday near the old bridge, bring the blue bag and the tickets; "
    "my sister says the new place on the corner is great for breakfast"
).split()


def _text(i: int) -> str:
    n = 8 + i % 17
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(n)) + f" #{i}"


def _dump(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False))


def telegram(path: Path, n: int) -> None:
    per_chat = 5000
    with path.open("w", encoding="utf-8") as out:
        out.write('{"about": "bench", "personal_information": {"user_id": 1001}, "chats": {"list": [')
        for c in range(0, n, per_chat):
            if c:
                out.write(",")
            out.write(f'{{"name": "Friend {c}", "type": "personal_chat", "id": {100 + c}, "messages": [')
            for i in range(c, min(n, c + per_chat)):
                if i > c:
                    out.write(",\n")
                text = _text(i)
                msg: dict[str, Any] = {
                    "id": i + 1,
                    "type": "message",
                    "date": "2023-11-14T22:13:20",
                    "date_unixtime": str(START + i * 30),
                    "from": "Ann" if i % 2 else "Bob",
                    "from_id": "user1001" if i % 2 else f"user{100 + c}",
                    "text": text,
                    "text_entities": [{"type": "plain", "text": text}],
                }
                if i % 10 == 0:
                    msg["reply_to_message_id"] = i
                _dump(out, msg)
            out.write("]}")
        out.write("]}}")


def jsonl(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            _dump(
                out,
                {
                    "id": str(i),
                    "chat": f"chat{i // 5000}",
                    "chat_type": "personal",
                    "from": "Ann" if i % 2 else "Bob",
                    "role": "owner" if i % 2 else "other",
                    "date": f"2023-11-14T22:{i // 60 % 60:02d}:{i % 60:02d}+00:00",
                    "text": _text(i),
                },
            )
            out.write("\n")


def chatgpt(path: Path, n: int) -> None:
    per_conv = 50
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for c in range(0, n, per_conv):
            mapping: dict[str, Any] = {
                "root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}
            }
            count = min(per_conv, n - c)
            for k in range(count):
                i = c + k
                role = "user" if k % 2 == 0 else "assistant"
                mapping[f"m{k}"] = {
                    "id": f"m{k}",
                    "message": {
                        "id": f"m{k}",
                        "author": {"role": role, "name": None, "metadata": {}},
                        "create_time": START + i * 30.5,
                        "content": {"content_type": "text", "parts": [_text(i)]},
                        "status": "finished_successfully",
                        "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                        "recipient": "all",
                    },
                    "parent": "root" if k == 0 else f"m{k - 1}",
                    "children": [f"m{k + 1}"] if k + 1 < count else [],
                }
            if c:
                out.write(",\n")
            _dump(
                out,
                {
                    "title": f"Conversation {c}",
                    "create_time": START + c * 30.5,
                    "mapping": mapping,
                    "current_node": f"m{count - 1}",
                    "conversation_id": f"conv-{c}",
                    "id": f"conv-{c}",
                },
            )
        out.write("]")


def claude(path: Path, n: int) -> None:
    per_conv = 50
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for c in range(0, n, per_conv):
            messages = []
            for k in range(min(per_conv, n - c)):
                i = c + k
                at = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(START + i * 30))
                text = _text(i)
                messages.append(
                    {
                        "uuid": f"msg-{i}",
                        "text": text,
                        "content": [{"type": "text", "text": text, "citations": []}],
                        "sender": "human" if k % 2 == 0 else "assistant",
                        "created_at": at,
                        "updated_at": at,
                        "attachments": [],
                        "files": [],
                    }
                )
            if c:
                out.write(",\n")
            _dump(out, {"uuid": f"conv-{c}", "name": f"Conversation {c}", "chat_messages": messages})
        out.write("]")


def whatsapp(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            t = time.localtime(START + i * 30)
            who = "Ann" if i % 2 else "Bob"
            text = _text(i)
            if i % 20 == 0:
                text += "\nand a second line"
            out.write(f"{time.strftime('%d/%m/%Y, %H:%M', t)} - {who}: {text}\n")


def utf16(make: Callable[[Path, int], None]) -> Callable[[Path, int], None]:
    """The export `make` writes, rewritten as UTF-16LE with a byte order mark, streaming."""

    def write(path: Path, n: int) -> None:
        plain = path.with_name(path.name + ".utf8")
        make(plain, n)
        with (
            plain.open(encoding="utf-8", newline="") as src,
            path.open("w", encoding="utf-16", newline="") as out,
        ):
            while chunk := src.read(1 << 20):
                out.write(chunk)
        plain.unlink()

    return write


FORMATS: dict[str, tuple[str, Callable[[Path, int], None], list[str]]] = {
    "telegram": ("result.json", telegram, []),
    "chatgpt": ("conversations.json", chatgpt, []),
    "claude": ("conversations.json", claude, []),
    "whatsapp": ("WhatsApp Chat with Bob.txt", whatsapp, ["--owner-name", "Ann"]),
    "jsonl": ("chat.jsonl", jsonl, []),
    "whatsapp-utf16": ("WhatsApp Chat with Bob.txt", utf16(whatsapp), ["--owner-name", "Ann"]),
    "telegram-utf16": ("result.json", utf16(telegram), []),
}


def view_speed(folder: Path, n: int) -> str:
    """MB/s of the file read through the importers' UTF-8 view, WhatsApp text as UTF-8 and as
    UTF-16LE (decoded chunk by chunk), in this process: what the decoding itself costs."""
    sys.path.insert(0, str(REPO))
    from persona_desktop.adapters.chat.files import ChatFile

    out = []
    for name, make in (("UTF-8", whatsapp), ("UTF-16LE", utf16(whatsapp))):
        file = folder / f"view-{name}.txt"
        make(file, n)
        start = time.perf_counter()
        with ChatFile(file).open() as stream:
            while stream.read(1 << 16):
                pass
        seconds = time.perf_counter() - start
        out.append(f"{name} {file.stat().st_size / 2**20 / seconds:,.0f} MB/s")
        file.unlink()
    return ", ".join(out)


def run_import(file: Path, data_dir: Path, extra: list[str]) -> tuple[float, int, dict[str, Any]]:
    """Seconds, peak RSS in bytes and the --json report of one import in its own process."""
    cmd = [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir), "ingest", "chat", str(file)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([*cmd, *extra, "--json"], stdout=out, stderr=err, cwd=REPO)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"import of {file} failed: {err.read().decode()}")
        return seconds, usage.ru_maxrss * 1024, json.loads(out.read())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    headless_keys()  # the stores are encrypted: no keyring here, a passphrase of the bench's own
    print(
        f"{'format':14} {'messages':>9} {'file MB':>8} {'seconds':>8} {'msg/s':>8} {'MB/s':>6} {'peak RSS MB':>12}"
    )
    flat: list[str] = []
    times: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        for name in args.formats.split(","):
            filename, make, extra = FORMATS[name]
            peaks = []
            for n in (args.messages, 2 * args.messages):
                folder = Path(tmp) / f"{name}-{n}"
                folder.mkdir()
                file = folder / filename
                make(file, n)
                size = file.stat().st_size
                seconds, peak, report = run_import(file, folder / "data", extra)
                read = report["added"] + report["already_known"] + report["skipped_total"]
                if read != n:
                    raise SystemExit(f"{name}: {read} messages accounted for, {n} written")
                peaks.append(peak)
                times[name, n] = seconds
                print(
                    f"{name:14} {n:>9,} {size / 2**20:>8.1f} {seconds:>8.1f} {n / seconds:>8,.0f} "
                    f"{size / 2**20 / seconds:>6.1f} {peak / 2**20:>12.1f}",
                    flush=True,
                )
                file.unlink()
            flat.append(f"{name} {peaks[1] / peaks[0]:.2f}x")
    print("peak RSS at 2N / at N: " + ", ".join(flat) + "  (1.00x = flat; target: under 300 MB at any size)")
    ratios = [
        f"{name} {times[name, n] / times[name.removesuffix('-utf16'), n]:.2f}x at {n:,}"
        for name, n in times
        if name.endswith("-utf16") and (name.removesuffix("-utf16"), n) in times
    ]
    if ratios:
        print("UTF-16 time / UTF-8 time: " + ", ".join(ratios))
        with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
            print(
                f"reading through the UTF-8 view alone ({args.messages:,} WhatsApp messages): "
                + view_speed(Path(tmp), args.messages)
            )


if __name__ == "__main__":
    main()
