"""A scripted Ollama-compatible host for the installer test (installer/test-deb).

Runs the test suite's loopback server (tests/ollama_server.py) with a scripted model
(tests/sleep_support.py) that proposes one owner fact for the chat line CLAIM_TEXT, so
the installed app's sleep cycle makes a real round trip over HTTP with the real client.
Prints the URL on the first stdout line, serves until stdin closes, then prints the
number of chat requests it answered on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel

CLAIM_TEXT = "I am allergic to peanuts, please remember that."
STATEMENT = "The owner is allergic to peanuts."


def main() -> int:
    model = ScriptedModel(claims={CLAIM_TEXT: Claim(STATEMENT)})
    with OllamaServer(models=["llama3.1:8b"]) as server:
        server.default = model
        print(server.url, flush=True)
        sys.stdin.read()  # until the test closes our stdin
    print(
        f"loopback LLM: {model.extraction_calls} extraction and "
        f"{model.generalization_calls} generalization call(s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
