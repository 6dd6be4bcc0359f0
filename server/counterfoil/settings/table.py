"""The person's settings, decided once: defaults, checks and what they mean for a run.

The daemon (`initializationOptions`, `didChangeConfiguration`) and the CLI (its flags) both
build `Settings` with `Settings.from_mapping`, which takes the settings' keys
(`allowWrites`, `receiptLog`, …), ignores unknown keys, gives a missing or null key its
default, and refuses the whole mapping with a `SettingsError` that names every bad key.

Adding a setting is one field in `Settings`: `name: type = setting(default, "camelKey",
check, schema=…, description=…, flag=…, help=…)`, where `check(value)` returns the value in
its Python shape or raises `Invalid("must …")`. The CLI's flags are made from the table
(`cli.build_parser`), and the editor's contributed configuration is generated from it
(`python -m counterfoil.settings.manifest`, checked by a test).

One rule for the receipt log, in the CLI as in the daemon: a relative path stays inside the
root (no `..`) and is taken relative to it; an absolute path is taken as it is, so a person may
keep receipts outside the project. (The agent can never read or write the log either way.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..commands.tree.sandbox import SANDBOX_MODES
from ..gate.rules import NO_RULES, RuleSet
from ..mcp.servers import McpServer
from ..receipts.content import OUTPUT_LIMIT_BYTES
from ..tools import EDIT_FORMS
from .approval_rules import NARROW_RULES, approval_rules
from .checks import (
    COUNT_SCHEMA,
    ENGINES,
    NAMES_SCHEMA,
    OPTIONAL_COUNT_SCHEMA,
    SECONDS_SCHEMA,
    Invalid,
    boolean,
    commands,
    edit_form,
    endpoint,
    engine_name,
    environment_name,
    inline_chars,
    mcp_servers,
    parsed_files,
    patterns,
    positive_int,
    receipt_log,
    sandbox_mode,
    schema_mode,
    seconds,
    setting,
    text,
    variable_names,
)
from .endpoints import DEFAULT_API_KEY_ENV, DEFAULT_TIMEOUT_SECONDS, SCHEMA_MODES
from .folder_rules import (
    FOLDER_MAY,
    GRANT,
    LOWER,
    MODEL,
    MORE,
    OFF_ONLY,
    PERSONS_ALONE,
    RECEIPT_LOG,
    SUBSET,
    Ranked,
)

if TYPE_CHECKING:  # imported where used: reading settings (the daemon's start) needs neither
    from ..gate.grants import GrantedBy
    from ..gate.policy import ToolPolicy
    from ..loop import AgentLimits

DEFAULT_MODEL = "qwen3-4b"
DEFAULT_RECEIPT_LOG = ".counterfoil/receipts.jsonl"
MAX_STEPS_LIMIT = 10_000
MAX_TOKENS_LIMIT = 1_000_000
MAX_CONTEXT_TOKENS_LIMIT = 100_000_000
MAX_WRITE_BYTES_LIMIT = 64 * 1024 * 1024
MAX_COMMAND_OUTPUT_BYTES_LIMIT = 1024 * 1024 * 1024

NO_COMMANDS: tuple[tuple[str, ...], ...] = ()
NO_PATTERNS: tuple[str, ...] = ()
NO_MCP_SERVERS: tuple[McpServer, ...] = ()


class SettingsError(ValueError):
    """Settings refused as a whole; the message names every bad key (`problems`, one each)."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


SERVER = "model server (see docs/remote.md)"
SANDBOX_ORDER = Ranked(SANDBOX_MODES)  # loosest to strictest


@dataclass(frozen=True)
class Settings:
    model: str = setting(
        DEFAULT_MODEL,
        "model",
        text,
        schema={"type": "string"},
        description="Model the agent uses: a short name (`qwen3-0.6b`, `qwen3-1.7b`, `qwen3-4b`, "
        "`qwen3-8b`, `qwen3-30b-a3b`), an MLX repo id, a local model directory, a GGUF file "
        "(llama architecture, Q4_0/Q4_1/Q8_0/F16/F32; imported once), or "
        "`scripted:PATH` to replay recorded responses (one per line). With "
        "`#counterfoil.endpoint#` set: the name the server serves the model under.",
        flag="--model",
        help="MLX model name, repo id or directory, a .gguf file, or scripted:PATH (default {default}); with "
        "--endpoint, the served model's name (default: the first the server lists)",
        folder=MODEL,
    )
    engine: str = setting(
        "auto",
        "engine",
        engine_name,
        schema={"type": "string"},
        description="How a local model runs: `mlx` (in the daemon, on MLX), `llama.cpp` (a GGUF "
        "file `#counterfoil.model#`, any architecture and quantization llama.cpp reads, on a "
        "llama.cpp server Counterfoil starts on this machine and stops; faster on a CPU; needs "
        "`pip install 'counterfoil[llamacpp]'`), or `auto`: llama.cpp for a `.gguf` file where "
        "MLX has no GPU and llama.cpp is installed, else MLX. Not used with "
        "`#counterfoil.endpoint#`.",
        flag="--engine",
        choices=ENGINES,
        help="how a local model runs: mlx, llama.cpp for a .gguf file, or auto (llama.cpp for "
        "a .gguf file where MLX has no GPU; default {default})",
        folder=PERSONS_ALONE,  # what starts on this machine is the person's word
    )
    allow_writes: bool = setting(
        False,
        "allowWrites",
        boolean,
        schema={"type": "boolean"},
        description="Let the agent propose `write_file` and `edit_file`. Each proposal still "
        "needs your approval in a diff.",
        flag="--allow-writes",
        help="enable write_file/edit_file",
        folder=GRANT,
    )
    allowed_commands: tuple[tuple[str, ...], ...] = setting(
        NO_COMMANDS,
        "allowedCommands",
        commands,
        schema={
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        description="Commands the agent may propose, each an exact argv array run without a "
        'shell in the workspace root, e.g. `[["python", "-m", "pytest", "-q"]]`. Each run still '
        "needs your approval.",
        flag="--allow-command",
        metavar="COMMAND",
        help='an allowed command, e.g. "python validate.py"; matched exactly as split by a shell '
        "(repeatable)",
        folder=GRANT,
    )
    receipt_log: str = setting(
        DEFAULT_RECEIPT_LOG,
        "receiptLog",
        receipt_log,
        schema={"type": ["string", "null"]},
        description="Path of the append-only, hash-chained receipt log (JSON Lines), relative "
        "to the workspace root or absolute. Empty: `.counterfoil/receipts.jsonl` in the "
        "workspace.",
        flag="--receipt-log",
        metavar="PATH",
        help="receipt log: relative to the root, or absolute (default {default})",
        folder=RECEIPT_LOG,
    )
    max_write_bytes: int = setting(
        64 * 1024,
        "maxWriteBytes",
        positive_int(MAX_WRITE_BYTES_LIMIT),
        schema=COUNT_SCHEMA,
        description="Largest file, in bytes, that one write or edit may produce.",
        folder=LOWER,
    )
    command_timeout_seconds: float = setting(
        30.0,
        "commandTimeoutSeconds",
        seconds,
        schema=SECONDS_SCHEMA,
        description="Seconds an approved command may run before its whole process group is "
        "stopped.",
        flag="--command-timeout",
        metavar="SECONDS",
        help="default {default}",
        folder=LOWER,
    )
    max_steps: int = setting(
        8,
        "maxSteps",
        positive_int(MAX_STEPS_LIMIT),
        schema=COUNT_SCHEMA,
        description="Most model turns in one agent run.",
        flag="--max-steps",
        metavar="N",
        help="default {default}",
        folder=LOWER,
    )
    max_tokens: int = setting(
        1024,
        "maxTokens",
        positive_int(MAX_TOKENS_LIMIT),
        schema=COUNT_SCHEMA,
        description="Most tokens the model may generate in one turn.",
        flag="--max-tokens",
        metavar="N",
        help="default {default}",
        folder=LOWER,
    )
    constrained_decoding: bool = setting(
        True,
        "constrainedDecoding",
        boolean,
        schema={"type": "boolean"},
        description="Limit every model response to exactly one JSON action valid for the "
        "enabled tools (grammar-constrained decoding).",
        flag="--no-constrain",
        help="do not constrain generation to valid actions",
        folder=FOLDER_MAY,
    )
    prompt_lookup: bool = setting(
        True,
        "promptLookup",
        boolean,
        schema={"type": "boolean"},
        description="Speed up a local MLX model where it copies from the conversation (the "
        "`old` text of an edit, a rewritten file): draft the next tokens from earlier text and "
        "check them in one pass. The output is the same token for token.",
        flag="--no-prompt-lookup",
        help="decode a local MLX model without drafting from the conversation",
        folder=FOLDER_MAY,
    )
    confirm_timeout_seconds: float = setting(
        600.0,
        "confirmTimeoutSeconds",
        seconds,
        schema=SECONDS_SCHEMA,
        description="Seconds a proposal waits for your answer; when they pass it is rejected.",
        folder=LOWER,
    )
    protected_patterns: tuple[str, ...] = setting(
        NO_PATTERNS,
        "protectedPatterns",
        patterns,
        schema=NAMES_SCHEMA,
        description="More files to keep from the model, added to the built-in list (`.env*`, "
        "credentials, editor settings): patterns such as `*.yaml` or `deploy/prod.*`, "
        "case-insensitive.",
        flag="--protect",
        metavar="PATTERN",
        help="also keep matching files from the model, e.g. '*.yaml' or 'deploy/prod.*' "
        "(case-insensitive; repeatable)",
        folder=MORE,
    )
    # Adds checks only, so a folder may add more.
    parsed_files: tuple[str, ...] = setting(
        NO_PATTERNS,
        "parsedFiles",
        parsed_files,
        schema=NAMES_SCHEMA,
        description="More files whose changes must parse, as `PATTERN=FORMAT` (FORMAT `json`, "
        "`python`, `toml` or `yaml`; the pattern matched against the file's name, or its path "
        "when it holds `/`), such as `*.babelrc=json`. `.json`, `.py`, `.toml`, `.yaml` and "
        "`.yml` files are always checked (YAML only where PyYAML is installed). A write or an "
        "edit that would leave such a file unparseable, when it parsed before, is refused "
        "before you are asked, and the model is told where.",
        flag="--parse-check",
        metavar="PATTERN=FORMAT",
        help="also refuse a change that leaves matching files unparseable, e.g. "
        "'*.babelrc=json' (repeatable)",
        folder=MORE,
    )
    pass_environment: tuple[str, ...] = setting(
        NO_PATTERNS,
        "passEnvironment",
        variable_names,
        schema=NAMES_SCHEMA,
        description="Environment variables passed to commands besides the core ones (`PATH`, "
        "`HOME`, `USER`, `LOGNAME`, `SHELL`, `PWD`, `LANG`, `LC_*`, `TERM`, `TMPDIR`, `TZ`, …); "
        "every other variable is left out, whatever its name. The model server's key variable "
        "is never passed.",
        flag="--pass-env",
        metavar="NAME",
        help="also pass this environment variable to commands (besides PATH, HOME, LANG, "
        "LC_*, TERM, TMPDIR, TZ, USER and the like; repeatable)",
        folder=SUBSET,
    )
    limit_cpu_seconds: int | None = setting(
        None,
        "limitCpuSeconds",
        positive_int(10**9),
        schema=OPTIONAL_COUNT_SCHEMA,
        description="CPU seconds each command may use (`RLIMIT_CPU`); empty: no limit.",
        flag="--limit-cpu-seconds",
        metavar="N",
        help="RLIMIT_CPU of each command",
        folder=LOWER,
    )
    limit_memory_bytes: int | None = setting(
        None,
        "limitMemoryBytes",
        positive_int(2**62),
        schema=OPTIONAL_COUNT_SCHEMA,
        description="Address space each command may use, in bytes (`RLIMIT_AS`); empty: no limit.",
        flag="--limit-memory-bytes",
        metavar="N",
        help="RLIMIT_AS (address space) of each command",
        folder=LOWER,
    )
    limit_processes: int | None = setting(
        None,
        "limitProcesses",
        positive_int(10**7),
        schema=OPTIONAL_COUNT_SCHEMA,
        description="Processes each command's user may have (`RLIMIT_NPROC`; root is exempt); "
        "empty: no limit.",
        flag="--limit-processes",
        metavar="N",
        help="RLIMIT_NPROC of each command (counts all the user's processes)",
        folder=LOWER,
    )
    endpoint: str | None = setting(
        None,
        "endpoint",
        endpoint,
        schema={"type": ["string", "null"]},
        description="An OpenAI-compatible model server's base URL, e.g. "
        "`http://127.0.0.1:8000/v1` (vLLM, SGLang, llama.cpp's llama-server, Ollama, LM "
        "Studio, mlx_lm.server). When set, `#counterfoil.model#` is the served model's name. "
        "Prompts contain the files the model read, so plain `http://` is accepted only to this "
        "machine; use `https://` or an SSH tunnel for another one. See docs/remote.md.",
        flag="--endpoint",
        metavar="URL",
        help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1",
        group=SERVER,
        folder=PERSONS_ALONE,
    )
    api_key_env: str | None = setting(
        None,
        "apiKeyEnv",
        environment_name,
        schema={"type": ["string", "null"]},
        description="The **name** of the environment variable that holds the model server's "
        "key (default `OPENAI_API_KEY` when it is set). Never put the key itself here: the "
        "daemon reads it from its environment and writes it nowhere.",
        flag="--api-key-env",
        metavar="NAME",
        help="the environment variable holding the key (default OPENAI_API_KEY if set)",
        group=SERVER,
        folder=PERSONS_ALONE,
    )
    use_environment_proxy: bool = setting(
        False,
        "useEnvironmentProxy",
        boolean,
        schema={"type": "boolean"},
        description="Reach a `#counterfoil.endpoint#` on another machine through the proxy the "
        "daemon's environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`). Off "
        "by default; never used for this machine. An `https://` endpoint is only tunnelled, so "
        "the proxy sees neither prompts nor the key.",
        flag="--use-environment-proxy",
        help="reach another machine through HTTPS_PROXY/HTTP_PROXY (never this one)",
        group=SERVER,
        folder=PERSONS_ALONE,
    )
    allow_insecure_http: bool = setting(
        False,
        "allowInsecureHttp",
        boolean,
        schema={"type": "boolean"},
        description="Allow a plain `http://` `#counterfoil.endpoint#` on another machine. "
        "Prompts (which contain the files the model read) then travel unencrypted; prefer "
        "`https://` or an SSH tunnel.",
        flag="--allow-insecure-http",
        help="allow http:// to a machine other than this one",
        group=SERVER,
        folder=PERSONS_ALONE,
    )
    schema_mode: str = setting(
        "json_schema",
        "schemaMode",
        schema_mode,
        schema={"type": "string"},
        description="How the action schema is asked of `#counterfoil.endpoint#`: OpenAI's "
        "`json_schema` (vLLM, SGLang, llama-server, Ollama, LM Studio), `json_object` with a "
        "schema (llama-cpp-python), vLLM's `structured_outputs`, or `none`. See docs/remote.md.",
        flag="--schema-mode",
        choices=SCHEMA_MODES,
        help="how the action schema is requested (default {default})",
        group=SERVER,
        folder=PERSONS_ALONE,
    )
    endpoint_timeout_seconds: float = setting(
        DEFAULT_TIMEOUT_SECONDS,
        "endpointTimeoutSeconds",
        seconds,
        schema={"type": "number", "minimum": 1},
        description="Seconds to wait for `#counterfoil.endpoint#`'s next bytes before the run "
        "ends with a one-line error.",
        flag="--endpoint-timeout",
        metavar="SECONDS",
        help="seconds to wait for the server's next bytes (default {default:g})",
        group=SERVER,
        folder=LOWER,
    )
    search_files: bool = setting(
        True,
        "searchFiles",
        boolean,
        schema={"type": "boolean"},
        description="Let the model search file contents (`search_files`: ripgrep when "
        "installed, else Python) under the same rules as reads.",
        flag="--no-search",
        help="leave search_files out of the tools",
        folder=OFF_ONLY,
    )
    edit_form: str = setting(
        "replace",
        "editForm",
        edit_form,
        schema={"type": "string", "enum": list(EDIT_FORMS)},
        description="How the model edits part of a file: `replace` (`edit_file`: old lines of "
        "the file and the new text for them) or `diff` (`patch_file`: one hunk of a unified "
        "diff against the file as read). Either way the change asked and receipted is the exact "
        "edit, placed only where the file holds its lines once. See docs/eval.md.",
        flag="--edit-form",
        choices=tuple(EDIT_FORMS),
        help="how the model edits part of a file: replace (old and new text) or diff (a hunk) "
        "(default {default})",
        folder=FOLDER_MAY,
    )
    context_tokens: int | None = setting(
        None,
        "contextTokens",
        positive_int(MAX_CONTEXT_TOKENS_LIMIT),
        schema={"type": ["integer", "null"], "minimum": 1},
        description="The model's context window in tokens; for model servers "
        "(`#counterfoil.endpoint#`), which do not state it. Set, it also overrides a local "
        "model's own. Old observations are elided from the model's view as the conversation "
        "nears it; empty: the model's own window, else a limit of 48,000 characters.",
        flag="--context-tokens",
        metavar="N",
        help="the model's context window in tokens; for model servers, which do not state it "
        "(default: the model's own, else a limit of characters)",
        folder=LOWER,
    )
    max_command_output_bytes: int = setting(
        OUTPUT_LIMIT_BYTES,
        "maxCommandOutputBytes",
        positive_int(MAX_COMMAND_OUTPUT_BYTES_LIMIT),
        schema={"type": "integer"},
        description="How much of a command's output its receipt keeps in the content store "
        "beside the log (the model sees the first 16,000 characters).",
        folder=LOWER,
    )
    command_sandbox: str = setting(
        "off",
        "commandSandbox",
        sandbox_mode,
        schema={"type": "string"},
        description="How approved commands run: `off` (as you: they can read anything you can "
        "and use the network), `confine` (an OS sandbox \u2014 bubblewrap on Linux, sandbox-exec "
        "on macOS: writes only under the root and a private temporary folder, no network unless "
        "`#counterfoil.allowNetwork#`), or `review` (confined to a copy of the root; its changes "
        "are applied only when you accept them). A confined command is refused when the "
        "mechanism is missing, never run unconfined.",
        flag="--sandbox",
        choices=SANDBOX_MODES,
        help="how commands run: off (as you), confine (writes only under the root and a private "
        "/tmp, no network), review (confined to a copy; you accept its changes) "
        "(default {default})",
        folder=SANDBOX_ORDER,
    )
    allow_network: bool = setting(
        False,
        "allowNetwork",
        boolean,
        schema={"type": "boolean"},
        description="Let a command run under `#counterfoil.commandSandbox#` `confine` or "
        "`review` use the network.",
        flag="--allow-network",
        help="let a confined or reviewed command use the network",
        folder=OFF_ONLY,
    )
    # A tool result longer than this is shown as previews and an artifact to read ranges of.
    max_inline_chars: int = setting(
        16_000,
        "maxInlineChars",
        inline_chars,
        schema={"type": "integer", "minimum": 512},
        description="A tool result (command output, a long read, a large search) longer than "
        "this many characters is shown to the model as an artifact id, sizes, head and tail "
        "previews and a range request; the model reads more with `read_file` on "
        "`.tool-artifacts/<id>/bytes/<start>-<end>`. The run's events and receipts keep the "
        "whole result.",
        flag="--max-inline-chars",
        metavar="N",
        help="a tool result longer than this is shown as previews and an artifact the model "
        "reads ranges of (default {default})",
        folder=LOWER,
    )
    # Off by default: measured with Qwen2.5-Coder-1.5B, a model shown the files first wrote
    # them back unchanged and finished more often than one that read them itself.
    read_named_files: bool = setting(
        False,
        "readNamedFiles",
        boolean,
        schema={"type": "boolean"},
        description="Before the model's first step, read it the short files the task names "
        "(and, in a project of three files or fewer, all of them): reads through the gate, "
        "shown in the run as read for the model.",
        flag="--read-named-files",
        help="read the model the short files the task names before its first step",
        folder=FOLDER_MAY,
    )
    # On by default (measured with Qwen2.5-Coder-1.5B: 1 of 4 fixtures a round with it off, 2
    # with it on); off, a final answer ends the run as in the course.
    check_final_answer: bool = setting(
        True,
        "checkFinalAnswer",
        boolean,
        schema={"type": "boolean"},
        description="When the model answers final while the run's record shows work left (a "
        "file the task names unchanged or missing, the only file of a kind the task refers to "
        "(its JSON, its docs) not read, a file written back with the same meaning, a "
        "change no allowed command has checked since, an allowed command that did not pass when it "
        "last ran after the last change), tell the model so, with the first thing "
        "left as its next call, and go on. Not checked, and the run says so: after a change was "
        "rejected in this run (the model's answer to your No is its own), in a run that may "
        "change no file, and when nothing was done since the last final answer so held (that "
        "final ends the run). A file an allowed command names (`python3 test_greet.py`) is "
        "taken as the task's check, not a file to change.",
        flag="--no-check-final-answer",
        help="end the run at the model's final answer without checking it against the run's record",
        folder=FOLDER_MAY,
    )
    # The root's AGENTS.md goes into the system prompt.
    agents_file: bool = setting(
        True,
        "agentsFile",
        boolean,
        schema={"type": "boolean"},
        description="Put the project's root `AGENTS.md` (unless protected or over 16 KiB) into "
        "the system prompt; its digest is shown when a run starts.",
        flag="--no-agents-file",
        help="leave the root's AGENTS.md out of the system prompt",
        folder=OFF_ONLY,
    )
    # The person's alone: a folder's settings never add a server (it would run at the folder's
    # word).
    mcp_servers: tuple[McpServer, ...] = setting(
        NO_MCP_SERVERS,
        "mcpServers",
        mcp_servers,
        schema={
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "command": {"type": "array", "items": {"type": "string"}},
                    "url": {"type": "string"},
                    "network": {"type": "boolean"},
                    "passEnvironment": {"type": "array", "items": {"type": "string"}},
                    "readOnlyTools": {"type": "array", "items": {"type": "string"}},
                    "timeoutSeconds": {"type": "number"},
                    "startTimeoutSeconds": {"type": "number"},
                },
                "required": ["name"],
            },
        },
        description="MCP servers whose tools the agent may call, each "
        '`{"name": "files", "command": ["npx", "server"]}` (stdio, started confined: it reads '
        'the project but cannot change it, no network unless `"network": true`, only the '
        'core environment names plus `passEnvironment`) or `{"name": "docs", "url": '
        '"https://…/mcp"}` (streamable HTTP). Each tool\'s definition is asked about before '
        "its first use and again when it changes; each call is shown with its exact arguments "
        "and asked about, except the tools you list in `readOnlyTools`. See docs/mcp.md.",
        flag="--mcp-servers",
        metavar="JSON",
        help="MCP servers as a JSON array, e.g. "
        '\'[{{"name":"files","command":["python","server.py"]}}]\' (see docs/mcp.md)',
        folder=PERSONS_ALONE,
    )
    # The person's approval rules (gate/rules.py); the terminal reads its own file instead.
    approval_rules: RuleSet = setting(  # noqa: RUF009 - a frozen RuleSet is shared safely
        NO_RULES,
        "approvalRules",
        approval_rules,
        schema={
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "decision": {"type": "string", "enum": ["allow", "ask", "deny"]},
                    "argv": {"type": "array", "items": {"type": "string"}},
                    "argvPrefix": {"type": "array", "items": {"type": "string"}},
                    "path": {"type": "string"},
                    "mcpServer": {"type": "string"},
                    "mcpTool": {"type": "string"},
                },
                "required": ["decision"],
            },
        },
        description="Rules that decide routine approvals, in order, the first match deciding "
        "(none: you are asked): each `allow` (approved without asking, the receipt names the "
        "rule), `ask` or `deny` (refused), for a command by exact `argv` or by `argvPrefix` "
        "(whole arguments, never a shell pattern), an edit or write by `path` pattern "
        "(`docs/**`), or an MCP call by `mcpServer` and `mcpTool`. An unconfined command (`commandSandbox` "
        "off), a protected file, an effect you said No to in the run and an unpinned MCP tool "
        "are always asked. A folder's settings may add ask and deny rules only. See "
        "docs/settings.md.",
        folder=NARROW_RULES,
    )

    @staticmethod
    def checked_values(raw: object) -> tuple[dict[str, Any], list[tuple[Field[Any], Invalid]]]:
        """Each present key of `raw` checked alone: the values taken, by field name, and the
        fields refused with why. SettingsError only when `raw` is no mapping at all."""
        if not isinstance(raw, Mapping):
            raise SettingsError("counterfoil settings must be an object")
        values: dict[str, Any] = {}
        invalid: list[tuple[Field[Any], Invalid]] = []
        for item in fields(Settings):
            value = raw.get(item.metadata["key"])
            if value is None:
                continue
            try:
                values[item.name] = item.metadata["check"](value)
            except Invalid as problem:
                invalid.append((item, problem))
        return values, invalid

    @classmethod
    def from_mapping(cls, raw: object, *, names: Mapping[str, str] | None = None) -> Settings:
        """Settings from a mapping of setting keys (None: the defaults), or SettingsError naming
        every bad key.

        `names` renames keys in the error (the CLI names its flags, `--max-steps`).
        """
        if raw is None:
            return cls()
        values, invalid = cls.checked_values(raw)
        problems: list[str] = []
        for item, problem in invalid:
            key = item.metadata["key"]
            name = (names or {}).get(key, key)
            gap = "" if problem.detail.startswith("[") else " "
            problems.append(f"{name}{gap}{problem.detail}")
        if problems:
            message = "invalid Counterfoil settings: " + "; ".join(problems)
            raise SettingsError(message, tuple(problems))
        return cls(**values)

    @classmethod
    def default(cls, key: str) -> Any:
        """The default of the setting spelled `key` (e.g. `maxSteps`), for help texts."""
        for item in fields(cls):
            if item.metadata["key"] == key and item.default is not MISSING:
                return item.default
        raise KeyError(key)

    def policy(self, root: Path, granted_by: GrantedBy | None = None) -> ToolPolicy:
        """The policy for `root`; raises ValueError when the root cannot be used. `granted_by`:
        where the writes and commands allowed came from (default: these settings)."""
        from ..gate.grants import FROM_SETTINGS
        from ..gate.policy import ToolPolicy

        return ToolPolicy(
            root=root,
            allow_writes=self.allow_writes,
            allowed_commands=self.allowed_commands,
            max_write_bytes=self.max_write_bytes,
            command_timeout_seconds=self.command_timeout_seconds,
            protected_patterns=self.protected_patterns,
            parsed_files=self.parsed_files,
            pass_environment=self.pass_environment,
            withheld_environment=self.api_key_variables(),
            limit_cpu_seconds=self.limit_cpu_seconds,
            limit_memory_bytes=self.limit_memory_bytes,
            limit_processes=self.limit_processes,
            allow_search=self.search_files,
            edit_form=self.edit_form,
            max_command_output_bytes=self.max_command_output_bytes,
            create_parent_folders=True,
            command_sandbox=self.command_sandbox,
            allow_network=self.allow_network,
            granted_by=granted_by or FROM_SETTINGS,
        )

    def api_key_variables(self) -> tuple[str, ...]:
        """The variable a model server's key is read from, which no command may see."""
        if self.api_key_env is not None:
            return (self.api_key_env,)
        return (DEFAULT_API_KEY_ENV,) if self.endpoint is not None else ()

    def limits(self, model: object = None) -> AgentLimits:
        """The run's limits. Its context window is `contextTokens` when set (less room for one
        response), else the one `model` states; with neither, the course's character limit."""
        from ..context.budget import context_tokens, prompt_budget
        from ..loop import AgentLimits

        if self.context_tokens is not None:
            window: int | None = prompt_budget(self.context_tokens, self.max_tokens)
        else:
            window = context_tokens(model)
        return AgentLimits(
            max_steps=self.max_steps,
            max_context_tokens=window,
            max_inline_chars=self.max_inline_chars,
            read_named_files=self.read_named_files,
            check_final_answer=self.check_final_answer,
        )

    def receipt_log_path(self, root: Path) -> Path:
        """The log path: a relative one is relative to `root`, an absolute one is kept."""
        path = Path(self.receipt_log)
        return path if path.is_absolute() else root / path
