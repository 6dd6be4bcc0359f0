"""The handlers of `counterfoil/downloadModel` and `counterfoil/modelRuntime`: each asks about
the model its params name, else the one the settings name."""

from __future__ import annotations

from typing import Any

from ... import protocol as messages
from ...settings.table import Settings
from ..session_state import SessionState
from .model_download import DownloadJob, ModelDownloads


class ModelRequests:
    def __init__(self, state: SessionState, downloads: ModelDownloads) -> None:
        self._state = state
        self._downloads = downloads

    def download(self, params: messages.ModelParams) -> DownloadJob:
        """Start the download (refused while another model downloads); the request waits for
        it (`ONE_DOWNLOAD_AT_A_TIME`)."""
        return self._downloads.start(_named(params, self._state.settings))

    def runtime(self, params: messages.ModelParams) -> messages.ModelRuntimeResult:
        settings = self._state.settings
        return model_runtime_answer(_named(params, settings), settings.endpoint, settings.engine)


def _named(params: messages.ModelParams, settings: Settings) -> str:
    return (params.model or settings.model).strip()


def model_runtime_answer(
    model: str, endpoint: str | None, engine: str = "mlx"
) -> messages.ModelRuntimeResult:
    """What the model needs in the daemon's Python and, when something is missing, whether the
    model's files can be had at all (cached, local, downloadable): an install is not offered
    for a model that could not run after it, and both are said together."""
    from ...models.runtime import runtime_report

    report: dict[str, Any] = runtime_report(model, endpoint=endpoint, engine=engine)
    if report.get("missing") and not endpoint:
        from ...models.hub.availability import model_check

        check = model_check(model, 3.0)
        return messages.ModelRuntimeResult(
            **report, modelAvailable=check.ok, modelDetail=check.detail
        )
    return messages.ModelRuntimeResult(**report)
