"""The daemon's session: the parts that answer its requests, made together and closed
together.

The parts: the state (`initialize`'s root and the settings), the model host and downloads,
the run book (the runs this daemon ran, the conversation a follow-up continues), the
operations (one at a time, on a worker thread; see `operations`), the queries (answered
without starting anything; see `session_queries`), the folder's settings and the model
requests. Each request's handler is a method of one part, bound in `handlers.py`; the session
adds none of its own. Stop denies a pending approval and stops the model inside its token loop;
pause lets a running command finish.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ..settings.layers import LayeredSettings
from ..settings.table import Settings
from .channel import ClientChannel
from .folder_settings.folder_settings import FolderSettingsAnswers
from .kept_runs.session_queries import ModelStatus, SessionQueries
from .model_service.model_download import ModelDownloads
from .model_service.model_host import ModelHost
from .model_service.model_requests import ModelRequests
from .runs.agent_run import EVENT_METHOD, AgentRunner
from .runs.jobs import Job, NoConversation, NoWorkspaceRoot, SessionBusy, WorkspaceUnavailable
from .runs.operations import Operations
from .runs.run_book import RunBook
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
        self.state = SessionState()
        self.book = RunBook()
        self.operations = Operations(channel, self.state, self.book, self.runner)
        self.queries = SessionQueries(
            self.state, self.book, lambda: self.operations.running, self._model_status
        )
        self.folder_settings = FolderSettingsAnswers(self.state, channel)
        self.model_requests = ModelRequests(self.state, self.downloads)

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.state.settings = settings

    def adopt_settings(self, sent: object, layered: LayeredSettings) -> None:
        """Settings as the client sent them and what they came to for the root."""
        self.state.adopt(sent, layered)

    @property
    def root(self) -> Path | None:
        return self.state.root

    @root.setter
    def root(self, root: Path | None) -> None:
        self.state.root = root

    def _model_status(self) -> ModelStatus:
        return (self.models.state, *self.downloads.status(self.settings.model))

    def interrupt(self) -> None:
        """The client is going away: the running operation's open approval is withdrawn (an
        answer that still comes is not acted on) and a run stays resumable. Called at once
        when the shutdown request arrives, before anything the client sends after it."""
        job = self.operations.job
        if job is not None:
            job.interrupt()

    def close(self, timeout: float = 10.0) -> None:
        """Interrupt the running operation, end its command, and wait for it, so no effect is
        left half done; a run closed so stays resumable. The kept model is released."""
        self.interrupt()
        self.downloads.close(timeout)
        job = self.operations.job
        if job is not None:
            job.cancel()
            if job.thread is not None and job.thread is not threading.current_thread():
                job.thread.join(timeout)
                if job.thread.is_alive():
                    logger.warning("the %s did not stop within %.0f s", job.kind, timeout)
        self.models.close()
