"""What the model is told when the person changed its proposal before approving it.

The person may drop some of the proposal's changes or edit its text; the model must not
assume its own proposal landed, so its observation counts the changes kept (when the result
is the base with some of them) and shows a bounded diff from its proposal to what was written.
When that diff is cut, the model is told so and is not counted as having read the file.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from functools import cache

from ..errors import AgentError
from ..proposals import EditProposal, sha256_hex

MAX_DIFF_CHARS = 2000


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines(keepends=True)


def kept_changes(base: str | None, proposed: str, final: str) -> tuple[int, int] | None:
    """(kept, total) when `final` is `base` with some of the proposal's changes applied;
    None when the person wrote something else (or nothing tells the two apart)."""
    base_lines, proposed_lines, final_lines = _lines(base), _lines(proposed), _lines(final)
    opcodes = difflib.SequenceMatcher(None, base_lines, proposed_lines, autojunk=False)
    changes = [op for op in opcodes.get_opcodes() if op[0] != "equal"]
    if not changes:
        return None

    @cache
    def match(index: int, position: int) -> int | None:
        """How many changes from `index` on are kept, if `final[position:]` fits; else None."""
        if index == len(operations):
            return 0 if position == len(final_lines) else None
        tag, i1, i2, j1, j2 = operations[index]
        choices = (
            [(proposed_lines[j1:j2], 0)]
            if tag == "equal"
            else [(proposed_lines[j1:j2], 1), (base_lines[i1:i2], 0)]
        )
        for lines, counted in choices:
            if final_lines[position : position + len(lines)] == lines:
                rest = match(index + 1, position + len(lines))
                if rest is not None:
                    return rest + counted
        return None

    operations = opcodes.get_opcodes()
    if len(operations) > 200:  # too many to try; the diff says what happened
        return None
    kept = match(0, 0)
    return None if kept is None else (kept, len(changes))


def _full_diff(path: str, proposed: str, final: str) -> str:
    return "".join(
        difflib.unified_diff(
            _lines(proposed), _lines(final), f"{path} (your proposal)", f"{path} (written)"
        )
    )


def diff_shows_all(path: str, proposed: str, final: str) -> bool:
    """Whether the model's diff is whole, so that with its proposal it knows the written text;
    when it is cut, the model has not seen the file and must read it before changing it."""
    return len(_full_diff(path, proposed, final)) <= MAX_DIFF_CHARS


def proposal_diff(path: str, proposed: str, final: str) -> str:
    """A unified diff from the model's proposal to what was written, at most MAX_DIFF_CHARS."""
    diff = _full_diff(path, proposed, final)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS].rstrip("\n") + "\n… (diff truncated)"
    return diff.rstrip("\n")


def _same_but_line_endings(proposed: str, final: str) -> bool:
    return proposed.replace("\r\n", "\n") == final.replace("\r\n", "\n")


def edited_observation(verb: str, path: str, base: str | None, proposed: str, final: str) -> str:
    kept = kept_changes(base, proposed, final)
    if kept is not None:
        how = f"{kept[0]} of {kept[1]} changes kept"
    elif _same_but_line_endings(proposed, final):
        # A diff of such lines reads as identical; say what differs.
        how = "only line endings were changed"
    else:
        how = "the text was edited"
    seen = (
        "what was written differs from your proposal:\n"
        if diff_shows_all(path, proposed, final)
        else f"what was written differs from your proposal (only the first {MAX_DIFF_CHARS:,} "
        "characters of the diff are shown: read the file before changing it again):\n"
    )
    return (
        f"{verb} {path} (the person changed your proposal before approving: {how})\n"
        + seen
        + proposal_diff(path, proposed, final)
    )


def edited_proposal(proposal: EditProposal, text: object, max_bytes: int) -> EditProposal:
    """The proposal with the person's text in place of the model's, checked like any write."""
    if not isinstance(text, str):
        raise AgentError("edited text must be a string")
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        raise AgentError("edited text must be valid Unicode text") from None
    if len(encoded) > max_bytes:
        raise AgentError(f"edited text exceeds {max_bytes} bytes")
    return replace(proposal, proposed_text=text, proposed_sha256=sha256_hex(encoded))
