"""What the client may ask the daemon about, answered without starting anything: its status,
the receipts and their verification, stored objects, and the runs kept on disk.

Each reads the disk afresh, so receipts and runs other processes wrote are part of the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..attestation.export import export_evidence, exported_runs
from ..errors import AgentError
from ..gate.workspace import Workspace
from ..receipts import verify_receipt_log
from ..receipts.content import load_object_prefix
from ..receipts.own_folder import own_folder
from ..receipts.verify import read_receipt_log
from ..settings.table import Settings
from . import messages
from .messages import wire
from .protocol import receipt_dict, tool_table
from .sessions_served import inspect_session, list_sessions, run_records

MAX_OBJECT_TEXT_BYTES = 1024 * 1024
NO_FOLDER = "no workspace folder is open"


class SessionQueries:
    """The queries of a Session: the settings and root they read, and what the Session
    supplies (whether a run goes, the kept conversation, the runs it ran)."""

    settings: Settings
    root: Path | None

    @property
    def running(self) -> bool:
        raise NotImplementedError

    def conversation_status(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def runs(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def model_status(self) -> dict[str, Any]:
        raise NotImplementedError

    def receipt_log(self) -> Path | None:
        return None if self.root is None else self.settings.receipt_log_path(self.root)

    def status(self) -> dict[str, Any]:
        settings, root = self.settings, self.root
        enabled: frozenset[str] = frozenset()
        if root is not None:
            try:
                enabled = Workspace(settings.policy(root)).available_tools
            except ValueError:  # the root has gone; runs will say so
                enabled = frozenset()
        log = self.receipt_log()
        return {
            "root": None if root is None else str(root),
            "model": settings.model,
            "allowWrites": settings.allow_writes,
            "allowedCommands": [list(argv) for argv in settings.allowed_commands],
            "availableTools": sorted(enabled),
            "tools": tool_table(enabled),
            "receiptLog": None if log is None else str(log),
            "running": self.running,
            "conversation": self.conversation_status(),
            **self.model_status(),
        }

    def receipts(self) -> dict[str, Any]:
        log = self.receipt_log()
        if log is None:
            return {
                "receipts": [],
                "logPath": None,
                "error": NO_FOLDER,
                "runs": self.runs(),
                "records": [],
                "exportedRuns": [],
            }
        receipts: list[dict[str, Any]] = []
        report = read_receipt_log(log, lambda receipt: receipts.append(receipt_dict(receipt)))
        return {
            "receipts": receipts,  # every line checked: those before the first bad one
            "logPath": str(log),
            "error": report.error,
            "runs": self.runs(),
            "records": run_records(log),
            "exportedRuns": [] if self.root is None else sorted(exported_runs(self.root)),
        }

    def export_evidence(self, commit: str) -> dict[str, Any]:
        """Sign the runs behind `commit` and add them as its evidence note."""
        log = self.receipt_log()
        try:
            if log is None or self.root is None:
                raise AgentError(NO_FOLDER)
            done = export_evidence(self.root, log, commit)
        except AgentError as error:
            failed = messages.ExportEvidenceResult(
                ok=False, error=str(error), commit=None, runs=[], effects=0, files=0,
                validation=None, unreceipted=[],
            )  # fmt: skip
            return dict(wire(failed))
        exported = messages.ExportEvidenceResult(
            ok=True, error=None, commit=done.commit, runs=list(done.runs), effects=done.effects,
            files=done.files, validation=done.validation, unreceipted=list(done.unreceipted),
        )  # fmt: skip
        return dict(wire(exported))

    def verify(self) -> dict[str, Any]:
        """The chain and, when it holds, the files (`drift` is None when they were not checked)."""
        log = self.receipt_log()
        if log is None:
            shown = messages.VerifyResult(
                ok=False,
                count=0,
                error=NO_FOLDER,
                line=None,
                chainOk=False,
                chainError=NO_FOLDER,
                drift=None,
            )
            return dict(wire(shown))
        report = verify_receipt_log(log, root=self.root)
        chain_ok = report.ok or bool(report.drift)
        verified = messages.VerifyResult(
            ok=report.ok,
            count=report.count,
            error=report.error,
            line=report.line,
            chainOk=chain_ok,
            chainError=None if chain_ok else report.error,
            drift=list(report.drift) if report.drift_checked else None,
        )
        return dict(wire(verified))

    def stored_object(self, digest: str) -> dict[str, Any]:
        """A content-store object as text, bounded; `digest` is already checked to be hex."""
        log = self.receipt_log()
        found = None
        if log is not None:
            try:
                found = load_object_prefix(own_folder(log), digest, MAX_OBJECT_TEXT_BYTES)
            except AgentError:
                found = None
        if found is None:
            missing = messages.ObjectResult(
                sha256=digest, found=False, text=None, bytes=0, truncated=False
            )
            return dict(wire(missing))
        shown, size = found
        stored = messages.ObjectResult(
            sha256=digest,
            found=True,
            text=shown.decode("utf-8", errors="replace"),
            bytes=size,
            truncated=len(shown) < size,
        )
        return dict(wire(stored))

    def sessions(self) -> dict[str, Any]:
        """`counterfoil/sessions`: the runs kept beside the receipt log."""
        log = self.receipt_log()
        if log is None:
            return dict(wire(messages.SessionsResult(sessions=[], error=NO_FOLDER)))
        return list_sessions(log)

    def inspect(self, run_id: str) -> dict[str, Any]:
        """`counterfoil/inspect`; raises CheckpointRefused with one sentence."""
        from ..sessions.record import CheckpointRefused

        log, root = self.receipt_log(), self.root
        if log is None or root is None:
            raise CheckpointRefused(NO_FOLDER)
        return inspect_session(log, root, run_id)
