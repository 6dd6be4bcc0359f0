"""The daemon's session: a thin facade over its parts, so the server sees one object.

The parts: the state (`initialize`'s root and the settings), the model host and downloads,
the run book (the runs this daemon ran, the conversation a follow-up continues), the
operations (one at a time, on a worker thread; see `operations`) and the queries (answered
without starting anything; see `session_queries`). Stop denies a pending approval and stops
the model inside its token loop; pause lets a running command finish.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from .. import protocol as messages
from ..settings.layers import LayeredSettings
from ..settings.table import Settings
from .agent_run import EVENT_METHOD, AgentRunner
from .channel import ClientChannel
from .folder_settings import confirm_folder_grants, folder_settings_result
from .jobs import Job, NoConversation, NoWorkspaceRoot, SessionBusy, WorkspaceUnavailable
from .model_download import ModelDownloads
from .model_host import ModelHost
from .operations import Operations
from .run_book import RunBook
from .session_queries import ModelStatus, SessionQueries
from .session_state import SessionState

__all__ = [
    "EVENT_METHOD",
    "Job",
    "NoConversation",
    "NoWorkspaceRoot",
    "Session",
    "SessionBusy",
    "WorkspaceUnavailable",
]

logger = logging.getLogger(__name__)


class Session:
    def __init__(self, channel: ClientChannel) -> None:
        self.channel = channel
        self.models = ModelHost(channel)
        self.downloads = ModelDownloads(channel)
        self.runner = AgentRunner(channel, self.models, self.downloads)
        self._state = SessionState()
        self._book = RunBook()
        self._operations = Operations(channel, self._state, self._book, self.runner)
        self._queries = SessionQueries(
            self._state, self._book, lambda: self._operations.running, self._model_status
        )
        # The queries, as the session's own
        self.receipt_log = self._queries.receipt_log
        self.status = self._queries.status
        self.receipts = self._queries.receipts
        self.export_evidence = self._queries.export_evidence
        self.verify = self._queries.verify
        self.stored_object = self._queries.stored_object
        self.sessions = self._queries.sessions
        self.inspect = self._queries.inspect
        self.discard = self._queries.discard
        # The operations
        self.run = self._operations.run
        self.follow_up = self._operations.follow_up
        self.resume = self._operations.resume
        self.run_validation = self._operations.run_validation
        self.revert = self._operations.revert
        self.select_branch = self._operations.select_branch

    @property
    def settings(self) -> Settings:
        return self._state.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._state.settings = settings

    def adopt_settings(self, sent: object, layered: LayeredSettings) -> None:
        """Settings as the client sent them and what they came to for the root."""
        self._state.adopt(sent, layered)

    def folder_settings(self) -> messages.FolderSettingsResult:
        return folder_settings_result(self._state)

    def confirm_folder_grants(
        self, params: messages.ConfirmFolderGrantsParams
    ) -> messages.FolderSettingsResult:
        return confirm_folder_grants(self._state, params)

    @property
    def root(self) -> Path | None:
        return self._state.root

    @root.setter
    def root(self, root: Path | None) -> None:
        self._state.root = root

    @property
    def running(self) -> bool:
        return self._operations.running

    def runs(self) -> list[messages.RunRecord]:
        return self._book.runs()

    def _model_status(self) -> ModelStatus:
        return (self.models.state, *self.downloads.status(self.settings.model))

    def pause(self) -> str | None:
        """Ask the running agent run to pause; its run id, or None when no run goes."""
        job = self._operations.job
        if job is None or job.result.done() or job.kind != "run":
            return None
        job.pause()
        return job.run_id

    def cancel(self) -> None:
        job = self._operations.job
        if job is not None:
            job.cancel()

    def interrupt(self) -> None:
        """The client is going away: the running operation's open approval is withdrawn (an
        answer that still comes is not acted on) and a run stays resumable. Called at once
        when the shutdown request arrives, before anything the client sends after it."""
        job = self._operations.job
        if job is not None:
            job.interrupt()

    def close(self, timeout: float = 10.0) -> None:
        """Interrupt the running operation, end its command, and wait for it, so no effect is
        left half done; a run closed so stays resumable. The kept model is released."""
        self.interrupt()
        self.downloads.close(timeout)
        job = self._operations.job
        if job is not None:
            job.cancel()
            if job.thread is not None and job.thread is not threading.current_thread():
                job.thread.join(timeout)
                if job.thread.is_alive():
                    logger.warning("the %s did not stop within %.0f s", job.kind, timeout)
        self.models.close()
