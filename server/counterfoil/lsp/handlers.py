"""The daemon's half of the request table: each method it serves, and the method of the
session's part that does its work, bound directly (no handler of the session's own).

`protocol.REQUESTS` may not import the daemon (the folder order), so its rows name each
request's params, result and rule, and this table names its handler under the same method; a
test holds the two key sets equal. A handler takes the request's params message (nothing for
a request that takes `{}`) and returns its result message, or, for a request served one at a
time, the job whose future holds it; `request_rules` serves it as its row says."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the session and its parts load at the first request
    from .session import Session

Handler = Callable[..., Any]


def handlers(session: Session) -> dict[str, Handler]:
    operations, queries = session.operations, session.queries
    folder, model = session.folder_settings, session.model_requests
    return {
        "counterfoil/run": operations.run,
        "counterfoil/followUp": operations.follow_up,
        "counterfoil/runValidation": operations.run_validation,
        "counterfoil/revert": operations.revert,
        "counterfoil/receipts": queries.receipts,
        "counterfoil/verifyReceipts": queries.verify,
        "counterfoil/exportEvidence": queries.export_evidence,
        "counterfoil/status": queries.status,
        "counterfoil/object": queries.stored_object,
        "counterfoil/modelRuntime": model.runtime,
        "counterfoil/downloadModel": model.download,
        "counterfoil/sessions": queries.sessions,
        "counterfoil/inspect": queries.inspect,
        "counterfoil/resume": operations.resume,
        "counterfoil/pause": operations.pause,
        "counterfoil/discard": queries.discard,
        "counterfoil/branches": queries.branches,
        "counterfoil/selectBranch": operations.select_branch,
        "counterfoil/folderSettings": folder.shown,
        "counterfoil/confirmFolderGrants": folder.confirm_grants,
    }
