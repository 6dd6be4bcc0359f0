"""The pygls language server: translates the daemon protocol to and from the Session.

Handlers here decide nothing: they check params, hand work to the Session (which runs it off
the event loop) and shape results. Everything the worker threads send to the client hops
onto the event loop first, so only the loop thread ever writes to stdout.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from .progress import ProgressReporter
from .transport import LoggingProtocol, raw_converter

if TYPE_CHECKING:
    from ..settings.table import Settings
    from .channel import MessageKind
    from .session import Job, Session

# The request checks (protocol.py) and the settings are imported by the handlers that use
# them, after `initialize` is answered: the editor waits for that answer, and nothing of the
# workspace, the settings or the protocol's shapes is needed to give it.

SERVER_NAME = "counterfoil"
SERVER_VERSION = __version__
SHUTDOWN_WAIT_SECONDS = 10.0

logger = logging.getLogger("counterfoil.lsp")

_MESSAGE_TYPES: dict[MessageKind, types.MessageType] = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
}


class LoopChannel:
    """The ClientChannel of a running server: every call is queued onto the event loop."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)
        self._progress = ProgressReporter(server.protocol)
        self.supports_progress = False

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def _call(self, function: Callable[..., Any], *args: Any) -> bool:
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(function, *args)
        except RuntimeError:  # the loop closed between the check and the call
            return False
        return True

    def notify(self, method: str, params: Any) -> None:
        self._call(self._server.protocol.notify, method, params)

    def request(self, method: str, params: Any) -> tuple[str, Future[Any]]:
        request_id = f"counterfoil-{next(self._ids)}"
        answer: Future[Any] = Future()

        def copy(sent: Future[Any]) -> None:
            if answer.done():
                return
            if sent.cancelled():
                answer.cancel()
            elif (error := sent.exception()) is not None:
                answer.set_exception(error)
            else:
                answer.set_result(sent.result())

        def send() -> None:
            try:
                sent = self._server.protocol.send_request(method, params, msg_id=request_id)
            except Exception as error:  # noqa: BLE001 - a request that cannot be sent is a No
                answer.set_exception(error)
                return
            sent.add_done_callback(copy)

        if not self._call(send):
            answer.set_exception(ConnectionError("the client connection is closed"))
        return request_id, answer

    def cancel_request(self, request_id: str) -> None:
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))

    def show_message(self, kind: MessageKind, text: str) -> None:
        self.notify(
            types.WINDOW_SHOW_MESSAGE,
            types.ShowMessageParams(type=_MESSAGE_TYPES[kind], message=text),
        )

    def log(self, text: str) -> None:
        self.notify(
            types.WINDOW_LOG_MESSAGE,
            types.LogMessageParams(type=types.MessageType.Log, message=text),
        )

    def begin_progress(self, title: str, message: str) -> str | None:
        if not self.supports_progress:
            return None
        token = f"counterfoil-progress-{next(self._ids)}"
        self._call(self._progress.begin, token, title, message)
        return token

    def report_progress(self, token: str | None, message: str) -> None:
        if token is not None:
            self._call(self._progress.report, token, message)

    def end_progress(self, token: str | None, message: str) -> None:
        if token is not None:
            self._call(self._progress.end, token, message)


class CounterfoilServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            SERVER_NAME,
            SERVER_VERSION,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=LoggingProtocol,
            converter_factory=raw_converter,
        )
        self.channel = LoopChannel(self)
        self._session: Session | None = None
        self._start_root: Path | None = None
        self._start_options: Any = None
        self._start_settings: Settings | None = None

    @property
    def session(self) -> Session:
        """Made at the first request that needs it, so that answering `initialize` loads no
        workspace, loop or model code; it starts with what `initialize` said."""
        if self._session is None:
            from .session import Session

            self.read_start_options()
            created = Session(self.channel)
            created.root = self._start_root
            if self._start_settings is not None:
                created.settings = self._start_settings
            self._session = created
        return self._session

    def start_with(self, root: Path | None, options: Any) -> None:
        """What `initialize` said: the root, and its settings to be read once it is answered."""
        self._start_root, self._start_options = root, options
        if self._session is not None:
            self._session.root = root
            self.read_start_options()

    def read_start_options(self) -> None:
        """Check `initialize`'s settings (at `initialized`, or at the first request if a client
        sends none): invalid ones are said once and the defaults kept."""
        if self._start_options is None:
            return
        from .settings import SettingsError, parse_settings

        options, self._start_options = self._start_options, None
        try:
            settings = parse_settings(options)
        except SettingsError as error:
            self.channel.show_message("error", f"Counterfoil: {error}; using the defaults")
            return
        logger.info("model %s", settings.model)
        if self._session is not None:
            self._session.settings = settings
        else:
            self._start_settings = settings

    def interrupt_session(self) -> None:
        if self._session is not None:
            self._session.interrupt()

    def close_session(self, wait_seconds: float) -> None:
        if self._session is not None:
            self._session.close(wait_seconds)


def _root_of(params: types.InitializeParams) -> Path | None:
    uri: str | None = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri is not None:
        path = to_fs_path(uri)
        return Path(path) if path else None
    if params.root_path:
        return Path(params.root_path)
    return None


def _start(start: Callable[[], Job]) -> Job:
    from ..sessions.record import CheckpointRefused
    from .protocol import NoConversationToContinue, NoWorkspace, RunInProgress, RunRefused
    from .session import NoConversation, NoWorkspaceRoot, SessionBusy

    try:
        return start()
    except CheckpointRefused as error:
        raise RunRefused(str(error)) from None
    except SessionBusy:
        raise RunInProgress() from None
    except NoWorkspaceRoot:
        raise NoWorkspace() from None
    except NoConversation:
        raise NoConversationToContinue() from None


async def _outcome(job: Job) -> dict[str, Any]:
    """Wait for a job; a cancelled request stops it and still answers with its result."""
    waiting = asyncio.wrap_future(job.result)
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        logger.info("cancelling the %s", job.kind)
        job.cancel()
        return await waiting


def build_server() -> CounterfoilServer:
    server = CounterfoilServer()
    channel = server.channel

    @server.feature(types.INITIALIZE)
    def initialize(ls: CounterfoilServer, params: types.InitializeParams) -> None:
        window = params.capabilities.window
        channel.supports_progress = bool(window and window.work_done_progress)
        root = _root_of(params)
        if root is not None and not root.is_dir():
            channel.show_message(
                "error", f"Counterfoil: workspace folder {root} is not a directory"
            )
            root = None
        resolved = None if root is None else root.resolve()
        server.start_with(resolved, params.initialization_options)
        logger.info("root %s", resolved)

    @server.feature(types.INITIALIZED)
    def initialized(ls: CounterfoilServer, params: types.InitializedParams) -> None:
        server.read_start_options()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def change_configuration(
        ls: CounterfoilServer, params: types.DidChangeConfigurationParams
    ) -> None:
        from .settings import SettingsError, settings_from_configuration

        try:
            settings = settings_from_configuration(params.settings)
        except SettingsError as error:
            channel.show_message("error", f"Counterfoil: {error}; keeping the previous settings")
            return
        if settings is None:
            logger.info("configuration change without a counterfoil section ignored")
            return
        server.session.settings = settings
        logger.info("settings changed; they apply from the next run")

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: CounterfoilServer, params: None) -> None:
        # At once, on the loop: an answer the client sends after `shutdown` is not acted on.
        server.interrupt_session()
        await asyncio.to_thread(server.close_session, SHUTDOWN_WAIT_SECONDS)

    @server.feature(types.EXIT)
    def exit_(ls: CounterfoilServer, params: None) -> None:
        server.close_session(SHUTDOWN_WAIT_SECONDS)

    @server.feature("counterfoil/run")
    async def run(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import goal_param

        goal = goal_param(params)
        return await _outcome(_start(lambda: server.session.run(goal)))

    @server.feature("counterfoil/followUp")
    async def follow_up(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import text_param

        text = text_param(params)
        return await _outcome(_start(lambda: server.session.follow_up(text)))

    @server.feature("counterfoil/resume")
    async def resume(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import run_id_param, steer_param

        run_id = run_id_param(params, "counterfoil/resume")
        steer = steer_param(params)
        # Off the loop: the checkpoint is read and checked first. A cancel that comes while it
        # is checked stops the job once it exists, and the request still gets its result.
        starting = asyncio.ensure_future(
            asyncio.to_thread(_start, lambda: server.session.resume(run_id, steer))
        )
        try:
            job = await asyncio.shield(starting)
        except asyncio.CancelledError:
            job = await starting
            job.cancel()
        return await _outcome(job)

    @server.feature("counterfoil/pause")
    def pause(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import no_params

        no_params(params, "counterfoil/pause")
        run_id = server.session.pause()
        return {"pausing": run_id is not None, "runId": run_id}

    @server.feature("counterfoil/sessions")
    async def sessions(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import no_params

        no_params(params, "counterfoil/sessions")
        return await asyncio.to_thread(server.session.sessions)

    @server.feature("counterfoil/inspect")
    async def inspect(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from ..sessions.record import CheckpointRefused
        from .protocol import RunRefused, run_id_param

        run_id = run_id_param(params, "counterfoil/inspect")
        try:
            return await asyncio.to_thread(server.session.inspect, run_id)
        except CheckpointRefused as error:
            raise RunRefused(str(error)) from None

    @server.feature("counterfoil/object")
    async def stored_object(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import digest_param

        digest = digest_param(params)
        return await asyncio.to_thread(server.session.stored_object, digest)

    @server.feature("counterfoil/runValidation")
    async def run_validation(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import argv_param

        argv = argv_param(params)
        return await _outcome(_start(lambda: server.session.run_validation(argv)))

    @server.feature("counterfoil/revert")
    async def revert(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import call_id_param

        call_id = call_id_param(params, "counterfoil/revert")
        return await _outcome(_start(lambda: server.session.revert(call_id)))

    @server.feature("counterfoil/branches")
    async def branches(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .branches import branches_answer
        from .protocol import string_param

        run_id = string_param(params, "counterfoil/branches", "runId")
        return await asyncio.to_thread(branches_answer, server.session.receipt_log(), run_id)

    @server.feature("counterfoil/selectBranch")
    async def select_branch(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import string_param

        branch = string_param(params, "counterfoil/selectBranch", "branch")
        return await _outcome(_start(lambda: server.session.select_branch(branch)))

    @server.feature("counterfoil/receipts")
    async def receipts(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import no_params

        no_params(params, "counterfoil/receipts")
        return await asyncio.to_thread(server.session.receipts)

    @server.feature("counterfoil/verifyReceipts")
    async def verify_receipts(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import no_params

        no_params(params, "counterfoil/verifyReceipts")
        return await asyncio.to_thread(server.session.verify)

    @server.feature("counterfoil/exportEvidence")
    async def export_evidence(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import string_param

        commit = string_param(params, "counterfoil/exportEvidence", "commit")
        return await asyncio.to_thread(server.session.export_evidence, commit)

    @server.feature("counterfoil/downloadModel")
    async def download_model(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .model_download import answer, model_param

        model = model_param(params, server.session.settings.model)
        return await answer(server.session.downloads.start(model))

    @server.feature("counterfoil/modelRuntime")
    async def model_runtime(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        settings = server.session.settings
        from .model_download import model_param

        model = model_param(params, settings.model)
        return await asyncio.to_thread(model_runtime_answer, model, settings.endpoint)

    @server.feature("counterfoil/status")
    def status(ls: CounterfoilServer, params: Any) -> dict[str, Any]:
        from .protocol import no_params

        no_params(params, "counterfoil/status")
        return server.session.status()

    return server


def model_runtime_answer(model: str, endpoint: str | None) -> dict[str, Any]:
    """What the model needs in the daemon's Python and, when something is missing, whether the
    model's files can be had at all (cached, local, downloadable): an install is not offered
    for a model that could not run after it, and both are said together."""
    from ..models.runtime import runtime_report

    report = runtime_report(model, endpoint=endpoint)
    if report.get("missing") and not endpoint:
        from ..cli.doctor import model_check

        check = model_check(model, 3.0)
        report.update(modelAvailable=check.ok, modelDetail=check.detail)
    return report
