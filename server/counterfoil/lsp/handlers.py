"""One coroutine per request the daemon serves, named for its method (`counterfoil/followUp`
is `follow_up`): each takes its params message, hands the work to the Session and answers with
its result message. `server.register_requests` binds them from `messages.REQUESTS`, parses the
params and turns the result into JSON once, so nothing here names a method or builds JSON."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import protocol as messages

if TYPE_CHECKING:  # the session, its jobs and the workspace load at the first request
    from .jobs import Job
    from .session import Session

logger = logging.getLogger("counterfoil.lsp")


def handler_name(method: str) -> str:
    """`counterfoil/runValidation` → `run_validation`."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", method.split("/", 1)[1]).lower()


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


async def _outcome(job: Job) -> Any:
    """Wait for a job; a cancelled request stops it and still answers with its result."""
    waiting = asyncio.wrap_future(job.result)
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        logger.info("cancelling the %s", job.kind)
        job.cancel()
        return await waiting


class Handlers:
    def __init__(self, session: Callable[[], Session]) -> None:
        self._session = session  # made at the first request that needs it

    @property
    def session(self) -> Session:
        return self._session()

    async def run(self, params: messages.RunParams) -> messages.RunResult:
        result: messages.RunResult = await _outcome(_start(lambda: self.session.run(params.goal)))
        return result

    async def follow_up(self, params: messages.FollowUpParams) -> messages.RunResult:
        result: messages.RunResult = await _outcome(
            _start(lambda: self.session.follow_up(params.text))
        )
        return result

    async def resume(self, params: messages.ResumeParams) -> messages.RunResult:
        # Off the loop: the checkpoint is read and checked first. A cancel that comes while it
        # is checked stops the job once it exists, and the request still gets its result.
        starting = asyncio.ensure_future(
            asyncio.to_thread(_start, lambda: self.session.resume(params.runId, params.steer))
        )
        try:
            job = await asyncio.shield(starting)
        except asyncio.CancelledError:
            job = await starting
            job.cancel()
        result: messages.RunResult = await _outcome(job)
        return result

    async def pause(self, params: None) -> messages.PauseResult:
        run_id = self.session.pause()
        return messages.PauseResult(pausing=run_id is not None, runId=run_id)

    async def sessions(self, params: None) -> messages.SessionsResult:
        return await asyncio.to_thread(self.session.sessions)

    async def inspect(self, params: messages.InspectParams) -> messages.InspectResult:
        from ..sessions.record import CheckpointRefused
        from .protocol import RunRefused

        try:
            return await asyncio.to_thread(self.session.inspect, params.runId)
        except CheckpointRefused as error:
            raise RunRefused(str(error)) from None

    async def discard(self, params: messages.DiscardParams) -> messages.DiscardResult:
        from ..sessions.record import CheckpointRefused
        from .protocol import RunRefused

        try:
            return await asyncio.to_thread(self.session.discard, params.runId)
        except CheckpointRefused as error:
            raise RunRefused(str(error)) from None

    async def object(self, params: messages.ObjectParams) -> messages.ObjectResult:
        return await asyncio.to_thread(self.session.stored_object, params.sha256)

    async def run_validation(
        self, params: messages.RunValidationParams
    ) -> messages.ValidationResult:
        result: messages.ValidationResult = await _outcome(
            _start(lambda: self.session.run_validation(params.argv))
        )
        return result

    async def revert(self, params: messages.RevertParams) -> messages.ValidationResult:
        result: messages.ValidationResult = await _outcome(
            _start(lambda: self.session.revert(params.toolCallId))
        )
        return result

    async def branches(self, params: messages.BranchesParams) -> messages.BranchesResult:
        from ..branches.listing import branches_answer

        log = self.session.receipt_log()
        return await asyncio.to_thread(branches_answer, log, params.runId)

    async def select_branch(
        self, params: messages.SelectBranchParams
    ) -> messages.SelectBranchResult:
        result: messages.SelectBranchResult = await _outcome(
            _start(lambda: self.session.select_branch(params.branch))
        )
        return result

    async def receipts(self, params: None) -> messages.ReceiptsResult:
        return await asyncio.to_thread(self.session.receipts)

    async def verify_receipts(self, params: None) -> messages.VerifyResult:
        return await asyncio.to_thread(self.session.verify)

    async def export_evidence(
        self, params: messages.ExportEvidenceParams
    ) -> messages.ExportEvidenceResult:
        return await asyncio.to_thread(self.session.export_evidence, params.commit)

    async def download_model(self, params: messages.ModelParams) -> messages.DownloadModelResult:
        from .model_download import answer

        model = (params.model or self.session.settings.model).strip()
        return await answer(self.session.downloads.start(model))

    async def model_runtime(self, params: messages.ModelParams) -> messages.ModelRuntimeResult:
        settings = self.session.settings
        model = (params.model or settings.model).strip()
        return await asyncio.to_thread(
            model_runtime_answer, model, settings.endpoint, settings.engine
        )

    async def status(self, params: None) -> messages.StatusResult:
        return self.session.status()

    async def folder_settings(self, params: None) -> messages.FolderSettingsResult:
        return self.session.folder_settings()

    async def confirm_folder_grants(
        self, params: messages.ConfirmFolderGrantsParams
    ) -> messages.FolderSettingsResult:
        from ..protocol import notice
        from .params import invalid_params

        try:
            result = await asyncio.to_thread(self.session.confirm_folder_grants, params)
        except ValueError as error:  # SettingsError too: a key that is no grant, a bad value
            raise invalid_params(str(error)) from None
        self.session.channel.notify(*notice(result))
        return result


def model_runtime_answer(
    model: str, endpoint: str | None, engine: str = "mlx"
) -> messages.ModelRuntimeResult:
    """What the model needs in the daemon's Python and, when something is missing, whether the
    model's files can be had at all (cached, local, downloadable): an install is not offered
    for a model that could not run after it, and both are said together."""
    from ..models.runtime import runtime_report

    report: dict[str, Any] = runtime_report(model, endpoint=endpoint, engine=engine)
    if report.get("missing") and not endpoint:
        from ..models.hub.availability import model_check

        check = model_check(model, 3.0)
        return messages.ModelRuntimeResult(
            **report, modelAvailable=check.ok, modelDetail=check.detail
        )
    return messages.ModelRuntimeResult(**report)
