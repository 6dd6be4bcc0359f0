"""Approvals on the terminal: each proposal shown in full (header and diff), `[y/N]` asked, and
what a step observed and a receipt printed."""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Callable
from typing import TextIO

from ..files.path_text import shown_path
from ..gate.approval import Approval
from ..loop import AgentEvent
from ..proposals import ChangeSetProposal, CommandProposal, EditProposal, ToolProposal
from ..receipts import EffectReceipt
from .terminal import (
    Style,
    change_set_diff,
    short_digest,
)


def unified_diff(proposal: EditProposal) -> str:
    before = (proposal.base_text or "").splitlines(keepends=True)
    after = proposal.proposed_text.splitlines(keepends=True)
    source = f"a/{shown_path(proposal.path)}" if proposal.base_sha256 is not None else "/dev/null"
    target = "/dev/null" if proposal.removes_file else f"b/{shown_path(proposal.path)}"
    lines = difflib.unified_diff(before, after, source, target)
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def proposal_diff(proposal: ToolProposal) -> str:
    if isinstance(proposal, CommandProposal):
        return ""
    if isinstance(proposal, ChangeSetProposal):
        return change_set_diff(proposal)
    return unified_diff(proposal) or "(no change)\n"


def proposal_header(proposal: ToolProposal) -> str:
    header = f"{proposal.tool_call_id}: {proposal.action.tool}"
    if isinstance(proposal, ChangeSetProposal):
        if proposal.reverts is not None:
            header += f" of {proposal.reverts}"
        lines = [f"{header}: {len(proposal.files)} file(s)\n"]
        lines += [
            f"  left alone: {shown_path(path)} ({why})\n" for path, why in proposal.left_alone
        ]
        return "".join(lines)
    if isinstance(proposal, CommandProposal):
        return (
            f"{header}\n  argv: {list(proposal.argv)}\n  cwd:  {proposal.cwd}\n"
            f"  timeout: {proposal.timeout_seconds:g} s\n"
        )
    if proposal.reverts is not None:
        header += f" of {proposal.reverts}"
    base = "new file" if proposal.creates_file else f"base {short_digest(proposal.base_sha256)}"
    after = (
        "removes the file"
        if proposal.removes_file
        else f"proposed {short_digest(proposal.proposed_sha256)}"
    )
    folders = ""
    if proposal.new_folders:
        how = "removes the folders if empty" if proposal.reverts else "creates the folders"
        shown = ", ".join(f"{shown_path(folder)}/" for folder in proposal.new_folders)
        folders = f"  {how}: {shown}\n"
    return f"{header} {shown_path(proposal.path)}\n  sha256 {base} -> {after}\n{folders}"


def read_line(stream: TextIO) -> str:
    """One line without read-ahead, so approvals piped to several runs reach each in turn."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream.readline()
    data = bytearray()
    while not data.endswith(b"\n"):
        byte = os.read(descriptor, 1)
        if not byte:
            break
        data += byte
    return data.decode("utf-8", errors="replace")


def terminal_confirm(
    stdin: TextIO,
    stdout: TextIO,
    style: Style | None = None,
    interrupted: threading.Event | None = None,
) -> Callable[[ToolProposal], bool | Approval]:
    """Ask on the terminal; only y/yes approves, and end of input or Ctrl-C means No.

    Ctrl-C while waiting sets `interrupted`, so the run stops at its next step.
    """

    def confirm(proposal: ToolProposal) -> bool | Approval:
        if interrupted is not None and interrupted.is_set():
            return False
        try:
            stdout.write(f"\n--- approval needed ---\n{proposal_header(proposal)}")
            (style or Style()).write_diff(stdout, proposal_diff(proposal))
            stdout.write("Approve? [y/N] ")
            stdout.flush()
            answer = read_line(stdin)
        except KeyboardInterrupt:
            if interrupted is None:
                raise
            interrupted.set()
            # Not answered: withdrawn as the daemon's pause withdraws it, never a No; the run
            # stops paused with this question open, to be asked again on resume.
            stdout.write("\n(interrupted: not answered; asked again on resume)\n")
            return Approval(False, withdrawn=True)
        if not answer:
            stdout.write("(end of input: no)\n")
        approved = answer.strip().lower() in ("y", "yes")
        stdout.write(
            "denied\n"
            if not approved
            else "approved; running …\n"
            if proposal.kind == "command"
            else "approved\n"
        )
        return approved

    return confirm


def format_event(event: AgentEvent) -> str:
    """What a step observed; its header and response were printed as the model answered."""
    if event.final_held is not None:
        return f"not taken as the end; the model was told:\n{event.told}\n"
    if event.final_unchecked is not None:
        return f"final answer taken; {event.final_unchecked}\n"
    if event.result is None:
        return ""
    if event.opened is not None:
        return f"read for the model before its first step: {event.opened}\n{event.result}\n"
    summary = None if event.step_result is None else event.step_result.summary()
    effect = "" if summary is None else f"effect: {summary}\n"
    return "observation:\n" + event.result + "\n" + _told(event) + effect


def _told(event: AgentEvent) -> str:
    """What the model read beyond the observation (a note after it, or a refusal's fuller
    sentence: the file read for it), so the person sees all the model was shown."""
    told, result = event.told, event.result or ""
    if told is None or told == result:
        return ""
    if told.startswith(result + "\n"):
        return "the model was also told:\n" + told[len(result) :].strip("\n") + "\n"
    return "the model was told:\n" + told.rstrip("\n") + "\n"


def format_receipt(receipt: EffectReceipt) -> str:
    artifacts = ", ".join(receipt.changed_artifacts) or "-"
    first_line = receipt.result.splitlines()[0] if receipt.result else ""
    return (
        f"{receipt.tool_call_id}  {receipt.tool:<11} {receipt.exit_state:<5} "
        f"artifacts: {artifacts}  {first_line}\n  receipt {receipt.receipt_id}"
    )
