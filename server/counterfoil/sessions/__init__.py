"""Sessions that survive: checkpoints at complete observations, resume, inspect and steer.

The course's surface (`checkpoint`, `resume`, `steering`) keeps one conversation boundary in
memory; the rest of the package keeps it on disk beside the receipt log, so a run killed or
paused can be resumed with its effects accounted for.
"""

from ..model_state import ModelCheckpoint
from .checkpoint import (
    AgentCheckpoint,
    RestoresCheckpoints,
    SavesCheckpoints,
    create_checkpoint,
)
from .intents import objects_in_use  # noqa: F401 - registers what `receipts gc` keeps
from .resume import resume_agent, run_to_checkpoint
from .steering import AgentStatus, inspect_checkpoint, resume_with_steering

__all__ = [
    "AgentCheckpoint",
    "AgentStatus",
    "ModelCheckpoint",
    "RestoresCheckpoints",
    "SavesCheckpoints",
    "create_checkpoint",
    "inspect_checkpoint",
    "resume_agent",
    "resume_with_steering",
    "run_to_checkpoint",
]
