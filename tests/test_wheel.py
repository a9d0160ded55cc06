"""Installed as a wheel, the app has its package data: the review prompts (and the icon);
it requires the libraries of encryption at rest and keeps its store encrypted.

The wheel is built from a copy of the sources (the checkout stays clean), installed
without dependencies into a fresh venv that reaches this venv's packages, and its
`persona-desktop` reviews a conversation against the loopback Ollama server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import DB_FILE
from tests.conftest import chat_line, write_jsonl
from tests.ollama_server import OllamaServer

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(240)


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180) -> str:
    proc = subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{args[:4]} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    shutil.copytree(
        REPO / "persona_desktop", src / "persona_desktop", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(src), cwd=work
    )
    [wheel] = (work / "dist").glob("persona_desktop-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        _run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work).strip()
    )
    # the dependencies come from this venv (a path line: its own .pth files, the editable
    # install of the checkout among them, are not read)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "-q",
        "--no-deps",
        str(wheel),
        cwd=work,
    )
    return env_dir / "bin"


def test_the_installed_wheel_reviews_a_conversation(
    installed: Path, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONPATH", None)
    where = _run(
        str(installed / "python"),
        "-c",
        "import persona_desktop; print(persona_desktop.__file__)",
        cwd=tmp_path,
        env=env,
    )
    assert where.startswith(str(installed.parent)), f"not the installed copy: {where}"
    exe = str(installed / "persona-desktop")
    data = ["--data-dir", str(tmp_path / "data")]
    conv = dict(chat="gpt", chat_type="personal")
    lines = [
        chat_line("1", "I am allergic to peanuts.", **conv),
        chat_line("2", "Noted!", role="assistant", **conv),
    ]
    _run(exe, *data, "ingest", "chat", str(write_jsonl(tmp_path / "gpt.jsonl", lines)), cwd=tmp_path, env=env)
    _run(exe, *data, "config", "set", "ollama.host", ollama_server.url, cwd=tmp_path, env=env)
    ollama_server.reply(
        "",
        tool_calls=[
            ("propose_fact", {"statement": "The owner is allergic to peanuts", "refs": ["chat:gpt:1"]})
        ],
    )
    ollama_server.reply("Done.")
    out = json.loads(_run(exe, *data, "review", "run", "--json", cwd=tmp_path, env=env))
    assert out["status"] == "done" and out["warnings"] == []
    assert out["summary"] == "Memory review: 1 fact proposed"
    prompt = ollama_server.chat_bodies()[0]["messages"][-1]["content"]
    assert "You cannot write memory" in prompt  # the built-in prompt, read from the installed package
    icon = _run(
        str(installed / "python"),
        "-c",
        "from importlib import resources; "
        "print(len((resources.files('persona_desktop') / 'resources/icons/persona-desktop.svg').read_bytes()))",
        cwd=tmp_path,
        env=env,
    )
    assert int(icon) > 100
    # the installed app kept the conversation and the proposal in an encrypted store
    data_dir = tmp_path / "data"
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    readable = [p.name for p in data_dir.rglob("*") if p.is_file() and b"peanuts" in p.read_bytes()]
    assert not readable, f"plain text in the installed app's data dir: {readable}"
    assert json.loads(_run(exe, *data, "storage", "--json", cwd=tmp_path, env=env))["encrypted"] is True


def test_the_wheel_requires_the_libraries_of_encryption_at_rest(installed: Path) -> None:
    """Installed from the wheel alone, pip must pull in SQLCipher, AES-GCM and the keyring."""
    [metadata] = installed.parent.glob("lib/python*/site-packages/persona_desktop-*.dist-info/METADATA")
    requires = {
        re.split(r"[\s<>=!~;\[(]", line.removeprefix("Requires-Dist:").strip(), maxsplit=1)[0].lower()
        for line in metadata.read_text(encoding="utf-8").splitlines()
        if line.startswith("Requires-Dist:")
    }
    assert {"sqlcipher3", "cryptography", "keyring"} <= requires, sorted(requires)
