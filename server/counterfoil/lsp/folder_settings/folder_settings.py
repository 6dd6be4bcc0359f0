"""What a folder's settings did, as the daemon tells the editor, and the person's yes to a
folder's grants (recorded outside the folder, then the settings as sent are read again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import protocol as messages
from ...protocol import notice
from ...settings.layers import LayeredSettings, confirm_grants
from ..channel import ClientChannel
from ..params import invalid_params
from ..session_state import SessionState
from ..settings import read_settings


class FolderSettingsAnswers:
    """The handlers of `counterfoil/folderSettings` and `counterfoil/confirmFolderGrants`, over
    the session's state."""

    def __init__(self, state: SessionState, channel: ClientChannel) -> None:
        self._state = state
        self._channel = channel

    def shown(self) -> messages.FolderSettingsResult:
        return folder_settings_result(self._state)

    def confirm_grants(
        self, params: messages.ConfirmFolderGrantsParams
    ) -> messages.FolderSettingsResult:
        """Record the grants (a key that is no grant, a bad value: invalid params) and tell the
        editor what the folder's settings now do, as `folderSettingsChanged` does."""
        try:
            result = confirm_folder_grants(self._state, params)
        except ValueError as error:  # SettingsError too
            raise invalid_params(str(error)) from None
        self._channel.notify(*notice(result))
        return result


def folder_settings_result(state: SessionState) -> messages.FolderSettingsResult:
    return folder_settings_message(state.root, state.layered)


def folder_settings_message(root: Any, layered: LayeredSettings) -> messages.FolderSettingsResult:
    return messages.FolderSettingsResult(
        root=None if root is None else str(root),
        values=[messages.FolderSettingValue(**value.record()) for value in layered.folder_values],
        refused=[messages.RefusedSettingValue(**item.record()) for item in layered.refused],
    )


def confirm_folder_grants(
    state: SessionState, params: messages.ConfirmFolderGrantsParams
) -> messages.FolderSettingsResult:
    """Record the grants for the session's root and apply the settings as sent again; raises
    SettingsError for a key that is not a grant or a bad value, ValueError without a root.
    With `folder` (Counterfoil's own copy of the demo project, about to open in its own
    window), the grants are recorded for that folder and this root's settings stay as they are.
    """
    if params.folder is not None:
        folder = Path(params.folder)
        if params.origin != "walkthrough":
            raise ValueError("grants for another folder are recorded only as Counterfoil's own")
        if not folder.is_dir():
            raise ValueError(f"no such folder: {params.folder}")
        confirm_grants(params.grants, folder.resolve(), params.origin)
        return folder_settings_result(state)
    if state.root is None:
        raise ValueError("no workspace folder to confirm grants for")
    confirm_grants(params.grants, state.root, params.origin)
    state.adopt(
        state.sent_settings,
        read_settings(state.sent_settings, state.root, state.layered.person),
    )
    return folder_settings_result(state)
