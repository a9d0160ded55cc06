"""Why the model cannot be used, told apart case by case, each with the owner's next step.

"connection refused" says nothing to someone who never installed Ollama. What the
probe of a host found (`HostReply`) and whether an `ollama` program is installed are
turned here into one `Diagnosis`: the problem in a sentence and the command to run.
The probe itself is an adapter (`adapters/ollama_probe.py`); this module is pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

DEFAULT_PORT_HINT = "http://127.0.0.1:11434"
RECOMMENDED_SMALL_MODEL = "llama3.2:3b"  # ~2 GB, runs on a laptop without a graphics card
README_SECTION = "the README's 'Getting a local model'"
HELP_SECTION = "Help, 'Getting a local model'"


class Problem(StrEnum):
    READY = "ready"
    NOT_INSTALLED = "not_installed"
    NOT_RUNNING = "not_running"
    UNREACHABLE = "unreachable"  # a host on another machine: whether it is installed there is unknown
    SLOW = "slow"
    NOT_OLLAMA = "not_ollama"
    NO_MODELS = "no_models"
    MODEL_MISSING = "model_missing"


@dataclass(frozen=True, slots=True)
class HostReply:
    """What one GET /api/tags found: no connection, no answer in time, an answer that is
    not Ollama's (with its HTTP status), or the list of model names."""

    connected: bool
    timed_out: bool = False
    status: int | None = None
    models: list[str] | None = None


@dataclass(frozen=True, slots=True)
class Diagnosis:
    problem: Problem
    host: str
    model: str
    summary: str  # what is wrong, one sentence
    next_step: str  # what to do, with the command
    models: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return self.problem is Problem.READY

    def to_json(self) -> dict[str, object]:
        return {
            "problem": self.problem.value,
            "host": self.host,
            "model": self.model,
            "summary": self.summary,
            "next_step": self.next_step,
            "models": self.models,
        }


def is_local(host: str) -> bool:
    name = (urlsplit(host if "://" in host else f"http://{host}").hostname or "").lower()
    return name in ("localhost", "::1", "0.0.0.0") or name.startswith("127.")


def has_model(models: list[str], model: str) -> bool:
    """Ollama names: `llama3.2` means `llama3.2:latest`."""
    wanted = model if ":" in model else f"{model}:latest"
    return any(m in (model, wanted) for m in models)


def pull_advice(model: str) -> str:
    small = (
        ""
        if model == RECOMMENDED_SMALL_MODEL
        else f" (on a computer with less than 16 GB of memory, `ollama pull {RECOMMENDED_SMALL_MODEL}`"
        " instead, then choose it in Settings)"
    )
    return f"`ollama pull {model}`{small}"


def diagnose(
    reply: HostReply, host: str, model: str, installed: bool, timeout_s: float, guide: str = README_SECTION
) -> Diagnosis:
    """`guide` names where the owner reads how to install Ollama (the README, or the app's Help)."""

    def d(problem: Problem, summary: str, step: str, models: list[str] | None = None) -> Diagnosis:
        return Diagnosis(problem, host, model, summary, step, list(models or []))

    if not reply.connected:
        if not is_local(host):
            return d(
                Problem.UNREACHABLE,
                f"Nothing answers at {host}.",
                "Check the address in Settings, and that Ollama runs on that computer and listens on"
                " the network (start it there with `OLLAMA_HOST=0.0.0.0 ollama serve`).",
            )
        if not installed:
            return d(
                Problem.NOT_INSTALLED,
                f"Ollama is not installed on this computer (nothing answers at {host}).",
                f"Install Ollama (see {guide}), start it with `ollama serve`, then get the model:"
                f" {pull_advice(model)}.",
            )
        return d(
            Problem.NOT_RUNNING,
            f"Ollama is installed but not running (nothing answers at {host}).",
            "Start it with `ollama serve` (or `systemctl start ollama` where it runs as a service).",
        )
    if reply.timed_out:
        return d(
            Problem.SLOW,
            f"{host} took the connection but gave no answer within {timeout_s:g} s.",
            "Ollama may be busy loading a model: try again in a minute, or restart it with `ollama serve`.",
        )
    if reply.models is None:
        status = f" (HTTP {reply.status})" if reply.status is not None else ""
        return d(
            Problem.NOT_OLLAMA,
            f"Something answers at {host}{status}, but it is not Ollama.",
            f"Check the address and port in Settings (Ollama's default is {DEFAULT_PORT_HINT}).",
        )
    if not reply.models:
        return d(
            Problem.NO_MODELS,
            f"Ollama runs at {host} but has no model yet.",
            f"Get one: {pull_advice(model)}.",
        )
    if not has_model(reply.models, model):
        return d(
            Problem.MODEL_MISSING,
            f"Ollama runs at {host}, but the model {model} is not there (it has: {', '.join(reply.models)}).",
            f"Run `ollama pull {model}`, or choose one of those models in Settings.",
            reply.models,
        )
    return d(Problem.READY, f"Ollama at {host} is ready with {model}.", "", reply.models)
