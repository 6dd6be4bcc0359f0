"""How the daemon serves a request: one coroutine per rule of `protocol.Runs`, chosen by the
rule in the request's row of `protocol.REQUESTS`, so no handler decides where it runs or what
it waits for.

A refusal that a part of the session raises (another operation goes, no folder is open, no
conversation to continue, a checkpoint that cannot be used) becomes its JSON-RPC error here,
the same whichever request met it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import Request, Runs

if TYPE_CHECKING:  # the jobs and the downloads load at the first request
    from .runs.jobs import Job

logger = logging.getLogger("counterfoil.lsp")

Work = Callable[[], Any]  # a handler with its params, called once


async def on_loop(work: Work) -> Any:
    return work()


async def off_loop(work: Work) -> Any:
    return await asyncio.to_thread(work)


async def one_at_a_time(work: Work) -> Any:
    """Started here, on the event loop: the job exists before the next request is read."""
    return await _outcome(work())


async def one_at_a_time_checked_off_loop(work: Work) -> Any:
    """Started off the event loop: its checks read the disk first. A cancel that comes while
    they run stops the job once it exists, and the request still gets its result."""
    starting = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        job = await asyncio.shield(starting)
    except asyncio.CancelledError:
        job = await starting
        job.cancel()
    return await _outcome(job)


async def one_download_at_a_time(work: Work) -> Any:
    from .model_service.model_download import answer

    return await answer(work())


async def _outcome(job: Job) -> Any:
    """Wait for a job; a cancelled request stops it and still answers with its result."""
    waiting = asyncio.wrap_future(job.result)
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        logger.info("cancelling the %s", job.kind)
        job.cancel()
        return await waiting


SERVED_AS: dict[Runs, Callable[[Work], Awaitable[Any]]] = {
    Runs.ON_LOOP: on_loop,
    Runs.OFF_LOOP: off_loop,
    Runs.ONE_AT_A_TIME: one_at_a_time,
    Runs.ONE_AT_A_TIME_CHECKED_OFF_LOOP: one_at_a_time_checked_off_loop,
    Runs.ONE_DOWNLOAD_AT_A_TIME: one_download_at_a_time,
}


async def answer(request: Request, handler: Callable[..., Any], params: Any) -> Any:
    """The result message of `handler` given its parsed `params`, served as `request`'s row
    says."""
    from ..sessions.record import CheckpointRefused
    from .rpc_errors import NoConversationToContinue, NoWorkspace, RunInProgress, RunRefused
    from .runs.jobs import ModelNotChosen, NoConversation, NoWorkspaceRoot, SessionBusy

    if request.runs is None:
        raise ValueError("the daemon serves no request it asks the client")
    work = handler if request.params is None else functools.partial(handler, params)
    try:
        return await SERVED_AS[request.runs](work)
    except (CheckpointRefused, ModelNotChosen) as error:
        raise RunRefused(str(error)) from None
    except SessionBusy:
        raise RunInProgress() from None
    except NoWorkspaceRoot:
        raise NoWorkspace() from None
    except NoConversation:
        raise NoConversationToContinue() from None
