"""Look at an Ollama host the way the owner would need to: is anything there, is it Ollama,
which models does it have; and is an `ollama` program installed on this computer.

One GET of `/api/tags` with a short timeout, never a chat call: cheap enough to run
when a cycle failed or when Settings opens. The answer is untrusted: anything but
Ollama's JSON shape counts as "not Ollama".
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

import httpx

from persona_desktop.services.ollama_diagnosis import README_SECTION, Diagnosis, HostReply, diagnose

PROBE_TIMEOUT_S = 5.0
MAX_MODELS = 500


def probe_host(host: str, timeout_s: float = PROBE_TIMEOUT_S) -> HostReply:
    url = host.rstrip("/") + "/api/tags"
    try:
        response = httpx.get(url, timeout=timeout_s, follow_redirects=False)
    except httpx.TimeoutException as exc:
        return HostReply(connected=not isinstance(exc, httpx.ConnectTimeout), timed_out=True)
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL):
        return HostReply(connected=False)
    except httpx.HTTPError:
        return HostReply(connected=True, status=None)
    if response.status_code != 200:
        return HostReply(connected=True, status=response.status_code)
    try:
        body = response.json()
    except ValueError:
        return HostReply(connected=True, status=response.status_code)
    listed = body.get("models") if isinstance(body, dict) else None
    if not isinstance(listed, list):
        return HostReply(connected=True, status=response.status_code)
    names: list[str] = []
    for entry in listed[:MAX_MODELS]:
        name = entry.get("model") or entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name.strip() and name not in names:
            names.append(name.strip()[:200])
    return HostReply(connected=True, status=200, models=names)


def check_ollama(
    host: str,
    model: str,
    timeout_s: float = PROBE_TIMEOUT_S,
    which: Callable[[str], str | None] = shutil.which,
    guide: str = README_SECTION,
) -> Diagnosis:
    """The diagnosis of `host` for `model`; "installed" means an `ollama` program on PATH."""
    reply = probe_host(host, timeout_s)
    installed = which("ollama") is not None
    return diagnose(reply, host, model, installed=installed, timeout_s=timeout_s, guide=guide)
