"""The branches of a forked run, kept beside its checkpoint:
`<log folder>/sessions/<run-id>/branches/<n>/` holds `branch.json` (replaced atomically, like
a checkpoint), `root/` (the branch's copy of the root) and `receipts/` (its receipt log).

A branch is named `<run-id>.<n>`. Its record says what it was told, what it did and how it
ended, so `counterfoil branches` lists it and `counterfoil select` applies it later, in
another process; the base (every file's digest at the fork) travels with it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..evaluation import EvaluationCheck
from ..files.tree_copy import Snapshot
from ..sessions.record import CheckpointRefused
from ..sessions.store import RUN_ID, SessionStore

BRANCHES_FOLDER = "branches"
BRANCH_FILE = "branch.json"
BRANCH_FORMAT = 1
# running: its run has not ended (interrupted when no process holds the run);
# ended: it ran to its end and waits for a selection; selected: applied to the real root;
# discarded: another branch was selected and this one's copy was removed.
BRANCH_STATES = ("running", "ended", "selected", "discarded")
BRANCH_NAME = re.compile(rf"(?P<run>{RUN_ID.pattern})\.(?P<number>[1-9][0-9]{{0,5}})")


BranchCheck = EvaluationCheck  # one held-out check of a task package, graded on the branch's copy


@dataclass(frozen=True)
class BranchRecord:
    run_id: str
    number: int
    steering: str
    checkpoint_id: str
    root: str  # the parent's root
    log: str  # the parent's receipt log
    base: Snapshot = field(default_factory=dict)
    state: str = "running"
    reason: str | None = None  # how its run ended, or why it was discarded
    created: str = ""
    updated: str = ""
    steps: int = 0
    validation: str = "not_run"
    effects: dict[str, int] = field(default_factory=dict)  # approved/rejected/refused/failed
    files_changed: tuple[str, ...] = ()
    prefix_tokens: int | None = None  # the checkpoint's prompt, in the model's tokens
    prefill_avoided: int | None = None  # prompt tokens the shared prefix spared (None: unknown)
    prefill_note: str | None = None  # why the model could not say
    cloned_files: int = 0
    copied_files: int = 0
    checks_package: str | None = None
    checks: tuple[BranchCheck, ...] = ()
    forbidden: tuple[str, ...] = ()  # files changed that the checks' package does not allow
    final: str | None = None

    @property
    def name(self) -> str:
        return f"{self.run_id}.{self.number}"

    @property
    def checks_passed(self) -> bool | None:
        if self.checks_package is None:
            return None
        return all(check.passed for check in self.checks) and not self.forbidden

    def updated_with(self, **changes: Any) -> BranchRecord:
        return replace(self, **changes)

    def to_bytes(self) -> bytes:
        body = asdict(self)
        body["base"] = {path: list(entry) for path, entry in sorted(self.base.items())}
        document = {"format": BRANCH_FORMAT, "branch": body}
        return json.dumps(document, sort_keys=True, indent=1).encode("utf-8") + b"\n"


def listed_state(record: BranchRecord, live: bool) -> str:
    """A branch whose run has not ended is running while a fork holds the run (`live`), else
    interrupted."""
    if record.state != "running":
        return record.state
    return "running" if live else "interrupted"


def parse_branch_name(name: str) -> tuple[str, int]:
    """(run id, number) of `<run-id>.<n>`; CheckpointRefused for anything else."""
    found = BRANCH_NAME.fullmatch(name) if isinstance(name, str) else None
    if found is None:
        raise CheckpointRefused(f"{name!r} is not a branch name (they read RUN_ID.N)")
    return found["run"], int(found["number"])


class BranchStore:
    """The branches of the runs of one receipt log."""

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions

    def folder(self, run_id: str) -> Path:
        return self.sessions.run_folder(run_id) / BRANCHES_FOLDER

    def branch_folder(self, run_id: str, number: int) -> Path:
        return self.folder(run_id) / str(number)

    def copy_root(self, record: BranchRecord) -> Path:
        return self.branch_folder(record.run_id, record.number) / "root"

    def copy_log(self, record: BranchRecord) -> Path:
        log_name = Path(record.log).name
        return self.branch_folder(record.run_id, record.number) / "receipts" / log_name

    def next_number(self, run_id: str) -> int:
        numbers = [number for number, _ in self._numbered(run_id)]
        return max(numbers, default=0) + 1

    def write(self, record: BranchRecord) -> None:
        relative = f"{BRANCHES_FOLDER}/{record.number}/{BRANCH_FILE}"
        self.sessions.write_file(record.run_id, relative, record.to_bytes())

    def load(self, run_id: str, number: int) -> BranchRecord:
        relative = f"{BRANCHES_FOLDER}/{number}/{BRANCH_FILE}"
        name = f"{run_id}.{number}"
        try:
            data = self.sessions.read_file(run_id, relative)
        except (FileNotFoundError, NotADirectoryError):
            data = None
        if data is None:
            raise CheckpointRefused(f"there is no branch {name}")
        return _load(data, name)

    def branches(self, run_id: str) -> list[BranchRecord]:
        """Every branch of the run, in number order (a branch whose record cannot be read is
        left out: it never finished being made)."""
        found = []
        for number, _ in self._numbered(run_id):
            try:
                found.append(self.load(run_id, number))
            except CheckpointRefused:
                continue
        return found

    def _numbered(self, run_id: str) -> list[tuple[int, str]]:
        try:
            names = os.listdir(self.folder(run_id))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted((int(name), name) for name in names if name.isdigit() and name[0] != "0")


def _load(data: bytes, name: str) -> BranchRecord:
    try:
        document = json.loads(data)
        if document.get("format") != BRANCH_FORMAT:
            raise ValueError("unknown format")
        body = dict(document["branch"])
        body["base"] = {path: (entry[0], entry[1]) for path, entry in body["base"].items()}
        body["checks"] = tuple(BranchCheck(**check) for check in body["checks"])
        body["files_changed"] = tuple(body["files_changed"])
        body["forbidden"] = tuple(body["forbidden"])
        record = BranchRecord(**body)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        raise CheckpointRefused(f"the record of branch {name} is not readable") from None
    if record.state not in BRANCH_STATES or record.name != name:
        raise CheckpointRefused(f"the record of branch {name} is not readable")
    return record
