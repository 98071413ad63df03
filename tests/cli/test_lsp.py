"""`adopter lsp` as an editor drives it: pygls' language client starts the command over stdio,
opens a zoo file and a small model, edits one without saving, hovers over a match and asks
for the quick fix, whose workspace edit is the file `apply` would write."""

import asyncio
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import ZOO  # noqa: E402

MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w1 = nn.Linear(d, 4 * d, bias=False)
            self.w3 = nn.Linear(d, 4 * d, bias=False)
            self.w2 = nn.Linear(4 * d, d, bias=False)

        def forward(self, x):
            return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))
""")


class _Editor:
    """A client that keeps the diagnostics the server publishes, by document."""

    def __init__(self) -> None:
        self.client = LanguageClient("test-editor", "1")
        self.published: dict[str, asyncio.Queue] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.queue(params.uri).put_nowait(params)

    def queue(self, uri: str) -> asyncio.Queue:
        return self.published.setdefault(uri, asyncio.Queue())

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        return list((await asyncio.wait_for(self.queue(uri).get(), timeout=60)).diagnostics)

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = from_fs_path(str(path))
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
        return uri


async def _session(tmp_path: Path) -> None:
    editor = _Editor()
    cache = tmp_path / "cache"
    # the repository's configuration chooses the kernel set the quick fix emits
    (tmp_path / "pyproject.toml").write_text('[tool.adopter]\nkernels = "torch"\n')
    scratch = tmp_path / "tmp"  # the server's temporary folder: the copies of unsaved buffers
    scratch.mkdir()
    await editor.client.start_io(sys.executable, "-m", "adopter", "lsp",
                                 env={**os.environ, "ADOPTER_CACHE": str(cache), "TMPDIR": str(scratch)}, cwd=str(tmp_path))
    await editor.client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                                root_uri=from_fs_path(str(tmp_path))))
    editor.client.initialized(types.InitializedParams())
    try:
        # a zoo file, saved: one diagnostic per match, at the match's place
        bert = tmp_path / "modeling_bert.py"
        shutil.copy(ZOO / "modeling_bert.py", bert)
        bert_uri = editor.open(bert, bert.read_text())
        found = await editor.diagnostics(bert_uri)
        matches = [d for d in found if d.severity == types.DiagnosticSeverity.Information]
        assert {d.code for d in matches} >= {"softmax", "dropout_layernorm"}
        assert all(d.source == "adopter" and d.message.startswith(f"{d.code}: ") for d in matches)
        bert_lines = bert.read_text().splitlines()
        softmaxes = [d for d in matches if d.code == "softmax"]
        assert softmaxes and all("softmax" in bert_lines[d.range.start.line] for d in softmaxes)
        # a match no kernel set rewrites: the quick fix is there, disabled, with the reason
        actions = await editor.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=bert_uri), range=softmaxes[0].range,
            context=types.CodeActionContext(diagnostics=[softmaxes[0]])))
        (refused,) = [a for a in actions if a.title.startswith("Rewrite with softmax")]
        assert refused.edit is None and "already runs" in refused.disabled.reason

        # a model edited and not saved: the buffer's text is analysed, not the file's
        gate = tmp_path / "gate.py"
        gate.write_text("import torch\n")
        gate_uri = editor.open(gate, gate.read_text())
        assert await editor.diagnostics(gate_uri) == []
        editor.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=gate_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=MODEL)]))
        (swiglu,) = [d for d in await editor.diagnostics(gate_uri) if d.code == "swiglu"]
        assert swiglu.range.start.line == MODEL.splitlines().index(
            "        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))")

        # hover: the rule's header
        hover = await editor.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=gate_uri), position=swiglu.range.start))
        assert "What it does:" in hover.contents.value and "swiglu" in hover.contents.value

        # the quick fix: the whole file as `apply` rewrites it
        actions = await editor.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=gate_uri), range=swiglu.range,
            context=types.CodeActionContext(diagnostics=[swiglu])))
        (fix,) = [a for a in actions if a.title.startswith("Rewrite with swiglu")]
        assert fix.disabled is None, fix.disabled
        (edit,) = fix.edit.changes[gate_uri]
        assert "adopter_kernels" in edit.new_text
        assert "nn.functional.silu(self.w1(x)) * self.w3(x)" not in edit.new_text
        assert list(fix.diagnostics) == [swiglu]
        assert gate.read_text() == "import torch\n"  # nothing written: the editor applies the edit
    finally:
        await editor.client.shutdown_async(None)
        editor.client.exit(None)
        await editor.client.stop()
    assert list(scratch.iterdir()) == []  # the buffers' copies went with the server


def test_the_language_server_reports_hovers_and_rewrites_matches_in_open_files(tmp_path):
    asyncio.run(_session(tmp_path))
