"""What the client may ask the daemon about, answered without starting anything: its status,
the receipts and their verification, stored objects, and the runs kept on disk.

Each reads the disk afresh, so receipts and runs other processes wrote are part of the answer.
Each request's handler is a method here, taking its params message; `protocol.REQUESTS` says
how each is served (`status` on the event loop, the others off it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ... import protocol as messages
from ...attestation.export import export_evidence, exported_runs
from ...errors import AgentError
from ...protocol import ModelStateName
from ...receipts import verify_receipt_log
from ...receipts.content import load_object_prefix
from ...receipts.own_folder import own_folder
from ...receipts.verify import read_receipt_log
from ...tools import enabled_tools
from ..runs.run_book import RunBook
from ..runs.run_messages import receipt_message, tool_table
from ..session_state import SessionState
from .sessions_served import discard_session, inspect_session, list_sessions, run_records

MAX_OBJECT_TEXT_BYTES = 1024 * 1024
NO_FOLDER = "no workspace folder is open"


ModelStatus = tuple[ModelStateName, bool | None, int | None]  # state, on disk, bytes to fetch


class SessionQueries:
    """The queries of a session, over its parts: the settings and root, the runs this daemon
    ran, whether an operation goes, and the model's status."""

    def __init__(
        self,
        state: SessionState,
        book: RunBook,
        running: Callable[[], bool],
        model_status: Callable[[], ModelStatus],
    ) -> None:
        self._state = state
        self._book = book
        self._running = running
        self._model_status = model_status

    @property
    def root(self) -> Path | None:
        return self._state.root

    def receipt_log(self) -> Path | None:
        return self._state.receipt_log()

    def status(self) -> messages.StatusResult:
        settings, root = self._state.settings, self.root
        enabled: frozenset[str] = frozenset()
        if root is not None:
            try:
                policy = settings.policy(root)
                enabled = enabled_tools(
                    policy.allow_writes,
                    policy.allowed_commands,
                    policy.allow_search,
                    allow_mcp=bool(settings.mcp_servers),  # a run starts them (mcp_servers.py)
                    edit_form=policy.edit_form,
                )
            except ValueError:  # the root has gone; runs will say so
                enabled = frozenset()
        log = self.receipt_log()
        conversation = self._book.conversation
        model_state, on_disk, to_fetch = self._model_status()
        return messages.StatusResult(
            root=None if root is None else str(root),
            model=settings.model,
            modelState=model_state,
            allowWrites=settings.allow_writes,
            allowedCommands=[list(argv) for argv in settings.allowed_commands],
            availableTools=sorted(enabled),
            tools=tool_table(enabled),
            receiptLog=None if log is None else str(log),
            running=self._running(),
            conversation=None if conversation is None else conversation.status(),
            modelOnDisk=on_disk,
            modelDownloadBytes=to_fetch,
        )

    def receipts(self) -> messages.ReceiptsResult:
        log = self.receipt_log()
        if log is None:
            return messages.ReceiptsResult(
                receipts=[],
                logPath=None,
                error=NO_FOLDER,
                runs=self._book.runs(),
                records=[],
                exportedRuns=[],
            )
        receipts: list[messages.Receipt] = []
        report = read_receipt_log(log, lambda receipt: receipts.append(receipt_message(receipt)))
        return messages.ReceiptsResult(
            receipts=receipts,  # every line checked: those before the first bad one
            logPath=str(log),
            error=report.error,
            runs=self._book.runs(),
            records=run_records(log),
            exportedRuns=[] if self.root is None else sorted(exported_runs(self.root)),
        )

    def export_evidence(
        self, params: messages.ExportEvidenceParams
    ) -> messages.ExportEvidenceResult:
        """Sign the runs behind `commit` and add them as its evidence note."""
        log = self.receipt_log()
        try:
            if log is None or self.root is None:
                raise AgentError(NO_FOLDER)
            done = export_evidence(self.root, log, params.commit)
        except AgentError as error:
            failed = messages.ExportEvidenceResult(
                ok=False, error=str(error), commit=None, runs=[], effects=0, reviewRejected=[],
                files=0, validation=None, unreceipted=[],
            )  # fmt: skip
            return failed
        exported = messages.ExportEvidenceResult(
            ok=True, error=None, commit=done.commit, runs=list(done.runs), effects=done.effects,
            reviewRejected=list(done.review_rejected), files=done.files, validation=done.validation, unreceipted=list(done.unreceipted),
        )  # fmt: skip
        return exported

    def verify(self) -> messages.VerifyResult:
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
            return shown
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
        return verified

    def stored_object(self, params: messages.ObjectParams) -> messages.ObjectResult:
        """A content-store object as text, bounded; its digest is already checked to be hex."""
        digest = params.sha256
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
            return missing
        shown, size = found
        stored = messages.ObjectResult(
            sha256=digest,
            found=True,
            text=shown.decode("utf-8", errors="replace"),
            bytes=size,
            truncated=len(shown) < size,
        )
        return stored

    def sessions(self) -> messages.SessionsResult:
        """`counterfoil/sessions`: the runs kept beside the receipt log."""
        log = self.receipt_log()
        if log is None:
            return messages.SessionsResult(sessions=[], error=NO_FOLDER)
        return list_sessions(log)

    def inspect(self, params: messages.InspectParams) -> messages.InspectResult:
        """`counterfoil/inspect`; raises CheckpointRefused with one sentence."""
        from ...sessions.record import CheckpointRefused

        log, root = self.receipt_log(), self.root
        if log is None or root is None:
            raise CheckpointRefused(NO_FOLDER)
        return inspect_session(log, root, params.runId)

    def discard(self, params: messages.DiscardParams) -> messages.DiscardResult:
        """`counterfoil/discard`; raises CheckpointRefused with one sentence."""
        from ...sessions.record import CheckpointRefused

        log, root = self.receipt_log(), self.root
        if log is None or root is None:
            raise CheckpointRefused(NO_FOLDER)
        return discard_session(log, root, params.runId)

    def branches(self, params: messages.BranchesParams) -> messages.BranchesResult:
        """`counterfoil/branches`: the branches forked from a run, graded."""
        from ...branches.listing import branches_answer

        return branches_answer(self.receipt_log(), params.runId)
