"""A change set (a command's revert, a reviewed command's changes) as the terminal shows it."""

from __future__ import annotations

import difflib

from .proposals import ChangeSetProposal
from .terminal import short_digest


def change_set_diff(proposal: ChangeSetProposal) -> str:
    """One unified diff per file (text), or the digests of a binary file's bytes."""
    parts: list[str] = []
    for item in proposal.files:
        source = "/dev/null" if item.expected_sha256 is None else f"a/{item.path}"
        target = "/dev/null" if item.content is None else f"b/{item.path}"
        before, after = item.current or b"", item.content or b""
        if b"\0" in before + after or (item.current is None and item.expected_sha256):
            parts.append(
                f"--- {source}\n+++ {target}\n(binary or large: sha256 "
                f"{short_digest(item.expected_sha256)} -> {short_digest(item.content_sha256)})\n"
            )
            continue
        lines = difflib.unified_diff(
            before.decode("utf-8", errors="replace").splitlines(keepends=True),
            after.decode("utf-8", errors="replace").splitlines(keepends=True),
            source,
            target,
        )
        text = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )
        parts.append(text or f"--- {source}\n+++ {target}\n(mode {item.mode:o})\n")
    return "".join(parts)
