"""A project with one finished run, the terminal as `main()` sees it, and a model that answers
each branch by its steering and counts its prompt like a model with a KV cache."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.terminal import run_cli as cli

from counterfoil.context.budget import estimate_tokens
from counterfoil.model import ModelReply, ResponseStats
from counterfoil.sessions.steering import STEERING_PREFIX
from counterfoil.sessions.store import SessionStore

READ = {"tool": "read_file", "path": "app.py"}


def edit(new: str, old: str = "2") -> dict[str, str]:
    return {"tool": "edit_file", "path": "app.py", "old": old, "new": new}


def write_script(path: Path, *responses: object) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in responses), encoding="utf-8")
    return path


def log_of(root: Path) -> Path:
    return root / ".counterfoil" / "receipts.jsonl"


def finished_run(tmp_path: Path) -> tuple[Path, str]:
    """A project whose run read app.py, set the answer to 2 (approved) and ended: its
    checkpoint is at the edit's observation, and its receipt log holds the edit."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n", encoding="utf-8")
    script = write_script(tmp_path / "parent.jsonl", READ, edit("2", "1"), {"final": "set"})
    arguments = ["agent", "set the answer", "--root", str(root), *model(script)]
    status, output = cli(arguments, "y\n")
    assert "== run ended: completed ==" in output, (status, output)
    (run_id,) = SessionStore(log_of(root)).run_ids()
    return root, run_id


def model(script: Path) -> list[str]:
    return ["--model", f"scripted:{script}", "--allow-writes"]


def fork_script(tmp_path: Path, new: str = "3") -> Path:
    """What a scripted model says after the checkpoint (its first two responses were the
    parent's read and edit)."""
    return write_script(
        tmp_path / "fork.jsonl", READ, edit("2", "1"), edit(new), {"final": f"set to {new}"}
    )


class SteeredModel:
    """Answers each branch from its own script, chosen by the branch's steering text, and
    counts its prompt in estimated tokens per message, reusing the longest run of messages it
    saw last (its conversation, as a KV cache holds it): what a branch did not prefill."""

    context_tokens: int | None = None

    def __init__(self, scripts: dict[str, list[object]]) -> None:
        self.scripts = scripts
        self.stats: list[ResponseStats] = []
        self.cached: list[dict[str, str]] = []

    def configure_tools(
        self,
        available_tools: object,
        allowed_commands: object,
        mcp_tools: object = None,
        view: object = None,
    ) -> None:
        pass

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return estimate_tokens(messages)

    def __call__(self, messages: list[dict[str, str]]) -> str:
        return self.reply(messages).text

    def reply(self, messages: list[dict[str, str]]) -> ModelReply:
        """The branch's next answer with what it cost, as one value."""
        position = max(
            index
            for index, message in enumerate(messages)
            if message["content"].startswith(STEERING_PREFIX)
        )
        steering = messages[position]["content"][len(STEERING_PREFIX) :]
        answered = sum(1 for message in messages[position:] if message["role"] == "assistant")
        response = json.dumps(self.scripts[steering][answered])
        shared = 0
        for seen, message in zip(self.cached, messages, strict=False):
            if seen != message:
                break
            shared += 1
        prompt = self.count_tokens(messages)
        reused = self.count_tokens(messages[:shared]) if shared else 0
        stats = ResponseStats(1, "stop", 0.0, prompt, prompt - reused)
        self.stats.append(stats)
        self.cached = [*messages, {"role": "assistant", "content": response}]
        return ModelReply(response, stats)


def forked_run(tmp_path: Path) -> tuple[Path, str]:
    """`finished_run` forked into two branches ("one", "two") that each set the answer to 3."""
    root, run_id = finished_run(tmp_path)
    arguments = ["fork", run_id, "--root", str(root), *model(fork_script(tmp_path))]
    status, output = cli([*arguments, "--steer", "one", "--steer", "two"])
    assert status == 0, output
    return root, run_id
