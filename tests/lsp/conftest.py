"""A scripted editor for the daemon, driven by pytest-lsp's client.

Each test starts a daemon on a fresh copy of the demo project, answers `counterfoil/confirm`
however the test says, and records every notification it is sent. `start_daemon` starts the
real server over stdio (`python -m counterfoil.lsp`): the tests of the transport, the start
path, shutdown and a crash use it. `start_daemon_in_process` serves the same client from the
same server object in this process, each JSON-RPC message handed over whole on the test's
event loop: the requests' params, rules, handlers, errors and notifications are the daemon's
own, without a process to start (most of a stdio test's time on a busy machine). A test file
about behaviour takes it by overriding the `start_daemon` fixture; a transport test in such a
file asks for `start_daemon_over_stdio`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features
from tests.support.processes import GUARD_SECONDS

from counterfoil.lsp.transport import raw_converter

SERVER_COMMAND = [sys.executable, "-m", "counterfoil.lsp"]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FIX_APP = FIXTURES / "responses" / "fix-app.jsonl"
PYTEST_ARGV = ["python", "-m", "pytest", "tests/test_math.py", "-q"]

Answer = Callable[[dict[str, Any]], Awaitable[Any]]


async def approve(params: dict[str, Any]) -> dict[str, Any]:
    return {"approved": True}


async def reject(params: dict[str, Any]) -> dict[str, Any]:
    return {"approved": False}


async def never_answer(params: dict[str, Any]) -> dict[str, Any]:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def script(path: Path, *responses: dict[str, Any]) -> str:
    """Write scripted model responses and return the `scripted:` spec for them."""
    path.write_text("".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8")
    return f"scripted:{path}"


def edit_app_model(directory: Path, final: str = "done") -> str:
    """A model that reads app.py, proposes the one-character fix, then answers `final`."""
    return script(
        directory / "edit-app.jsonl",
        {"tool": "read_file", "path": "app.py"},
        {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"},
        {"final": final},
    )


class RecordingChannel:
    """A ClientChannel that keeps what it was asked to send."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.progress: list[tuple[str, str | None, str]] = []

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def steps(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """The step events the run that answered `result` sent."""
        return [
            params
            for method, params in self.notifications
            if method == "counterfoil/event" and params["runId"] == result["runId"]
        ]

    def request(self, method: str, params: Any) -> tuple[str, Future[Any]]:
        raise AssertionError("the model host asks nothing")

    def cancel_request(self, request_id: str) -> None:
        raise AssertionError("the model host asks nothing")

    def show_message(self, kind: str, text: str) -> None:
        self.notifications.append(("show", text))

    def log(self, text: str) -> None:
        self.notifications.append(("log", text))

    def begin_progress(self, title: str, message: str) -> str | None:
        self.progress.append(("begin", title, message))
        return title

    def report_progress(self, token: str | None, message: str) -> None:
        self.progress.append(("report", token, message))

    def end_progress(self, token: str | None, message: str) -> None:
        self.progress.append(("end", token, message))

    def states(self) -> list[str]:
        return [p["state"] for m, p in self.notifications if m == "counterfoil/modelState"]


@dataclass
class Daemon:
    """The client side of one daemon under test, with everything it has been told."""

    client: LanguageClient
    root: Path
    answer: Answer = approve
    confirms: list[dict[str, Any]] = field(default_factory=list)
    withdrawn: list[Any] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    model_states: list[dict[str, Any]] = field(default_factory=list)
    run_notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # runStarted, …
    exited: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def told(self, method: str) -> list[dict[str, Any]]:
        """The run notifications of one method (`counterfoil/runState`, …), in order."""
        return [params for name, params in self.run_notes if name == method]

    def steps(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """The step events of the run that answered `result`: they come by notification only,
        keyed by the run's id."""
        return [event for event in self.events if event["runId"] == result.get("runId")]

    def record(self, into: list[Any], item: Any) -> None:
        into.append(item)
        self.changed.set()

    async def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        return await self.client.protocol.send_request_async(method, params, msg_id=msg_id)

    def send(self, method: str, params: Any = None, msg_id: Any = None) -> asyncio.Future[Any]:
        """Send a request without waiting, so the test can act while it is in flight."""
        return asyncio.ensure_future(self.request(method, params, msg_id))

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, params)

    async def configure(self, settings: dict[str, Any]) -> None:
        self.notify(
            types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            types.DidChangeConfigurationParams(settings={"counterfoil": settings}),
        )
        await self.request("counterfoil/status", {})  # the change is handled before this

    async def until(
        self, predicate: Callable[[], object], *methods: str, timeout: float = GUARD_SECONDS
    ) -> None:
        """Wait until `predicate()` holds, checking it again each time the daemon tells the
        client something: a message recorded here, or a notification in `methods` (those
        pytest-lsp records itself, e.g. `window/showMessage`), through `wait_for_notification`.
        The timeout only guards against a hang: a busy machine must never reach it.
        """
        protocol = self.client.protocol
        try:
            async with asyncio.timeout(timeout):
                while not predicate():
                    self.changed.clear()
                    recorded = asyncio.ensure_future(self.changed.wait())
                    told = [protocol.wait_for_notification_async(m) for m in methods]
                    await asyncio.wait([recorded, *told], return_when=asyncio.FIRST_COMPLETED)
                    recorded.cancel()  # the notification futures are left to resolve
        except TimeoutError:
            raise AssertionError("timed out waiting for the daemon") from None

    async def kill(self) -> None:
        """SIGKILL the daemon, as a crash would: nothing of it runs after this."""
        process = self.client._server
        assert process is not None
        requests = self.client.protocol._request_futures
        for waiting in list(requests.values()):  # they die with it, unanswered
            waiting.cancel()
        requests.clear()
        process.kill()
        await process.wait()
        self.exited = True

    async def stop(self) -> None:
        if not self.exited:
            await self.client.shutdown_session()
            self.exited = True
        await self.client.stop()


def _client_for(daemon_box: list[Daemon]) -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    register_lsp_features(client)

    @client.feature("counterfoil/confirm")
    async def confirm(params: dict[str, Any]) -> Any:
        daemon = daemon_box[0]
        daemon.record(daemon.confirms, params)
        try:
            return await daemon.answer(params)
        except asyncio.CancelledError:
            daemon.record(daemon.withdrawn, params["toolCallId"])
            raise

    @client.feature("counterfoil/event")
    def event(params: dict[str, Any]) -> None:
        daemon_box[0].record(daemon_box[0].events, params)

    @client.feature("counterfoil/receipt")
    def receipt(params: dict[str, Any]) -> None:
        daemon_box[0].record(daemon_box[0].receipts, params)

    @client.feature("counterfoil/modelState")
    def model_state(params: dict[str, Any]) -> None:
        daemon_box[0].record(daemon_box[0].model_states, params)

    for method in (
        "counterfoil/runStarted",
        "counterfoil/runState",
        "counterfoil/modelText",
        "counterfoil/folderSettingsChanged",
        "counterfoil/runActivity",
        "counterfoil/approvalState",
    ):

        def note(params: dict[str, Any], method: str = method) -> None:
            daemon_box[0].record(daemon_box[0].run_notes, (method, params))

        client.feature(method)(note)

    return client


StartDaemon = Callable[..., Awaitable[Daemon]]


@pytest_asyncio.fixture
async def start_daemon_over_stdio(demo_project: Path) -> AsyncIterator[StartDaemon]:
    started: list[Daemon] = []

    async def start(options: Any = None, *, root: Path | None = None) -> Daemon:
        box: list[Daemon] = []
        client = _client_for(box)
        daemon = Daemon(client, root or demo_project)
        box.append(daemon)
        await client.start_io(*SERVER_COMMAND)
        started.append(daemon)
        await _initialize(daemon, options)
        return daemon

    yield start
    for daemon in started:
        await daemon.stop()


@pytest.fixture
def start_daemon(start_daemon_over_stdio: StartDaemon) -> StartDaemon:
    """The stdio daemon, unless a test file overrides this with `start_daemon_in_process`."""
    return start_daemon_over_stdio


async def _initialize(daemon: Daemon, options: Any) -> None:
    await daemon.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True)
            ),
            workspace_folders=[
                types.WorkspaceFolder(uri=daemon.root.as_uri(), name=daemon.root.name)
            ],
            initialization_options=options,
        )
    )


class _Handover:
    """One direction of an in-process connection: each message pygls writes (a JSON body, no
    headers) is delivered on the event loop's next turn, as a stdio reader would deliver it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, deliver: Callable[[bytes], None]) -> None:
        self._loop = loop
        self._deliver = deliver

    def write(self, data: bytes) -> None:
        self._loop.call_soon_threadsafe(self._deliver, data)

    def close(self) -> None:
        pass


@dataclass
class InProcessDaemon(Daemon):
    """A Daemon whose server is `build_server()` in this process, on the test's event loop."""

    server: Any = None

    async def kill(self) -> None:
        raise AssertionError("a crash needs a process: use the stdio daemon")

    async def stop(self) -> None:
        """`shutdown` as the client sends it, then what `exit` does in the daemon (without the
        process's own exit)."""
        from counterfoil.lsp.server import SHUTDOWN_WAIT_SECONDS

        if not self.exited:
            await self.request(types.SHUTDOWN)
            self.exited = True
            await asyncio.to_thread(self.server.close_session, SHUTDOWN_WAIT_SECONDS)
        await self.client.stop()


@pytest_asyncio.fixture
async def start_daemon_in_process(demo_project: Path) -> AsyncIterator[StartDaemon]:
    from counterfoil.lsp.server import build_server
    from counterfoil.lsp.transport import dispatch

    started: list[Daemon] = []

    async def start(options: Any = None, *, root: Path | None = None) -> Daemon:
        loop = asyncio.get_running_loop()
        box: list[Daemon] = []
        client = _client_for(box)
        server = build_server()
        server.channel.attach(loop)

        def to_client(body: bytes) -> None:
            protocol = client.protocol
            protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))

        server.protocol.set_writer(_Handover(loop, to_client), include_headers=False)
        client.protocol.set_writer(
            _Handover(loop, lambda body: dispatch(server.protocol, body)), include_headers=False
        )
        daemon = InProcessDaemon(client, root or demo_project, server=server)
        box.append(daemon)
        started.append(daemon)
        await _initialize(daemon, options)
        return daemon

    yield start
    for daemon in started:
        await daemon.stop()


@pytest.fixture
def fix_app_settings() -> dict[str, Any]:
    return {
        "model": f"scripted:{FIX_APP}",
        "allowWrites": True,
        "allowedCommands": [PYTEST_ARGV, ["python", "validate.py"]],
    }
