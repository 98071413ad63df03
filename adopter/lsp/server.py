"""The language server: diagnostics for the matches and near misses of each open file as it is
edited, the rule's header on hover over a match, and a quick fix that rewrites one match.

Everything it knows comes from adopter.api.editor; this module speaks the protocol (pygls,
lsprotocol): positions in UTF-16 code units from 0, as LSP counts them, where the analysis
counts lines from 1 and columns in UTF-8 bytes, as Python's `ast` does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from adopter.api.editor import DocumentReport, Session, rule_header, rule_summary
from adopter.api.output import installed_version
from adopter.records import Match

SOURCE = "adopter"
SETTLE_SECONDS = 0.3  # edits closer together than this are analysed once, after the last


@dataclass
class _Analysed:
    version: int | None
    text: str
    report: DocumentReport


class AdopterServer(LanguageServer):
    def __init__(self, session: Session | None = None):
        super().__init__(SOURCE, installed_version() or "source", text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.session = session or Session()
        self.analysed: dict[str, _Analysed] = {}

    async def refresh(self, uri: str, settle: bool = False) -> None:
        """Analyse the document's current text and publish its diagnostics, unless it changed
        meanwhile (a later refresh publishes for the newer text)."""
        if settle:
            version = self.workspace.get_text_document(uri).version
            await asyncio.sleep(SETTLE_SECONDS)
            if self.workspace.get_text_document(uri).version != version:
                return
        document = self.workspace.get_text_document(uri)
        version, text, path = document.version, document.source, Path(to_fs_path(uri) or uri)
        report = await asyncio.to_thread(self.session.analyse, path, text)
        if self.workspace.get_text_document(uri).version != version:
            return
        self.analysed[uri] = _Analysed(version, text, report)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=_diagnostics(report, text.splitlines())))


def _position(lines: list[str], line: int, byte_col: int) -> types.Position:
    """An analysis position (line from 1, UTF-8 byte column) as LSP's (both from 0, UTF-16 units)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    prefix = text.encode()[:byte_col].decode(errors="replace")
    return types.Position(line=max(line - 1, 0), character=len(prefix.encode("utf-16-le")) // 2)


def _match_range(lines: list[str], match: Match) -> types.Range:
    return types.Range(_position(lines, match.line, match.col), _position(lines, match.end_line, match.end_col))


def _diagnostics(report: DocumentReport, lines: list[str]) -> list[types.Diagnostic]:
    found = [types.Diagnostic(range=_match_range(lines, m), severity=types.DiagnosticSeverity.Information,
                              source=SOURCE, code=m.rule, message=f"{m.rule}: {rule_summary(m.rule)}")
             for m in report.matches]
    near = [types.Diagnostic(range=types.Range(_position(lines, m.line, m.col), _position(lines, m.line, 1 << 20)),
                             severity=types.DiagnosticSeverity.Hint, source=SOURCE, code=m.rule,
                             message=f"{m.rule}: near miss ({m.check}): {m.detail}")
            for m in report.near_misses]
    problems = [types.Diagnostic(range=types.Range(_position(lines, d.line or 1, 0), _position(lines, d.line or 1, 1 << 20)),
                                 severity=(types.DiagnosticSeverity.Error if d.severity == "error"
                                           else types.DiagnosticSeverity.Warning),
                                 source=SOURCE, message=d.message)
                for d in report.diagnostics]
    return found + near + problems


def _contains(outer: types.Range, position: types.Position) -> bool:
    start, end = outer.start, outer.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) \
        and (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def build(session: Session | None = None) -> AdopterServer:
    """A server with its features registered (a function: each test starts its own)."""
    server = AdopterServer(session)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: AdopterServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: AdopterServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.refresh(params.text_document.uri, settle=True)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: AdopterServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AdopterServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.analysed.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AdopterServer, params: types.HoverParams) -> types.Hover | None:
        analysed = ls.analysed.get(params.text_document.uri)
        if analysed is None:
            return None
        lines = analysed.text.splitlines()
        for match in analysed.report.matches:
            if _contains(_match_range(lines, match), params.position):
                text = f"**{match.rule}** (adopter)\n\n```text\n{rule_header(match.rule)}\n```"
                return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                                   range=_match_range(lines, match))
        return None

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def code_action(ls: AdopterServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        analysed = ls.analysed.get(uri)
        if analysed is None or ls.workspace.get_text_document(uri).version != analysed.version:
            return []
        lines, path = analysed.text.splitlines(), Path(to_fs_path(uri) or uri)
        actions = []
        for match in analysed.report.matches:
            where = _match_range(lines, match)
            if not _overlaps(where, params.range):
                continue
            patched, why = await asyncio.to_thread(ls.session.rewrite, path, analysed.text, match)
            title = f"Rewrite with {match.rule} (adopter)"
            if patched is None:
                actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                                disabled=types.CodeActionDisabled(reason=why)))
                continue
            whole = types.Range(types.Position(0, 0), types.Position(len(lines) + 1, 0))
            edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=patched)]})
            actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, edit=edit,
                                            diagnostics=[d for d in (params.context.diagnostics or [])
                                                         if d.source == SOURCE and d.code == match.rule
                                                         and _overlaps(d.range, where)]))
        return actions

    return server


def main() -> None:
    """Serve over stdio until the client says exit."""
    build().start_io()
