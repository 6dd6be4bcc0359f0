"""The models an evaluation compares, from the specs a person gives `--model`.

A spec is what `counterfoil agent --model` takes (an MLX name, repo id or folder, or
`scripted:PATH`), or `NAME@URL` for the model an OpenAI-compatible server serves (`@URL`: the
first it lists), so a local model and a server compare in one run. A script replays from its
start for every run; `scripted:FOLDER` replays `FOLDER/<task id>.jsonl` for each task. Any
other model is loaded once and serves every task and run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..loop import AgentLimits
from ..models.scripted import SCRIPTED_PREFIX, ScriptedModel

Generate = Callable[[list[dict[str, str]]], str]


@dataclass
class ModelUnderTest:
    """`settings`: setting keys that apply to every model of the evaluation (the model-server
    flags `counterfoil eval` takes: endpoint, schema mode, context tokens, max tokens)."""

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    _loaded: Any = field(default=None, repr=False)
    _limits: AgentLimits | None = field(default=None, repr=False)
    _load_error: Exception | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str | None:
        _name, at, url = self.spec.rpartition("@")
        if at and url.startswith(("http://", "https://")):
            return url
        endpoint = self.settings.get("endpoint")
        return str(endpoint) if endpoint else None

    @property
    def edit_form(self) -> str:
        """The setting `editForm` the runs' gate is given (a script's runs: the default)."""
        from ..settings.table import Settings

        value = self.settings.get("editForm")
        return str(Settings.default("editForm")) if value is None else str(value)

    @property
    def name(self) -> str:
        _name, at, url = self.spec.rpartition("@")
        return _name if at and url.startswith(("http://", "https://")) else self.spec

    def generate_for(self, task_id: str) -> tuple[Generate, AgentLimits]:
        """A generate callable for one run of `task_id`, and its limits.

        Raises ValueError or the model factory's load error when the model cannot be had."""
        if self.name.startswith(SCRIPTED_PREFIX) and not self.endpoint:
            path = Path(self.name[len(SCRIPTED_PREFIX) :])
            if path.is_dir():
                path = path / f"{task_id}.jsonl"
                if not path.is_file():
                    raise ValueError(f"no script for task {task_id} ({path})")
            return ScriptedModel.from_file(path), AgentLimits()
        if self._load_error is not None:
            raise self._load_error  # tried once: every later run is the same error, at once
        if self._loaded is None:
            try:
                self._loaded, self._limits = self._load()
            except Exception as error:
                self._load_error = error
                raise
        loaded = self._loaded
        assert self._limits is not None
        return loaded, self._limits

    def identity(self) -> dict[str, Any] | None:
        """The loaded model's `ModelIdentity` record (None: a script, or nothing loaded)."""
        if self._loaded is None:
            return None
        from ..models.identity import identity_of

        return identity_of(self._loaded, self.spec).as_record()

    def _load(self) -> tuple[Any, AgentLimits]:
        from ..models import GenerationOptions, load_generate
        from ..settings.table import Settings

        settings = Settings.from_mapping(
            {**self.settings, "model": self.name or None, "endpoint": self.endpoint}
        )
        options = GenerationOptions.from_settings(settings)
        spec = self.name if self.name or not self.endpoint else ""
        generate = load_generate(spec, options)
        return generate, settings.limits(generate)
