"""Where a group of subcommands is added, and the flags several of them share, written once."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Subcommands:
    """The subparsers a group adds its commands to, the `agent` command whose flags a command
    that runs the agent again takes, and how the group explains `--receipt-log`."""

    commands: argparse._SubParsersAction  # type: ignore[type-arg]
    agent: argparse.ArgumentParser
    receipt_log_help: str

    def add_log_arguments(self, parser: argparse.ArgumentParser) -> None:
        """`--root` and `--receipt-log`: the project and the receipt log it keeps."""
        add_log_arguments(parser, self.receipt_log_help)

    def add_agent_flags(self, parser: argparse.ArgumentParser) -> None:
        """Every flag of `agent` but its goal (and help)."""
        for action in self.agent._actions:
            if action.dest not in ("help", "goal"):
                parser._add_action(action)


def add_log_arguments(parser: argparse.ArgumentParser, receipt_log_help: str) -> None:
    parser.add_argument("--root", required=True, type=Path, help="the project folder")
    parser.add_argument("--receipt-log", dest="receiptLog", metavar="PATH", help=receipt_log_help)
