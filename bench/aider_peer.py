"""The peer column of `bench/eval.py`: a task package run through Aider, graded as a run is.

Aider (`aider-chat`) is a peer built for small local models; it lives in a virtual environment
of the bench's own (`python3 -m venv ~/.cache/counterfoil-bench/aider && …/bin/pip install
aider-chat`), never in Counterfoil's. Each run: the package's workspace staged as for a run,
made a git repository (Aider's repo map needs one; its own commits are off), Aider started
with the task's editable files added to its chat as a person using it would, the package's
allowed command as its `--test-cmd` with `--auto-test`, the whole-file edit format, and the
same GGUF on the same llama.cpp server the agent used. What Aider leaves of its own (`.git`,
`.aider*`) is removed, then the held-out checks and the forbidden-modification check run on
the copy exactly as `run_task` runs them. Aider runs unconfined: these are our own packages.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from counterfoil.evals.grading import forbidden_modifications, grade
from counterfoil.evals.package import TaskPackage, stage_workspace
from counterfoil.files.tree_copy import snapshot

AIDER = Path.home() / ".cache" / "counterfoil-bench" / "aider" / "bin" / "aider"
TIMEOUT_SECONDS = 600
TOKENS = re.compile(r"Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received")


@dataclass(frozen=True)
class PeerRun:
    status: str  # passed, failed or error
    seconds: float
    sent_tokens: int | None
    received_tokens: int | None
    detail: str  # the failed checks, or why the run could not be judged


def aider_absent(executable: Path = AIDER) -> str | None:
    """Why the peer column is empty, or None when Aider is there."""
    if executable.is_file() and os.access(executable, os.X_OK):
        return None
    return f"Aider is not installed at {executable} (pip install aider-chat in that venv)"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def _text(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _tokens(text: str) -> tuple[int | None, int | None]:
    """Aider's own count, summed over its requests ("Tokens: 2.1k sent, 150 received.")."""
    sent = received = 0
    found = False
    for match in TOKENS.finditer(text):
        found = True
        sent += int(float(match[1]) * (1000 if match[2] else 1))
        received += int(float(match[3]) * (1000 if match[4] else 1))
    return (sent, received) if found else (None, None)


def run_aider(
    package: TaskPackage, url: str, key: str, *, executable: Path = AIDER, log: Path | None = None
) -> PeerRun:
    """One run of `package` through Aider on the OpenAI-compatible server at `url`."""
    with tempfile.TemporaryDirectory(prefix=f"aider-{package.id}-") as scratch:
        root = Path(scratch) / "workspace"
        stage_workspace(package, root)
        before = snapshot(root)
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(
            root,
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "-qm",
            "task",
        )
        history = Path(scratch) / "history"
        history.mkdir()
        argv = [
            str(executable),
            "--model",
            "openai/local",
            "--openai-api-base",
            url,
            "--edit-format",
            "whole",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-gitignore",
            "--yes-always",
            "--no-pretty",
            "--no-stream",
            "--no-fancy-input",
            "--no-check-update",
            "--no-show-release-notes",
            "--no-analytics",
            "--no-show-model-warnings",
            "--chat-history-file",
            str(history / "chat.md"),
            "--input-history-file",
            str(history / "input"),
            "--message",
            package.prompt,
        ]
        if package.allowed_commands:
            argv += ["--test-cmd", shlex.join(package.allowed_commands[0]), "--auto-test"]
        argv += [path for path in package.editable_paths if not path.endswith("/")]
        environment = {
            **os.environ,
            "OPENAI_API_KEY": key,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of litellm's price list
            "AIDER_ANALYTICS": "false",
        }
        started = time.perf_counter()
        try:
            done = subprocess.run(
                argv,
                cwd=root,
                env=environment,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
            output = done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            output = f"{_text(expired.stdout)}{_text(expired.stderr)}\n(timed out)"
        seconds = time.perf_counter() - started
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(output)
        for leftover in root.iterdir():
            if leftover.name == ".git" or leftover.name.startswith(".aider"):
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
        sent, received = _tokens(output)
        forbidden = forbidden_modifications(package, before, snapshot(root))
        checks = grade(package, root, before)
        failed = [check.name for check in checks if not check.passed]
        failed += [f"forbidden {item.change} {item.path}" for item in forbidden]
        return PeerRun("failed" if failed else "passed", seconds, sent, received, ", ".join(failed))
