"""Model downloads in the daemon: one at a time, on a worker thread, reported as they go.

`counterfoil/downloadModel` starts one; its reports go out as `counterfoil/download`
notifications (and a `$/progress` report when the client takes them); `$/cancelRequest` stops
it at the next chunk and keeps what arrived. `counterfoil/status` asks here whether the
configured model is on disk and how much is left to fetch.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from pygls.exceptions import JsonRpcException, JsonRpcServerError

from ...models.errors import ModelLoadError
from ...models.hub import download
from ...protocol import DownloadModelResult, DownloadProgress, notice
from ..channel import ClientChannel

DOWNLOAD_FAILED = -32003
DOWNLOAD_IN_PROGRESS = -32004
REQUEST_CANCELLED = -32800
SIZE_RETRY_SECONDS = 60.0
STOP_POLL_SECONDS = 0.1

logger = logging.getLogger(__name__)


class DownloadFailed(JsonRpcServerError):
    """Offline, unreachable, a wrong name: the one-line message with the way out."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DOWNLOAD_FAILED)  # type: ignore[no-untyped-call]


class DownloadInProgress(JsonRpcServerError):
    def __init__(self, model: str) -> None:
        message = f"a download of {model} is already in progress"
        super().__init__(message, DOWNLOAD_IN_PROGRESS)  # type: ignore[no-untyped-call]


class DownloadRequestCancelled(JsonRpcException):
    """The answer to a cancelled download (LSP's RequestCancelled)."""

    CODE = REQUEST_CANCELLED

    def __init__(self, model: str) -> None:
        super().__init__(f"download of {model} cancelled; what arrived is kept for the next try")


def progress_notice(model: str, progress: download.DownloadProgress) -> DownloadProgress:
    """The `counterfoil/download` notification of `model`'s download."""
    return DownloadProgress(
        model=model,
        bytes=progress.bytes,
        total=progress.total,
        rate=progress.rate,
        etaSeconds=progress.eta_seconds,
        state=progress.state,
    )


class DownloadJob:
    def __init__(self, model: str) -> None:
        self.model = model
        self.stop = threading.Event()
        self.result: Future[Path] = Future()


class ModelDownloads:
    """The daemon's downloads and what it knows of each model's size."""

    def __init__(self, channel: ClientChannel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._job: DownloadJob | None = None
        self._missing: dict[str, int] = {}
        self._size_asked: dict[str, float] = {}

    def start(self, model: str) -> DownloadJob:
        """Start downloading `model` on a worker thread; its future holds the snapshot folder."""
        try:
            repo = download.hub_repo(model)
        except ModelLoadError as error:
            raise DownloadFailed(str(error)) from None
        if repo is None:
            raise DownloadFailed(f"model {model} is not on the hub: there is nothing to download")
        with self._lock:
            if self._job is not None and not self._job.result.done():
                raise DownloadInProgress(self._job.model)
            job = DownloadJob(model)
            self._job = job
        thread = threading.Thread(
            target=self._download, args=(job,), name="counterfoil-download", daemon=True
        )
        thread.start()
        return job

    def _download(self, job: DownloadJob) -> None:
        token = self._channel.begin_progress("Downloading model", job.model)
        last = ""

        def report(progress: download.DownloadProgress) -> None:
            nonlocal last
            self._missing[job.model] = progress.total - progress.bytes
            self._channel.notify(*notice(progress_notice(job.model, progress)))
            last = download.format_progress(progress)
            self._channel.report_progress(token, last)

        try:
            folder = download.download_model(
                job.model, on_progress=report, should_stop=job.stop.is_set
            )
        except download.DownloadCancelled as error:
            self._channel.end_progress(token, "cancelled")
            job.result.set_exception(error)
            return
        except ModelLoadError as error:
            self._channel.end_progress(token, "failed")
            job.result.set_exception(error)
            return
        except Exception as error:  # the request always gets an answer
            logger.exception("download of %s failed", job.model)
            self._channel.end_progress(token, "failed")
            job.result.set_exception(
                download.ModelDownloadError(f"{type(error).__name__}: {error}")
            )
            return
        self._missing[job.model] = 0
        self._channel.end_progress(token, "done")
        job.result.set_result(folder)

    def ensure_on_disk(self, model: str, should_stop: Callable[[], bool]) -> None:
        """Before a run: download a hub model that is not on disk, reported like a request.

        Joins a download of the same model already under way. Raises `DownloadCancelled` when
        the run is stopped and `ModelLoadError` when the download fails; a name that is not
        valid is left to the model loader to report.
        """
        try:
            if download.model_on_disk(model):
                return
        except ModelLoadError:
            return
        with self._lock:
            job = self._job
        if job is None or job.result.done() or job.model != model:
            try:
                job = self.start(model)
            except DownloadInProgress as error:
                raise download.ModelDownloadError(error.message) from None
        while True:
            try:
                job.result.exception(STOP_POLL_SECONDS)
                break
            except TimeoutError:
                if should_stop():
                    job.stop.set()
        job.result.result()

    def close(self, timeout: float = 10.0) -> None:
        with self._lock:
            job = self._job
        if job is not None and not job.result.done():
            job.stop.set()
            try:
                job.result.exception(timeout)
            except TimeoutError:
                logger.warning("the download of %s did not stop in time", job.model)

    def status(self, model: str) -> tuple[bool | None, int | None]:
        """`modelOnDisk` (None for a name that is not valid) and `modelDownloadBytes` (bytes
        left to fetch; None until the hub has been asked, which this starts in the background)."""
        try:
            on_disk = download.model_on_disk(model)
        except ModelLoadError:  # a name that is not valid, or no hub client to look with
            return None, None
        if on_disk:
            return True, 0
        missing = self._missing.get(model)
        if missing is None:
            self._ask_size(model)
        return False, missing

    def _ask_size(self, model: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._size_asked.get(model, -SIZE_RETRY_SECONDS) < SIZE_RETRY_SECONDS:
                return
            self._size_asked[model] = now

        def ask() -> None:
            try:
                self._missing[model] = download.plan_download(model).missing_bytes
            except ModelLoadError as error:
                logger.info("size of %s unknown: %s", model, error)

        threading.Thread(target=ask, name="counterfoil-model-size", daemon=True).start()


async def answer(job: DownloadJob) -> DownloadModelResult:
    """`{ok: true, path}` once the model is on disk; a cancelled request stops the download."""
    waiting = asyncio.wrap_future(job.result)
    try:
        try:
            folder = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            logger.info("cancelling the download of %s", job.model)
            job.stop.set()
            folder = await waiting
    except download.DownloadCancelled:
        raise DownloadRequestCancelled(job.model) from None
    except ModelLoadError as error:
        raise DownloadFailed(str(error)) from None
    return DownloadModelResult(ok=True, path=str(folder))
