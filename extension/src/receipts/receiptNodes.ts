// The receipts tree's shape, computed from receipts without VS Code: receiptsTree.ts turns these
// nodes into TreeItems. Kept pure so the unit tests can check labels, icons and children.

import type {
  ApprovalState,
  Decision,
  Receipt,
  RunRecord,
  RunStarted,
  StoredRunRecord,
  Verdict,
} from "../daemon/protocol";
import { argvText } from "../argvText";

/** What Revert says when its click reached no receipt (the tree was being redrawn under it). */
export const NO_RECEIPT_TO_REVERT =
  "Nothing was reverted: the Receipts view was being redrawn when Revert was clicked. Click Revert on the receipt again.";

export interface NodeIcon {
  /** Codicon id, e.g. "edit". */
  id: string;
  /** Theme colour id, e.g. "testing.iconFailed". */
  color?: string;
}

export interface ReceiptNode {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: NodeIcon;
  /** Workspace-relative file to open when the node is clicked. */
  openPath?: string;
  /** A command to run when the node is clicked (takes precedence over openPath). */
  command?: { id: string; title: string; arguments: unknown[] };
  /** The receipt's call id, for Revert. */
  toolCallId?: string;
  /** Shown open at first (the latest run). */
  expanded?: boolean;
  children: ReceiptNode[];
  contextValue:
    | "receipt"
    | "receipt.edit"
    | "receipt.command"
    | "receiptDetail"
    | "artifact"
    | "logProblem"
    | "run";
}

function argumentString(receipt: Receipt, key: string): string | undefined {
  const value = receipt.arguments[key];
  return typeof value === "string" ? value : undefined;
}

function argvOf(receipt: Receipt): string[] | undefined {
  const argv = receipt.arguments.argv;
  return Array.isArray(argv) && argv.every((part) => typeof part === "string")
    ? argv
    : undefined;
}

/** An MCP call's evidence, as its receipt records it (`mcp`; see docs/mcp.md). */
export interface McpFacts {
  server: { name: string; command?: string[]; url?: string };
  tool: string;
  definitionSha256: string;
  resultSha256?: string;
  resultKept: boolean;
  readOnly: boolean;
}

/** The receipt's MCP evidence, or undefined for any other effect (or an unreadable one). */
export function mcpFacts(receipt: Receipt): McpFacts | undefined {
  const mcp = receipt.mcp;
  const server = mcp?.server;
  if (
    !mcp ||
    !server ||
    typeof server.name !== "string" ||
    typeof mcp.tool !== "string"
  ) {
    return undefined;
  }
  const command = server.command;
  return {
    server: {
      name: server.name,
      command:
        Array.isArray(command) &&
        command.every((part) => typeof part === "string")
          ? command
          : undefined,
      url: typeof server.url === "string" ? server.url : undefined,
    },
    tool: mcp.tool,
    definitionSha256: mcp.definition_sha256 ?? "",
    resultSha256: mcp.result_sha256 ?? undefined,
    resultKept: mcp.result_kept === true,
    readOnly: mcp.read_only === true,
  };
}

/** What a receipt acted on: the path for file tools, the argv for commands, the server and
 * tool for an MCP call. */
export function receiptSubject(receipt: Receipt): string {
  const mcp = mcpFacts(receipt);
  if (mcp !== undefined) {
    return `${mcp.server.name}/${mcp.tool}`;
  }
  const path = argumentString(receipt, "path");
  if (path !== undefined) {
    return path;
  }
  const argv = argvOf(receipt);
  if (argv !== undefined) {
    return argvText(argv);
  }
  return receipt.changed_artifacts[0] ?? "";
}

export function receiptLabel(receipt: Receipt): string {
  const subject = receiptSubject(receipt);
  return `${receipt.tool_call_id} · ${receipt.tool}${subject ? ` ${subject}` : ""}`;
}

/** The icon says what kind of effect it was from the receipt's own fields, not from a tool list. */
function effectIcon(receipt: Receipt): string {
  if (mcpFacts(receipt) !== undefined) {
    return "plug";
  }
  if (argvOf(receipt) !== undefined) {
    return "terminal";
  }
  return receipt.changed_artifacts.length > 0 ? "edit" : "symbol-event";
}

export function receiptIcon(receipt: Receipt): NodeIcon {
  const decision = reviewDecision(receipt);
  if (
    receipt.exit_state === "ok" &&
    (decision === "rejected" || decision === "not applied")
  ) {
    // It ran, and nothing of it landed: neither a pass nor a failure.
    return { id: "circle-slash", color: "testing.iconSkipped" };
  }
  const failed = receipt.exit_state !== "ok";
  return {
    id: failed ? "error" : effectIcon(receipt),
    color: failed ? "testing.iconFailed" : "testing.iconPassed",
  };
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function detail(
  parentId: string,
  key: string,
  label: string,
  value: string,
  full: string,
): ReceiptNode {
  return {
    id: `${parentId}/${key}`,
    label,
    description: value,
    tooltip: full,
    children: [],
    contextValue: "receiptDetail",
  };
}

/**
 * Who decided the effect, as its receipt records it: the person's approval rule (its place and
 * its text, as the receipt names it), or the person asked in the editor or the terminal;
 * undefined when the receipt does not say.
 */
export function decidedBy(receipt: Receipt): string | undefined {
  const approval = receipt.approval;
  if (!approval) {
    return undefined;
  }
  if (approval.rule) {
    return `your rule ${approval.rule_index ?? "?"}: ${approval.rule}`;
  }
  if (approval.asked === false) {
    return `nobody asked${approval.via ? ` (${approval.via})` : ""}`;
  }
  if (!approval.by && !approval.via) {
    return undefined;
  }
  return `${approval.by ?? "someone"}, asked${approval.via ? ` in the ${approval.via}` : ""}`;
}

function decidedByNode(id: string, receipt: Receipt): ReceiptNode[] {
  const who = decidedBy(receipt);
  if (who === undefined) {
    return [];
  }
  const digest = receipt.approval?.rules_sha256;
  const full = digest ? `${who}\nrule set sha256 ${digest}` : who;
  return [detail(id, "decided_by", "approved by", who, full)];
}

/** The file a receipt changed, for clicking; undefined when it changed none. */
export function receiptFile(receipt: Receipt): string | undefined {
  return receipt.changed_artifacts[0];
}

/** What clicking a receipt does: an edit opens its applied diff from the content store (when the
 * log has the digests), a command its full output; older receipts open the file. */
function receiptCommand(receipt: Receipt): ReceiptNode["command"] {
  const path = receiptFile(receipt);
  if (path && typeof receipt.result_sha256 === "string") {
    return {
      id: "counterfoil.showAppliedDiff",
      title: "Show Applied Diff",
      arguments: [
        receipt.base_sha256 ?? null,
        receipt.result_sha256,
        `${receipt.tool_call_id} ${path}`,
      ],
    };
  }
  const mcp = mcpFacts(receipt);
  if (mcp?.resultKept && mcp.resultSha256) {
    return {
      id: "counterfoil.showObject",
      title: "Show Result",
      arguments: [mcp.resultSha256, `${receipt.tool_call_id} result`],
    };
  }
  if (typeof receipt.output_sha256 === "string") {
    return {
      id: "counterfoil.showObject",
      title: "Show Output",
      arguments: [receipt.output_sha256, `${receipt.tool_call_id} output`],
    };
  }
  return undefined;
}

/** Revert is offered where the daemon says it can undo the receipt's effect. */
function receiptKind(receipt: Receipt): ReceiptNode["contextValue"] {
  if (!receipt.revertable) {
    return "receipt";
  }
  return argvOf(receipt) !== undefined ? "receipt.command" : "receipt.edit";
}

/** A reviewed command's decision on its changes, as its receipt records it (else undefined). */
export function reviewDecision(receipt: Receipt): string | undefined {
  return receipt.review?.decision ?? undefined;
}

/** How the effect ended, and for a reviewed command what its review let land: "ok · its changes rejected, nothing landed". */
export function receiptState(receipt: Receipt): string {
  const decision = reviewDecision(receipt);
  const approval = receipt.approval;
  if (approval?.rule) {
    return `${receipt.exit_state} · approved by your rule ${approval.rule_index ?? "?"}, not asked`;
  }
  if (approval?.asked === false) {
    return `${receipt.exit_state} · not asked: you marked it read-only`;
  }
  if (decision === undefined) {
    return receipt.exit_state;
  }
  const nothing = decision === "rejected" || decision === "not applied";
  return `${receipt.exit_state} · its changes ${decision}${nothing ? ", nothing landed" : ""}`;
}

/** What this window knows of a run that is going now (`counterfoil/runStarted`), so its
 * receipts are grouped under its goal before the daemon's list of runs names it. */
export function liveRunRecord(started: RunStarted, at: string): RunRecord {
  return {
    ...started,
    startedAt: at,
    endedAt: null,
    reason: null,
    verdict: null,
  };
}

/** The daemon's runs, then each live run it does not list yet. */
export function withLiveRuns(
  runs: readonly RunRecord[],
  live: readonly RunRecord[],
): RunRecord[] {
  const known = new Set(runs.map((run) => run.runId));
  return [...runs, ...live.filter((run) => !known.has(run.runId))];
}

export function receiptNode(receipt: Receipt): ReceiptNode {
  const id = `receipt/${receipt.receipt_id}`;
  const argumentsJson = JSON.stringify(receipt.arguments);
  const artifacts: ReceiptNode = {
    id: `${id}/artifacts`,
    label: "artifacts",
    description:
      receipt.changed_artifacts.length === 0
        ? "none"
        : `${receipt.changed_artifacts.length}`,
    children: receipt.changed_artifacts.map((path) => ({
      id: `${id}/artifacts/${path}`,
      label: path,
      icon: { id: "file" },
      openPath: path,
      children: [],
      contextValue: "artifact",
    })),
    contextValue: "receiptDetail",
  };
  return {
    id,
    label: receiptLabel(receipt),
    description: receiptState(receipt),
    tooltip: [
      `${receiptLabel(receipt)} (${receiptState(receipt)})`,
      receipt.proposedBy ? `proposed by ${receipt.proposedBy}` : "",
      receipt.result,
    ]
      .filter(Boolean)
      .join("\n"),
    icon: receiptIcon(receipt),
    openPath: receiptFile(receipt),
    command: receiptCommand(receipt),
    toolCallId: receipt.tool_call_id,
    contextValue: receiptKind(receipt),
    children: [
      ...decidedByNode(id, receipt),
      ...mcpDetails(id, receipt),
      detail(
        id,
        "arguments",
        "arguments",
        argumentsJson,
        JSON.stringify(receipt.arguments, null, 2),
      ),
      detail(id, "result", "result", firstLine(receipt.result), receipt.result),
      artifacts,
      detail(
        id,
        "receipt_id",
        "receipt id",
        receipt.receipt_id,
        receipt.receipt_id,
      ),
    ],
  };
}

/** An MCP call's server (how it was reached) and the digest of the definition approved. */
function mcpDetails(id: string, receipt: Receipt): ReceiptNode[] {
  const mcp = mcpFacts(receipt);
  if (mcp === undefined) {
    return [];
  }
  const reached = mcp.server.url ?? argvText(mcp.server.command ?? []);
  return [
    detail(
      id,
      "mcp_server",
      "MCP server",
      `${mcp.server.name} · ${reached}`,
      reached,
    ),
    detail(
      id,
      "definition",
      "definition",
      `sha256 ${mcp.definitionSha256.slice(0, 12)}`,
      mcp.definitionSha256,
    ),
  ];
}

/** A warning in the tree when the log is broken, could not be read, or files drifted; the
 * label names the finding ("Receipt chain broken", "Files changed after their receipts"). */
export function logProblemNode(
  message: string,
  label = "Receipt log problem",
): ReceiptNode {
  return {
    id: "log-problem",
    label,
    description: message,
    tooltip: message,
    icon: { id: "warning", color: "list.warningForeground" },
    children: [],
    contextValue: "logProblem",
  };
}

const VALIDATION: Record<string, string> = {
  passed: "validated",
  failed: "validation failed",
  not_run: "not validated",
  stale: "validation stale",
};

/** A run's verdict in a few words for the tree: "validated · 1 rejected". */
export function verdictShort(verdict: Verdict | null | undefined): string {
  if (!verdict) {
    return "";
  }
  const parts = [VALIDATION[verdict.validation] ?? verdict.validation];
  if (verdict.rejected.length > 0) {
    parts.push(`${verdict.rejected.length} rejected`);
  }
  if (verdict.refused.length > 0) {
    parts.push(`${verdict.refused.length} refused`);
  }
  if (verdict.failed.length > 0) {
    parts.push(`${verdict.failed.length} failed`);
  }
  return parts.join(" · ");
}

/**
 * "14:03:27" from an ISO time, in UTC as the receipts record it (runs a minute apart differ), with
 * its date before it when that is not `now`'s: "2026-11-30 14:03:27".
 */
export function clock(time: string | null | undefined, now: Date): string {
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(time ?? "");
  if (!match) {
    return "";
  }
  const today = now.toISOString().slice(0, 10);
  return match[1] === today ? match[2] : `${match[1]} ${match[2]}`;
}

function shorten(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/** A run's own record in a few words: "ended · 1 approved · 3 rejected", "interrupted". */
export function recordShort(record: StoredRunRecord): string {
  const parts = [record.state ?? "interrupted"];
  for (const [state, count] of Object.entries(record.effects ?? {})) {
    if (count > 0) {
      parts.push(`${count} ${state}`);
    }
  }
  return parts.join(" · ");
}

/** A decision that left no receipt (a No, a refusal, an interruption): why the call id has none. */
export function decisionNode(runId: string, decision: Decision): ReceiptNode {
  const target =
    decision.path ??
    (decision.argv ? argvText(decision.argv) : undefined) ??
    "";
  const why = decision.reason ? `: ${decision.reason}` : "";
  return {
    id: `decision/${runId}/${decision.toolCallId}/${decision.state}`,
    label: `${decision.toolCallId} ${decision.state}${why}`,
    description: [decision.tool, target].filter(Boolean).join(" "),
    tooltip: [
      `${decision.toolCallId} ${decision.tool ?? ""} ${target}`.trim(),
      `${decision.state}${why}`,
      decision.time ? `at ${decision.time}` : "",
      "No receipt: nothing was done for this call.",
    ]
      .filter(Boolean)
      .join("\n"),
    icon: { id: "circle-slash", color: "disabledForeground" },
    contextValue: "receiptDetail",
    children: [],
  };
}

/** A question's states the record holds while it is open: the daemon's live word replaces them. */
const OPEN_STATES = new Set(["pending", "withdrawn", "interrupted"]);

/**
 * The decisions of a run whose call ids have no receipt, each once (the latest word): the
 * record's, then where a question still open there stands now, as the daemon told it
 * (`counterfoil/approvalState`), so the tree says what the run panel says. A person's answer
 * is the record's to say (with their reason), once it holds it.
 */
function unreceipted(
  record: StoredRunRecord | undefined,
  members: readonly Receipt[],
  live: readonly ApprovalState[] = [],
): Decision[] {
  const receipted = new Set(members.map((receipt) => receipt.tool_call_id));
  const latest = new Map<string, Decision>();
  for (const decision of record?.decisions ?? []) {
    if (!receipted.has(decision.toolCallId) && decision.state !== "approved") {
      latest.set(decision.toolCallId, decision);
    }
  }
  for (const told of live) {
    const known = latest.get(told.toolCallId);
    if (
      receipted.has(told.toolCallId) ||
      (told.state === "answered" && told.why === "approved") ||
      (known !== undefined && !OPEN_STATES.has(known.state))
    ) {
      continue;
    }
    latest.set(told.toolCallId, {
      toolCallId: told.toolCallId,
      tool: known?.tool ?? null,
      path: known?.path ?? null,
      argv: known?.argv ?? null,
      time: known?.time ?? null,
      state: told.state,
      reason: told.why,
    });
  }
  return [...latest.values()];
}

/**
 * One node per run, in the order the runs started: its goal, time, model and
 * verdict from this daemon's runs or the run's own record on disk, its receipts as children
 * and the decisions that left none, so every call id is explained.
 */
export function runNodes(
  receipts: readonly Receipt[],
  runs: readonly RunRecord[] = [],
  now: Date = new Date(),
  records: readonly StoredRunRecord[] = [],
  exported: ReadonlySet<string> = new Set(),
  live: readonly ApprovalState[] = [],
): ReceiptNode[] {
  const groups = new Map<string, Receipt[]>();
  for (const receipt of receipts) {
    const key = receipt.run_id ?? "";
    groups.set(key, [...(groups.get(key) ?? []), receipt]);
  }
  for (const record of records) {
    if (!groups.has(record.runId) && record.decisions.length > 0) {
      groups.set(record.runId, []);
    }
  }
  for (const told of live) {
    if (told.runId && !groups.has(told.runId)) {
      groups.set(told.runId, []);
    }
  }
  const startOf = ([runId, members]: [string, Receipt[]]) =>
    Date.parse(
      runs.find((known) => known.runId === runId)?.startedAt ??
        records.find((known) => known.runId === runId)?.startedAt ??
        members[0]?.time ??
        "",
    );
  // In time order (a run whose start is not known keeps its place after the known ones).
  const entries = [...groups.entries()]
    .map((entry, index) => ({ entry, index, time: startOf(entry) }))
    .sort(
      (a, b) =>
        (Number.isNaN(a.time) ? Infinity : a.time) -
          (Number.isNaN(b.time) ? Infinity : b.time) || a.index - b.index,
    )
    .map(({ entry }) => entry);
  const started = entries.map(startOf);
  // The run that started last is open: a run that left no receipt is listed after the log's
  // runs, but it is not the newest for that.
  let newest = entries.length - 1;
  let newestTime = -Infinity;
  started.forEach((time, index) => {
    if (!Number.isNaN(time) && time >= newestTime) {
      newest = index;
      newestTime = time;
    }
  });
  const labels = entries.map(([runId]) => {
    const goal =
      runs.find((known) => known.runId === runId)?.goal ??
      records.find((known) => known.runId === runId)?.goal;
    return goal ? shorten(goal, 48) : null;
  });
  return entries.map(([runId, members], index) => {
    // Runs whose goals read the same in the tree are told apart by their ids.
    const twin =
      labels[index] !== null &&
      labels.filter((label) => label === labels[index]).length > 1;
    const run = runs.find((known) => known.runId === runId);
    const record = records.find((known) => known.runId === runId);
    const time = clock(
      run?.startedAt ?? record?.startedAt ?? members[0]?.time,
      now,
    );
    const reverted = members.every((receipt) => receipt.reverts)
      ? members.map((receipt) => receipt.reverts).join(", ")
      : undefined;
    const commandsOnly = members.every(
      (receipt) => argvOf(receipt) !== undefined,
    );
    const known = run?.goal ?? record?.goal;
    const goal = known
      ? shorten(known, 48)
      : reverted
        ? `revert of ${reverted}`
        : runId && commandsOnly
          ? "commands (no goal known here)"
          : runId
            ? "run (goal not known here)"
            : "receipts without a run";
    const verdict =
      verdictShort(run?.verdict) || (record ? recordShort(record) : "");
    const count = `${members.length} effect${members.length === 1 ? "" : "s"}`;
    const who =
      record?.by || record?.via
        ? `run by ${record.by ?? "someone"}${record.via ? ` in the ${record.via}` : ""}`
        : "";
    const evidence = exported.has(runId) ? "exported" : "";
    const models = [
      ...new Set(members.flatMap((receipt) => receipt.proposedBy ?? [])),
    ];
    const children = [
      ...members.map(receiptNode),
      ...unreceipted(
        record,
        members,
        live.filter((told) => told.runId === runId),
      ).map((decision) => decisionNode(runId, decision)),
    ];
    return {
      // VS Code applies an item's collapsible state only when it first sees the item's id. A
      // run is listed as it starts, before any receipt or question, as a leaf; on a busy
      // machine the tree drew it then, and the newest run stayed closed once it had children.
      // A run with children has an id of its own, so it is drawn anew, open when newest.
      id: `run/${runId || "none"}${children.length === 0 ? "/empty" : ""}`,
      label: goal,
      description: [
        time,
        twin ? `run ${runId.slice(0, 8)}` : "",
        verdict || count,
        evidence,
      ]
        .filter(Boolean)
        .join(" · "),
      tooltip: [
        known ?? goal,
        who,
        (run?.startedAt ?? record?.startedAt)
          ? `started ${run?.startedAt ?? record?.startedAt}`
          : "",
        record?.problem ? `its record does not verify: ${record.problem}` : "",
        runId ? `run ${runId}` : "",
        ...models.map((model) => `model: ${model}`),
        verdict,
        count,
        evidence
          ? "its evidence is in a git note (refs/notes/counterfoil)"
          : "",
      ]
        .filter(Boolean)
        .join("\n"),
      icon: { id: "history" },
      contextValue: "run",
      expanded: index === newest,
      children,
    };
  });
}

/**
 * Root nodes: the runs with their receipts, then the problem (if any): a bad line shows the
 * receipts before it and then what is wrong with it.
 */
export function receiptRoots(
  receipts: readonly Receipt[],
  problem: string | { label: string; message: string } | null,
  runs: readonly RunRecord[] = [],
  records: readonly StoredRunRecord[] = [],
  exported: ReadonlySet<string> = new Set(),
  live: readonly ApprovalState[] = [],
): ReceiptNode[] {
  const nodes = runNodes(receipts, runs, new Date(), records, exported, live);
  if (!problem) {
    return nodes;
  }
  return typeof problem === "string"
    ? [...nodes, logProblemNode(problem)]
    : [...nodes, logProblemNode(problem.message, problem.label)];
}
