"""A proposed file change as an LSP WorkspaceEdit (workspace/applyEdit style): one TextEdit per
changed run of lines, or for a new file a CreateFile and one insert, so that the edits applied
to the base text give exactly the proposed text, and so the bytes of `proposedSha256`."""

from __future__ import annotations

import difflib
import re

from ...protocol import review as shapes  # LSP's own WorkspaceEdit shapes

# LSP ends a line at \r\n, \n or \r; each line keeps its ending.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines_of(text: str) -> list[str]:
    return _LINE.findall(text)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def line_start(lines: list[str], index: int) -> shapes.Position:
    """Where line `index` starts; past the last line, the end of the text."""
    if index < len(lines):
        return shapes.Position(line=index, character=0)
    if lines and not lines[-1].endswith(("\n", "\r")):
        return shapes.Position(line=len(lines) - 1, character=utf16_length(lines[-1]))
    return shapes.Position(line=len(lines), character=0)


def text_edits(base: str, proposed: str) -> list[shapes.TextEdit]:
    """One edit per run of lines that differs, in document order."""
    old, new = lines_of(base), lines_of(proposed)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        shapes.TextEdit(
            range=shapes.Range(start=line_start(old, first), end=line_start(old, last)),
            newText="".join(new[start:end]),
        )
        for tag, first, last, start, end in matcher.get_opcodes()
        if tag != "equal"
    ]


def workspace_edit(
    uri: str, base_text: str | None, proposed_text: str, removes_file: bool
) -> shapes.WorkspaceEdit | None:
    """None when the file is removed (the preview says `removesFile`)."""
    if removes_file:
        return None
    document = shapes.VersionedDocument(uri=uri)
    if base_text is None:
        start = shapes.Position(line=0, character=0)
        insert = shapes.TextEdit(
            range=shapes.Range(start=start, end=start),
            newText=proposed_text,
        )
        return shapes.WorkspaceEdit(
            documentChanges=[
                shapes.CreateFile(uri=uri),
                shapes.TextDocumentEdit(textDocument=document, edits=[insert]),
            ]
        )
    edits = text_edits(base_text, proposed_text)
    return shapes.WorkspaceEdit(
        documentChanges=[shapes.TextDocumentEdit(textDocument=document, edits=edits)]
    )
