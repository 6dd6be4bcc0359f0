"""Where each grant in force came from, as a receipt's approval records it (`grant`): the
person's own settings, the walkthrough, a folder grant the person confirmed, or a task
package. The settings decide it (`settings/layers.py`); the gate only writes it down."""

from __future__ import annotations

from dataclasses import dataclass

SETTINGS = "settings"
TASK_PACKAGE = "task-package"


@dataclass(frozen=True)
class GrantedBy:
    """`writes`: where `allowWrites` came from; `commands`: an allowed argv's source where it
    is not `default`."""

    writes: str = SETTINGS
    commands: tuple[tuple[tuple[str, ...], str], ...] = ()
    default: str = SETTINGS

    def of(self, argv: tuple[str, ...] | None) -> str:
        """The source of the grant a command (its argv) or a file effect (None) used."""
        if argv is None:
            return self.writes
        return dict(self.commands).get(tuple(argv), self.default)


FROM_SETTINGS = GrantedBy()
FROM_TASK_PACKAGE = GrantedBy(TASK_PACKAGE, (), TASK_PACKAGE)
