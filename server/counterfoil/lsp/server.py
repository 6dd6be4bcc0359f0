"""The pygls language server: translates the daemon protocol to and from the Session.

The protocol's requests are registered from `protocol.REQUESTS` (see `register_requests`):
each row's rule says how it is served (`request_rules`), the daemon's table (`handlers`) which
part of the session does its work. Everything the worker threads send to the client hops onto
the event loop first, so only the loop thread ever writes to stdout.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Generator
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
    from ..protocol import Request
    from ..settings.layers import LayeredSettings
    from ..settings.refused import RefusedSetting
    from .channel import MessageKind
    from .handlers import Handler
    from .session import Session

# The settings and the handlers' work are imported once `initialize` is answered: the editor
# waits for that answer. The request table (`protocol`) and its rules are read at startup, to
# register the requests (registering them later, from inside a lookup, let a shutdown race an
# answer); each request's handler is bound at the first request, with the session.

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
        self._handlers: dict[str, Handler] | None = None
        self._start_root: Path | None = None
        self._start_options: Any = None
        self._start_settings: tuple[Any, LayeredSettings] | None = None

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
                created.adopt_settings(*self._start_settings)
            self._session = created
        return self._session

    @property
    def handlers(self) -> dict[str, Handler]:
        """Each served method's handler, bound to the session's parts once it is made."""
        if self._handlers is None:
            from .handlers import handlers

            self._handlers = handlers(self.session)
        return self._handlers

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
        from .settings import SettingsError, read_settings

        options, self._start_options = self._start_options, None
        try:
            layered = read_settings(options, self._start_root)
        except SettingsError as error:
            self.channel.show_message("error", f"Counterfoil: {error}; using the defaults")
            return
        self.say_refused(layered, ())
        logger.info("model %s", layered.settings.model)
        if self._session is not None:
            self._session.adopt_settings(options, layered)
        else:
            self._start_settings = (options, layered)
        self.notify_folder_settings(self._start_root, layered)

    def say_refused(self, layered: LayeredSettings, before: tuple[RefusedSetting, ...]) -> None:
        """Each refused value once, as a toast too (VS Code sends a change once per settings
        file it reads again); the run panel and Check Setup list them while they stand."""
        if layered.refused and layered.refused != before:
            lines = "; ".join(item.line() for item in layered.refused)
            self.channel.show_message(
                "error", f"Counterfoil: {lines}. Your other settings apply as you set them."
            )

    def notify_folder_settings(self, root: Path | None, layered: LayeredSettings) -> None:
        """Tell the editor what the folder's settings did (an empty list once they do nothing,
        so what it shows is never stale)."""
        from ..protocol import notice
        from .folder_settings.folder_settings import folder_settings_message

        self.channel.notify(*notice(folder_settings_message(root, layered)))

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
        from .settings import SettingsError, read_settings, settings_section

        sent = settings_section(params.settings)
        if sent is None:
            logger.info("configuration change without a counterfoil section ignored")
            return
        session = server.session
        before = session.state.layered
        try:
            layered = read_settings(sent, session.root, before.person)
        except SettingsError as error:
            channel.show_message("error", f"Counterfoil: {error}; keeping the previous settings")
            return
        server.say_refused(layered, before.refused)
        session.adopt_settings(sent, layered)
        server.notify_folder_settings(session.root, layered)
        # The model is named so that a reader of the log (and the editor tests) can tell which
        # change was taken: VS Code sends one notification per settings file it re-reads.
        logger.info(
            "settings changed (model %s); they apply from the next run", layered.settings.model
        )

    async def close_session() -> None:
        await asyncio.to_thread(server.close_session, SHUTDOWN_WAIT_SECONDS)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: CounterfoilServer, params: None) -> Generator[Any, Any, None]:
        # A generator, so pygls runs this first line as it reads the request, before it reads
        # anything the client sent after it: an answer sent after `shutdown` is not acted on.
        # (An async handler's body would start only on the loop's next turn, after the reader
        # had already handed a later answer to the waiting run.) Then the run is wound down
        # off the loop.
        server.interrupt_session()
        yield close_session, (), None

    @server.feature(types.EXIT)
    def exit_(ls: CounterfoilServer, params: None) -> None:
        server.close_session(SHUTDOWN_WAIT_SECONDS)

    register_requests(server)
    return server


def register_requests(server: CounterfoilServer) -> None:
    """Each request of `protocol.REQUESTS` the daemon serves: its params parsed into their
    message (a bad one is a JSON-RPC error naming the field), its handler served as its row's
    rule says (`request_rules`), its result message turned into JSON once."""
    from ..protocol import REQUESTS

    for method, request in REQUESTS.items():
        if not request.to_client:
            server.feature(method)(_served(server, method, request))


def _served(
    server: CounterfoilServer, method: str, request: Request
) -> Callable[[CounterfoilServer, Any], Awaitable[Any]]:
    from ..protocol import wire
    from .params import parse_params
    from .request_rules import answer

    async def served(ls: CounterfoilServer, params: Any) -> Any:
        parsed = parse_params(request.params, params, method)
        return wire(await answer(request, server.handlers[method], parsed))

    return served
