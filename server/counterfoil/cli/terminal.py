"""How a run reads on a terminal: step headers, diff colour, the verdict block, the exit status.

The verdict block is the last thing a run prints: what the effects did first, the model's
answer after it, labelled as a claim. The exit status is computed from the same verdict.
"""

from __future__ import annotations

import difflib
import os
import shlex
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from ..files.path_text import shown_path
from ..model import Messages, Model, ModelReply, WrappedModel, model_reply
from ..models.progress import ModelProgress
from ..proposals import ChangeSetProposal, FileRestore
from ..verdict import EffectOutcome, RunVerdict

EXIT_SUCCEEDED = 0
EXIT_UNSUPPORTED = 1
EXIT_SETUP_ERROR = 2
EXIT_STOPPED = 3
EXIT_INTERRUPTED = 130

SHORT_DIGEST_CHARS = 12


def exit_status(completed: bool, verdict: RunVerdict, *, interrupted: bool = False) -> int:
    """0 when a completed run's effects back it; 1 when they do not; 3 stopped; 130 Ctrl-C."""
    if interrupted:
        return EXIT_INTERRUPTED
    if not completed:
        return EXIT_STOPPED
    return EXIT_SUCCEEDED if verdict.succeeded else EXIT_UNSUPPORTED


@dataclass(frozen=True)
class Style:
    """ANSI colour for diff lines, or none at all."""

    colour: bool = False

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        """Colour only on a terminal, and never when NO_COLOR is set or TERM is dumb."""
        if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
            return cls(False)
        try:
            return cls(stream.isatty())
        except (AttributeError, ValueError):
            return cls(False)

    def write_diff(self, stream: TextIO, text: str) -> None:
        """Write a unified diff, its lines coloured on a terminal. The colour codes go through
        the stream's `write_style` when it has one, so the stream can escape every other
        control character the (model-chosen) diff holds."""
        for line in text.splitlines(keepends=True):
            code = self._diff_colour(line) if self.colour else None
            if code is None:
                stream.write(line)
                continue
            body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
            _write_style(stream, code)
            stream.write(body)
            _write_style(stream, "0")
            stream.write(end)

    @staticmethod
    def _diff_colour(line: str) -> str | None:
        if line.startswith(("+++", "---")):
            return "1"
        if line.startswith("+"):
            return "32"
        if line.startswith("-"):
            return "31"
        if line.startswith("@@"):
            return "36"
        return None


def _write_style(stream: TextIO, code: str) -> None:
    write_style = getattr(stream, "write_style", None)
    if callable(write_style):
        write_style(code)
    else:
        stream.write(f"\033[{code}m")


def short_digest(digest: str | None) -> str:
    return "-" if digest is None else digest[:SHORT_DIGEST_CHARS] + "…"


PREFILL_LINE_SECONDS = 1.0


class StepPrinter:
    """Prints each step's header before the model responds, and its response exactly once.

    A model that streams (MLX, an endpoint) reports each token's text through `on_progress`;
    a scripted model's response is printed when it returns. A model that reports its rate gets
    a tokens/s line after the step.
    """

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        self.step = 0
        self._streamed = False
        self._last: ModelProgress | None = None
        self._prefill: ModelProgress | None = None
        self._prefill_shown = 0.0

    def on_progress(self, progress: ModelProgress) -> None:
        if progress.state != "generating":
            return
        if progress.prefill_total is not None:
            self._on_prefill(progress)
            return
        self._last = progress
        if progress.text:
            self._streamed = True
            self.stdout.write(progress.text)
            self.stdout.flush()

    def _on_prefill(self, progress: ModelProgress) -> None:
        """A prefill line at most once a second (a short prompt prints none)."""
        self._prefill = progress
        now = time.perf_counter()
        if now - self._prefill_shown >= PREFILL_LINE_SECONDS:
            self._prefill_shown = now
            self.stdout.write(f"[{progress.message}]\n")
            self.stdout.flush()

    def wrap(self, generate: Model) -> StepGenerate:
        return StepGenerate(self, generate)

    def before_step(self) -> None:
        self.step += 1
        self.stdout.write(f"\n== step {self.step} ==\n")
        self.stdout.flush()
        self._streamed = False
        self._last = None
        self._prefill = None
        self._prefill_shown = time.perf_counter()

    def after_step(self, response: object) -> None:
        if self._streamed:
            self.stdout.write("\n")
        elif isinstance(response, str):
            self.stdout.write(response + "\n")
        speed = generation_speed(self._last)
        if speed:
            prefill = self._prefill
            if prefill is not None and prefill.tokens_per_second and prefill.prompt_tokens:
                seconds = prefill.prompt_tokens / prefill.tokens_per_second
                speed = (
                    f"{speed[:-1]}; prefill {prefill.prompt_tokens:,} tokens in {seconds:.1f} s)"
                )
            self.stdout.write(speed + "\n")
        self.stdout.flush()


class StepGenerate(WrappedModel):
    """A model wrapped so each call prints its step; the rest of the contract is the model's."""

    def __init__(self, printer: StepPrinter, generate: Model) -> None:
        super().__init__(generate)
        self.printer = printer

    def reply(self, messages: Messages) -> ModelReply:
        self.printer.before_step()
        reply = model_reply(self.wrapped, messages)
        self.printer.after_step(reply.text)
        return reply


def generation_speed(progress: ModelProgress | None) -> str | None:
    """`(N tokens in S s, T tokens/s)` from the last report of a step's generation; the rate
    only over a span long enough to mean one."""
    if progress is None or not progress.tokens or not progress.tokens_per_second:
        return None
    seconds = progress.tokens / progress.tokens_per_second
    rate = progress.shown_rate
    speed = f", {rate:.1f} tokens/s" if rate else ""
    return f"({progress.tokens} tokens in {seconds:.1f} s{speed})"


def timed_load(stdout: TextIO, model: str, load: Callable[[], Any]) -> Any:
    """`loading model … ready in S s` around `load()`; a failure ends the line first."""
    stdout.write(f"loading model {model} … ")
    stdout.flush()
    started = time.perf_counter()
    try:
        loaded = load()
    except BaseException:
        stdout.write("failed\n")
        raise
    stdout.write(f"ready in {time.perf_counter() - started:.1f} s\n")
    return loaded


def _effect_subject(outcome: EffectOutcome) -> str:
    if outcome.argv is not None:
        return shlex.join(outcome.argv)
    if outcome.mcp_tool is not None:
        return shown_path(outcome.mcp_tool)
    return shown_path(outcome.path or "")


def _effect_line(outcome: EffectOutcome) -> str:
    line = f"  {outcome.state:<9}{outcome.call_id} {outcome.tool} {_effect_subject(outcome)}"
    if outcome.state == "approved" and outcome.argv is not None:
        line += " (timed out)" if outcome.timed_out else f" (exit {outcome.exit_status})"
    if outcome.state == "approved" and outcome.by_rule is not None:
        line += f" [approved by rule {outcome.by_rule}]"
    if outcome.reason and outcome.state != "rejected":
        line += f": {outcome.reason}"
    return line


def _validation_line(verdict: RunVerdict) -> str:
    command = verdict.outcome(verdict.validated_by)
    named = "" if command is None else f"{command.call_id} `{_effect_subject(command)}`"
    if verdict.validation == "passed":
        return f"passed: {named} exited 0" + (
            " after the last change" if verdict.files_changed else ""
        )
    if verdict.validation == "failed":
        how = (
            "timed out"
            if command and command.timed_out
            else (f"exited {command.exit_status if command else '?'}")
        )
        return f"failed: {named} {how}"
    if verdict.validation == "stale":
        if command is not None and command.tree_changes:
            return f"stale: {named} changed files itself, and nothing checked them since"
        return f"stale: {named} ran before the last change, and nothing checked it since"
    if verdict.files_changed and verdict.review_rejected:
        return (
            "not run: no allowlisted command ran on the root's bytes after the change "
            "(a rejected review's command ran on changes that were discarded)"
        )
    if verdict.files_changed:
        return "not run: no allowlisted command ran after the change"
    return "not run: nothing changed and no command ran"


def _exit_reason(status: int, verdict: RunVerdict, reason: str) -> str:
    if status == EXIT_INTERRUPTED:
        return "interrupted"
    if status == EXIT_STOPPED:
        return f"stopped before completing ({reason})"
    if status == EXIT_SUCCEEDED:
        return "validated" if verdict.validation == "passed" else "nothing changed"
    reasons = [
        why
        for why, applies in (
            ("an effect was rejected", verdict.rejected),
            ("a review was rejected", verdict.review_rejected),
            ("an effect failed", verdict.failed),
            ("validation failed", verdict.validation == "failed"),
            ("validation is stale", verdict.validation == "stale"),
            (
                "the change was not validated",
                verdict.validation == "not_run" and verdict.files_changed,
            ),
        )
        if applies
    ]
    return "; ".join(reasons)


def format_verdict(
    verdict: RunVerdict,
    *,
    reason: str,
    final: str | None,
    status: int,
    error: str | None = None,
) -> str:
    """The run's closing block: the verdict, the exit status, then the model's claim."""
    lines = ["", "== verdict ==", f"run:        {reason}"]
    if error:
        lines.append(f"error:      {error}")
    lines.append(f"effects:    {verdict.counts()}")
    lines.extend(_effect_line(outcome) for outcome in verdict.effects)
    if verdict.files_changed:
        lines.append(f"changed:    {len(verdict.files_changed)} file(s)")
        for change in verdict.files_changed:
            lines.append(f"  {shown_path(change.path)} ({change.call_id})")
            lines.append(f"    sha256 {change.sha256 or '(deleted)'}")
    else:
        lines.append("changed:    nothing")
    lines.append(f"validation: {_validation_line(verdict)}")
    lines.append(f"exit:       {status} ({_exit_reason(status, verdict, reason)})")
    if final is None:
        lines.append("the model's claim: none (the run ended without a final answer)")
    else:
        lines.append("the model's claim (not evidence):")
        lines.extend("  " + line for line in (final.splitlines() or [""]))
    return "\n".join(lines) + "\n"


def bytes_diff(before: bytes, after: bytes, source: str, target: str) -> Iterator[str]:
    """The unified diff of two versions of a file's bytes, read as UTF-8 (what is not UTF-8
    shows as U+FFFD), so that a file in another encoding still shows where it changed."""
    return difflib.unified_diff(
        before.decode("utf-8", errors="replace").splitlines(keepends=True),
        after.decode("utf-8", errors="replace").splitlines(keepends=True),
        source,
        target,
    )


def mode_line(item: FileRestore) -> str:
    """`mode x: 0644 -> 0755`, said for every change of a file's permission bits, with the
    bits a person must not miss named."""
    was = "new file" if item.expected_sha256 is None else _octal(item.current_mode)
    after = item.mode or 0
    named = [
        name
        for bit, name in (
            (stat.S_ISUID, "setuid"),
            (stat.S_ISGID, "setgid"),
            (stat.S_IWOTH, "world-writable"),
        )
        if after & bit
    ]
    extra = f" ({', '.join(named)})" if named else ""
    return f"mode {shown_path(item.path)}: {was} -> {_octal(item.mode)}{extra}\n"


def _octal(mode: int | None) -> str:
    return "unknown" if mode is None else f"{mode:04o}"


def change_set_diff(proposal: ChangeSetProposal) -> str:
    """One unified diff per file (text), or the digests of a binary file's bytes, each after a
    line for any change of its permission bits."""
    parts: list[str] = []
    for item in proposal.files:
        if item.changes_mode:
            parts.append(mode_line(item))
        if item.made_folders:
            made = ", ".join(f"{shown_path(folder)}/" for folder in item.made_folders)
            parts.append(f"removes the folders the command made, when empty: {made}\n")
        path = shown_path(item.path)
        source = "/dev/null" if item.expected_sha256 is None else f"a/{path}"
        target = "/dev/null" if item.content is None else f"b/{path}"
        before, after = item.current or b"", item.content or b""
        if b"\0" in before + after or (item.current is None and item.expected_sha256):
            parts.append(
                f"--- {source}\n+++ {target}\n(binary or large: sha256 "
                f"{short_digest(item.expected_sha256)} -> {short_digest(item.content_sha256)})\n"
            )
            continue
        lines = bytes_diff(before, after, source, target)
        text = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )
        parts.append(text or f"--- {source}\n+++ {target}\n(the bytes are unchanged)\n")
    return "".join(parts)
