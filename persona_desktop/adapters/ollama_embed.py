"""The `Embedder` port over Ollama's `/api/embed`, with the same one-line errors as the chat.

The reply is untrusted like any model output: a vector count that does not match the
inputs, vectors of different lengths, or values that are not finite numbers are refused
as a whole, so nothing half-usable is stored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.errors import LLMError

MAX_DIMENSIONS = 8192


class OllamaEmbedder(OllamaLLM):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._errors():
            response = self._client.embed(model=self.model, input=list(texts))
        vectors = [list(v) for v in (response.embeddings or [])]
        bad = f"Ollama at {self.host} sent embeddings that cannot be used"
        if len(vectors) != len(texts):
            raise LLMError(f"{bad}: {len(vectors)} vector(s) for {len(texts)} text(s)")
        dims = {len(v) for v in vectors}
        if len(dims) != 1 or not 0 < next(iter(dims)) <= MAX_DIMENSIONS:
            raise LLMError(f"{bad}: vector lengths {sorted(dims)[:4]}")
        out: list[list[float]] = []
        for v in vectors:
            try:
                floats = [float(x) for x in v]
            except (TypeError, ValueError):
                raise LLMError(f"{bad}: a value is not a number") from None
            if not all(math.isfinite(x) for x in floats):
                raise LLMError(f"{bad}: a value is not finite")
            out.append(floats)
        return out
