"""How each setting reads in the Settings window: its label, a plain-words help line, its unit,
and where it sits (the short General page, or a section of Advanced).

The keys and their meaning are a contract (DESIGN.md); only the words and the grouping
are the window's. No developer words here: no "fragments", "5xx", "toolsets", "lease".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Text:
    label: str
    help: str = ""
    unit: str = ""  # shown after a number: " minutes"
    section: str = ""  # Advanced section; "" on the General page
    kind: str = ""  # a special editor: "folder", "file", "microphone", "model", "choices"


GENERAL = "General"
ADVANCED = "Advanced"

# The General page, top to bottom (the data folder and the delete button follow them).
GENERAL_KEYS = (
    "capture.screen_enabled",
    "capture.speech_enabled",
    "sleep.enabled",
    "sleep.window_start",
    "sleep.window_end",
    "ollama.host",
    "ollama.model",
    "app.start_at_login",
)
GENERAL_SECTIONS = {
    "capture.screen_enabled": "What Persona may capture",
    "sleep.enabled": "Nightly sleep cycle",
    "ollama.host": "Local model (Ollama)",
    "app.start_at_login": "This computer",
}

SLEEP, SCORE, MODEL, SCREEN, SPEECH, REVIEW, CHAT, OTHERS, STORAGE = (
    "Sleep cycle",
    "How proposals are scored",
    "Local model",
    "Screen capture",
    "Speech capture",
    "Review of your chats with the assistant",
    "Chat, search and export",
    "Other assistants (MCP)",
    "Storage and encryption",
)
ADVANCED_SECTIONS = (SLEEP, SCORE, MODEL, SCREEN, SPEECH, REVIEW, CHAT, OTHERS, STORAGE)

TEXTS: dict[str, Text] = {
    # General
    "capture.screen_enabled": Text(
        "Capture the screen",
        "Reads the text on your screen every few seconds. Password managers and private windows are skipped.",
    ),
    "capture.speech_enabled": Text(
        "Capture speech", "Writes down what your microphone hears, with a speech model on this computer."
    ),
    "sleep.enabled": Text(
        "Run the sleep cycle every night",
        "Turns what was captured into proposed memories. Off until you turn it on.",
    ),
    "sleep.window_start": Text("Not before", "The cycle runs only between these times, when you are away."),
    "sleep.window_end": Text("Not after"),
    "ollama.host": Text("Address", "Leave empty for Ollama on this computer."),
    "ollama.model": Text("Model", "Pick one of the models your Ollama has, or type a name.", kind="model"),
    "app.start_at_login": Text("Start Persona Desktop when I log in"),
    # Advanced: sleep cycle
    "sleep.quiet_minutes": Text(
        "Wait until I have been away for",
        "The cycle never runs while you use the computer.",
        " minutes",
        SLEEP,
    ),
    "sleep.period_days": Text("Read what was captured in the last", "", " days", SLEEP),
    "sleep.max_documents": Text(
        "At most this many model calls per night", "More reads more, but takes longer.", "", SLEEP
    ),
    "sleep.lease_seconds": Text(
        "Consider a cycle stuck after",
        "If a cycle stops answering for this long (the app crashed, say), the next one may take over.",
        " s",
        SLEEP,
    ),
    # Advanced: scoring
    "sleep.threshold": Text(
        "Add by itself from a score of",
        "Only facts proven by your own words are ever added without asking you.",
        "",
        SCORE,
    ),
    "sleep.review_floor": Text(
        "Ask me about proposals from a score of", "Weaker proposals are set aside, not shown.", "", SCORE
    ),
    "sleep.auto_apply_per_document": Text(
        "Add by itself at most, from one conversation",
        "More than this from one conversation or page waits for you: too many at once. 0: always ask me.",
        " facts",
        SCORE,
    ),
    "sleep.auto_apply_per_run": Text(
        "Add by itself at most, per night or chat review",
        "The rest waits for you. 0: always ask me.",
        " facts",
        SCORE,
    ),
    "sleep.weights.relevance": Text("Weight: how much it says about you", "", "", SCORE),
    "sleep.weights.frequency": Text("Weight: how often it came up", "", "", SCORE),
    "sleep.weights.diversity": Text("Weight: in how many separate conversations", "", "", SCORE),
    "sleep.weights.recency": Text("Weight: how recently it was said", "", "", SCORE),
    "sleep.weights.consolidation": Text("Weight: how well it fits what is known", "", "", SCORE),
    "sleep.weights.richness": Text("Weight: how specific it is", "", "", SCORE),
    # Advanced: model
    "ollama.timeout_seconds": Text("Wait for an answer at most", "", " s", MODEL),
    "ollama.retries": Text(
        "Try again after a failed call",
        "When the model does not answer or fails for a moment.",
        " times",
        MODEL,
    ),
    "ollama.retry_backoff_seconds": Text(
        "First wait before trying again", "Doubles at each new try.", " s", MODEL
    ),
    # Advanced: screen
    "capture.interval_seconds": Text("Look at the screen every", "", " s", SCREEN),
    "capture.max_gap_seconds": Text(
        "Read the screen again at least every", "Even when nothing seems to have changed.", " s", SCREEN
    ),
    "capture.ocr_languages": Text(
        "Languages of the text",
        "Tesseract language codes joined by +, e.g. eng+rus (needs the tesseract-ocr-rus package).",
        "",
        SCREEN,
    ),
    "capture.ocr_min_confidence": Text(
        "Ignore text read with less confidence than", "Blurry or tiny text is noise.", " %", SCREEN
    ),
    "capture.exclude_apps": Text(
        "Never capture these applications", "Matched against the program's name, ignoring case.", "", SCREEN
    ),
    "capture.exclude_titles": Text(
        "Never capture windows whose title contains", "Ignoring case.", "", SCREEN
    ),
    "capture.keep_images": Text(
        "Keep a small picture of what was read",
        "So you can see where a fact came from. Card numbers and passwords are blacked out first.",
        "",
        SCREEN,
    ),
    "capture.image_retention_days": Text("Keep those pictures for", "", " days", SCREEN),
    "capture.text_retention_days": Text(
        "Keep screen and speech text for",
        "Text a remembered fact comes from is kept as long as the fact.",
        " days",
        SCREEN,
    ),
    "capture.periodic_with_flash": Text(
        "Capture every few seconds even though the screen flashes",
        "On GNOME with Wayland every screenshot flashes the screen and plays a sound.",
        "",
        SCREEN,
    ),
    # Advanced: speech
    "capture.microphone": Text("Microphone", "", "", SPEECH, kind="microphone"),
    "capture.keep_audio": Text(
        "Keep short recordings of what was said", "So you can listen to where a fact came from.", "", SPEECH
    ),
    "capture.audio_retention_days": Text("Keep those recordings for", "", " days", SPEECH),
    "capture.whisper_model": Text(
        "Speech model folder",
        "Empty: the built-in English model. For other languages, a downloaded faster-whisper model folder.",
        "",
        SPEECH,
        kind="folder",
    ),
    "capture.whisper_language": Text(
        "Spoken language",
        "A code such as en or ru; empty means detect it (the built-in model is English only).",
        "",
        SPEECH,
    ),
    # Advanced: chat review
    "review.enabled": Text(
        "Look for memories in my chats with the assistant",
        "Every few messages; what it finds waits for your review.",
        "",
        REVIEW,
    ),
    "review.memory_interval": Text("Look for facts every", "", " messages", REVIEW),
    "review.skill_interval": Text("Look for skills every", "", " messages", REVIEW),
    "review.allowed_toolsets": Text("It may propose", "", "", REVIEW, kind="choices"),
    "review.max_iterations": Text("At most this many steps per review", "", "", REVIEW),
    "review.timeout_seconds": Text("Stop a review after", "", " s", REVIEW),
    "review.memory_prompt_path": Text(
        "Own instructions for finding facts", "Empty: the built-in ones.", "", REVIEW, kind="file"
    ),
    "review.skill_prompt_path": Text(
        "Own instructions for finding skills", "Empty: the built-in ones.", "", REVIEW, kind="file"
    ),
    "review.combined_prompt_path": Text(
        "Own instructions for both at once", "Empty: the built-in ones.", "", REVIEW, kind="file"
    ),
    # Advanced: chat and export
    "chat.include_observations": Text(
        "Tell the assistant about observations",
        "Patterns the sleep cycle noticed, always marked as unverified guesses.",
        "",
        CHAT,
    ),
    "export.enabled": Text(
        "Copy what is remembered into a folder of Markdown notes", "An Obsidian vault works.", "", CHAT
    ),
    "export.path": Text("Notes folder", "", "", CHAT, kind="folder"),
    "recall.budget_tokens": Text(
        "Room for remembered facts in each chat message",
        "The most relevant facts first; 0 gives the assistant none.",
        " tokens",
        CHAT,
    ),
    "recall.embeddings": Text(
        "Also find facts by meaning, not only by words",
        "Uses your Ollama to compare meanings; kept on this computer.",
        "",
        CHAT,
    ),
    "recall.embedding_model": Text("Model for finding by meaning", "", "", CHAT),
    "search.global_shortcut": Text(
        "Key that opens search from anywhere", "For example Ctrl+Alt+Space (X11 only); empty: none.", "", CHAT
    ),
    # Advanced: other assistants
    "mcp.enabled": Text(
        "Let other assistants use this memory",
        "Over MCP, started by them with `persona-desktop mcp`.",
        "",
        OTHERS,
    ),
    "mcp.read_scopes": Text("They may read", "", "", OTHERS, kind="choices"),
    "mcp.allow_proposals": Text(
        "They may propose facts", "A proposal only waits for your review, like any other.", "", OTHERS
    ),
    # Advanced: storage
    "storage.encrypted": Text(
        "Keep everything encrypted on this disk",
        "What was captured, kept pictures and recordings. The key is in your keyring, or under your "
        "passphrase.",
        "",
        STORAGE,
    ),
    "storage.max_mb": Text(
        "Use at most",
        "Past 80 % you are told; past 100 % the oldest screen and speech captures that no remembered "
        "fact comes from are deleted. Chats never are.",
        " MB",
        STORAGE,
    ),
    "storage.min_free_mb": Text(
        "Pause capture while the disk has less free than", "It resumes by itself.", " MB", STORAGE
    ),
}

CHOICES = {
    "review.allowed_toolsets": (("memory", "facts about you"), ("skills", "skills (how-to notes)")),
    "mcp.read_scopes": (
        ("facts", "remembered facts"),
        ("chat", "captured chats"),
        ("screen", "screen text"),
        ("speech", "speech transcripts"),
    ),
}


def text_for(key: str) -> Text:
    found = TEXTS.get(key)
    if found is not None:
        return found
    tail = key.split(".", 1)[-1].replace("_", " ").replace(".", ": ")
    return Text(tail[:1].upper() + tail[1:], section=SLEEP)
