"""About and Help: what the app is, where its data lives, how to get a model, the review keys."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QTextBrowser, QVBoxLayout, QWidget

from persona_desktop import __version__
from persona_desktop.services.ollama_diagnosis import RECOMMENDED_SMALL_MODEL
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.icons import app_icon, app_pixmap
from persona_desktop.ui.window_setup import prepare_window


def about_box(ctx: UiContext) -> QMessageBox:
    box = QMessageBox()
    box.setWindowTitle("About Persona Desktop")
    box.setIconPixmap(app_pixmap(64))
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(f"<h3>Persona Desktop {html.escape(__version__)}</h3>")
    box.setInformativeText(
        "<p>A long-term memory for your assistant, built on this computer from what you choose to"
        " share, with the source of every fact kept and every change reversible.</p>"
        f"<p>Nothing leaves this computer except calls to your own Ollama at"
        f" <b>{html.escape(ctx.settings.ollama_host())}</b>.</p>"
        f"<p>Your data: <code>{html.escape(str(ctx.data_dir))}</code></p>"
        "<p>Free software under the MIT license.</p>"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setWindowIcon(app_icon())
    return box


def help_html(ctx: UiContext) -> str:
    model = html.escape(ctx.settings.values.ollama.model)
    host = html.escape(ctx.settings.ollama_host())
    data = html.escape(str(ctx.data_dir))
    return f"""
<h2>Persona Desktop</h2>
<p>Persona keeps a memory for your assistant: facts about you, each with the exact place it came
from. It learns only from what you let it capture, and nothing is remembered without your
approval unless you said it yourself.</p>

<h3>Getting started</h3>
<ol>
<li>Choose what Persona may capture: <b>Screen capture</b> and <b>Speech capture</b> in the tray
menu, or import a chat with <code>persona-desktop ingest chat FILE</code>.</li>
<li>Get a local model running (below), then turn on the <b>sleep cycle</b> in Settings.</li>
<li>In the morning, open <b>Review</b> from the tray: approve, edit or reject what the night
proposed.</li>
<li>Open <b>Memory</b> to see everything remembered, why, and to revert or forget it.</li>
</ol>

<h3>Getting a local model</h3>
<p>Persona talks only to Ollama, a program that runs language models on your own computer
(now expected at <b>{host}</b>).</p>
<ol>
<li>Install Ollama: from your distribution's packages where it has them, else with the installer
from Ollama's own website.</li>
<li>Start it: <code>ollama serve</code> (installers often start it as a service already).</li>
<li>Download the model: <code>ollama pull {model}</code>. On a computer with less than 16 GB of
memory, take a smaller one: <code>ollama pull {RECOMMENDED_SMALL_MODEL}</code>, then choose it in
Settings.</li>
<li>In Settings, press <b>Check</b> next to the model: it says what is still missing.</li>
</ol>

<h3>The review window</h3>
<table cellspacing=4>
<tr><td><b>A</b></td><td>approve the selected proposals</td></tr>
<tr><td><b>E</b> or <b>F2</b></td><td>edit, then approve (Enter approves, Esc cancels)</td></tr>
<tr><td><b>R</b> or <b>Delete</b></td><td>reject</td></tr>
<tr><td><b>Ctrl+Z</b></td><td>undo the last decision, again and again</td></tr>
<tr><td><b>V</b></td><td>revert a fact under "Recently added"</td></tr>
<tr><td><b>F5</b></td><td>reload</td></tr>
</table>

<h3>Your data</h3>
<p>Everything is in <code>{data}</code>. Screen pictures and recordings are kept only if you
choose so in Settings, and only for as long as you set. You can forget a whole source or a day
of screen captures from the Memory window, or delete all captured data in Settings. Every change
is written to a journal that cannot be rewritten.</p>

<h3>Command line</h3>
<p>Everything the app does can be scripted: <code>persona-desktop --help</code> lists the
commands, for instance <code>persona-desktop sleep run</code>, <code>persona-desktop
candidates</code>, <code>persona-desktop facts why ID</code>.</p>
"""


class HelpWindow(QWidget):
    def __init__(self, ctx: UiContext) -> None:
        super().__init__()
        prepare_window(self, "Help", 720, 760)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        self.browser.document().setDocumentMargin(18)
        self.browser.setHtml(help_html(ctx))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.browser)
