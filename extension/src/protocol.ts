// The daemon's wire format (see DESIGN.md, "The daemon protocol"). Plain types only, so the pure
// modules and their unit tests can use them without VS Code.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface TextEdit {
  range: Range;
  newText: string;
}

export interface TextDocumentEdit {
  textDocument: { uri: string; version?: number | null };
  edits: TextEdit[];
}

export interface CreateFile {
  kind: "create";
  uri: string;
  options?: { overwrite?: boolean; ignoreIfExists?: boolean };
}

export interface WorkspaceEdit {
  documentChanges?: Array<TextDocumentEdit | CreateFile | { kind: string }>;
  changes?: Record<string, TextEdit[]>;
}

export interface EditPreview {
  kind: "edit";
  path: string;
  /** The target file's URI (newer daemons). */
  uri?: string;
  /** SHA-256 of the bytes the model read; null for a new file, which must not exist. */
  baseSha256: string | null;
  /** SHA-256 of the UTF-8 bytes of proposedText: exactly what will be written; null when the file is removed. */
  proposedSha256: string | null;
  /** The whole proposed file (newer daemons); null when the file is removed. */
  proposedText?: string | null;
  /** A revert that removes the file (it was created by the effect reverted). */
  removesFile?: boolean;
  /** A whole-file replacement (older daemons, in place of proposedText). */
  edit?: WorkspaceEdit;
  /** The bytes the model read, as text, when the daemon sends them (else read from disk or the content store). */
  baseText?: string | null;
  /** For a revert: the call whose effect this undoes. */
  reverts?: string | null;
}

export interface CommandPreview {
  kind: "command";
  argv: string[];
  cwd: string;
  timeoutSeconds: number;
}

export interface ConfirmParams {
  toolCallId: string;
  tool: string;
  arguments: Record<string, unknown>;
  preview: EditPreview | CommandPreview | null;
}

/**
 * The answer to `counterfoil/confirm`. `text`: the final file the person approved when it differs
 * from `proposedText` (hunks dropped or edited); `reason`: why the person said No, for the model.
 */
export interface ConfirmResult {
  approved: boolean;
  text?: string;
  reason?: string;
}

export interface Receipt {
  receipt_id: string;
  tool_call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  exit_state: "ok" | "error";
  result: string;
  changed_artifacts: string[];
  /** Evidence fields (newer logs). */
  run_id?: string | null;
  time?: string | null;
  approval?: {
    decision?: string;
    by?: string;
    via?: string;
    shown_sha256?: string | null;
    modified?: boolean;
  } | null;
  base_sha256?: string | null;
  result_sha256?: string | null;
  argv?: string[] | null;
  exit_status?: number | null;
  output_sha256?: string | null;
  output_truncated?: boolean | null;
  reverts?: string | null;
}

export type AgentAction =
  { tool: string; arguments: Record<string, unknown> } | { final: string };

/**
 * What became of an effect call, in the verdict's words: done after a Yes, a No, refused by the
 * gate before asking, approved but not done. The core's `EffectState`, the one vocabulary.
 */
export type EffectState = "approved" | "rejected" | "refused" | "failed";

/** The workspace's record of one step's call (the core's `StepResult`), keyed by call id. */
export interface StepRecord {
  /** The call's id; null for a read, a final answer or a response that did not parse. */
  toolCallId: string | null;
  /** null for a read that ran, a final answer or a response that did not parse. */
  state: EffectState | null;
  receiptId: string | null;
  /** A command's full output in the content store. */
  outputSha256: string | null;
  /** The bytes a file effect wrote, in the content store. */
  resultSha256: string | null;
  /** Why the effect was not done: the person's reject reason as the model read it, the gate's error. */
  reason: string | null;
  /** What the effect wrote or ran, as in the verdict. */
  effect: VerdictEffect | null;
}

export interface AgentEvent extends StepRecord {
  step: number;
  response: string;
  action: AgentAction | null;
  result: string | null;
  /** The run this step belongs to. */
  runId: string;
  /** A model server's remark on this step's response (cached tokens, schema not enforced). */
  modelNote?: string | null;
}

/** `counterfoil/runStarted`: a run or a follow-up turn began. */
export interface RunStarted {
  runId: string;
  conversationId?: string | null;
  /** The run's goal or the follow-up's text. */
  goal: string;
  followUp?: boolean;
}

/** `counterfoil/runState`: stopping at once on a cancel; cancelled or ended just before the result. */
export interface RunStateNotice {
  runId?: string | null;
  state: "running" | "stopping" | "cancelled" | "ended";
  reason?: string | null;
}

/** `counterfoil/modelText`: the new text of the current step since the previous notification. */
export interface ModelText {
  runId?: string | null;
  step: number;
  text: string;
  /** Text inside a `<think>` block. */
  thinking?: boolean;
}

export type ValidationVerdict = "passed" | "failed" | "not_run" | "stale";

export interface VerdictEffect {
  toolCallId: string;
  tool: string;
  state: EffectState;
  path: string | null;
  argv: string[] | null;
  /** The digest of the bytes a file effect wrote. */
  sha256: string | null;
  /** A command's exit status; null when it did not run or timed out. */
  exitStatus: number | null;
  timedOut: boolean;
  reason: string | null;
}

/** What the effects of a run did, computed by the daemon (never from the model's final answer). */
export interface Verdict {
  succeeded: boolean;
  approved: string[];
  rejected: string[];
  refused: string[];
  failed: string[];
  filesChanged: Array<{ path: string; sha256?: string; toolCallId?: string }>;
  validation: ValidationVerdict;
  validatedBy?: string | null;
  effects?: VerdictEffect[];
}

/** One row of the daemon's tool table (`counterfoil/status`'s `tools`). */
export interface ToolInfo {
  name: string;
  effect: boolean;
  enabled: boolean;
  arguments: Array<{ name: string; type: string; required: boolean }>;
}

export interface RunResult {
  completed: boolean;
  reason: string;
  final: string | null;
  modifiedFiles: string[];
  error?: string | null;
  verdict: Verdict;
  /** The run's id; its steps came as `counterfoil/event` notifications with it. */
  runId: string;
  conversationId?: string | null;
  followUp?: boolean;
  /** The model's own counts for the run (responses, prompt tokens, cache reuse, generated). */
  modelUsage?: string | null;
}

/** A run this daemon ran (`counterfoil/status`'s `runs`). */
export interface RunRecord extends RunStarted {
  startedAt?: string | null;
  endedAt?: string | null;
  reason?: string | null;
  verdict?: Verdict | null;
}

/** `counterfoil/object`: bytes from the content store by digest. */
export interface ObjectResult {
  sha256: string;
  found: boolean;
  /** The bytes decoded as UTF-8, at most 1 MiB. */
  text: string | null;
  bytes?: number;
  truncated?: boolean;
}

export interface ValidationResult extends StepRecord {
  observation: string;
  receipt: Receipt | null;
}

/** `counterfoil/revert`: as for a validation. */
export type RevertResult = ValidationResult;

export interface ReceiptsResult {
  receipts: Receipt[];
  logPath: string | null;
  error: string | null;
  /** The runs this daemon ran (goal, times, verdict), for grouping (newer daemons). */
  runs?: RunRecord[];
}

export interface VerifyResult {
  ok: boolean;
  count: number;
  error: string | null;
  /** 1-based number of the first bad line. */
  line?: number | null;
  /** The chain alone (newer daemons); `ok` also needs no drift. */
  chainOk?: boolean;
  chainError?: string | null;
  /** One sentence per file whose bytes differ from its last receipt's, e.g. "app.py changed after call-1". */
  drift?: string[] | null;
}

export type ModelStateName =
  "unloaded" | "loading" | "ready" | "generating" | "error";

export interface ModelState {
  state: ModelStateName;
  model?: string | null;
  /** The model server's base URL; null when the model runs in the daemon. */
  endpoint?: string | null;
  message?: string | null;
  tokens?: number | null;
  tokensPerSecond?: number | null;
}

export interface StatusResult {
  root: string;
  model: string;
  modelState: ModelState | ModelStateName | null;
  allowWrites: boolean;
  allowedCommands: string[][];
  availableTools: string[];
  tools?: ToolInfo[];
  receiptLog: string | null;
  running: boolean;
  /** Newer daemons: whether the model's files are on disk (`null`: not a valid name). */
  modelOnDisk?: boolean | null;
  /** Newer daemons: bytes still to fetch, once known. */
  modelDownloadBytes?: number | null;
}

/** `counterfoil/modelRuntime`: what the model needs installed in the daemon's Python. */
export interface ModelRuntimeResult {
  model: string;
  extra: string | null;
  missing: string[];
  python: string;
  command: string[] | null;
  /** Why no install can make the model run here (MLX has no build for this platform). */
  unavailable?: string | null;
}

/** `counterfoil/downloadModel`'s answer. */
export interface DownloadModelResult {
  ok: boolean;
  path: string;
}

export type DownloadState = "downloading" | "done" | "cancelled" | "failed";

/** `counterfoil/download`: how far a model download is. */
export interface DownloadProgress {
  model: string;
  bytes: number;
  total: number;
  rate: number | null;
  etaSeconds: number | null;
  state: DownloadState;
}

export const Methods = {
  run: "counterfoil/run",
  runValidation: "counterfoil/runValidation",
  receipts: "counterfoil/receipts",
  verifyReceipts: "counterfoil/verifyReceipts",
  status: "counterfoil/status",
  confirm: "counterfoil/confirm",
  event: "counterfoil/event",
  receipt: "counterfoil/receipt",
  modelState: "counterfoil/modelState",
  runStarted: "counterfoil/runStarted",
  runState: "counterfoil/runState",
  followUp: "counterfoil/followUp",
  modelText: "counterfoil/modelText",
  object: "counterfoil/object",
  revert: "counterfoil/revert",
  modelRuntime: "counterfoil/modelRuntime",
  downloadModel: "counterfoil/downloadModel",
  download: "counterfoil/download",
} as const;
