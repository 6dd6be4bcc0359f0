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
  /** SHA-256 of the UTF-8 bytes of proposedText: exactly what will be written. */
  proposedSha256: string;
  /** The whole proposed file (newer daemons). */
  proposedText?: string;
  /** A whole-file replacement (older daemons, in place of proposedText). */
  edit?: WorkspaceEdit;
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

export interface ConfirmResult {
  approved: boolean;
}

export interface Receipt {
  receipt_id: string;
  tool_call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  exit_state: "ok" | "error";
  result: string;
  changed_artifacts: string[];
}

export type AgentAction =
  { tool: string; arguments: Record<string, unknown> } | { final: string };

/** What became of a step's tool action; null for a final answer or a response that did not parse. */
export type StepOutcome = "ok" | "denied" | "refused" | "failed";

export interface AgentEvent {
  step: number;
  response: string;
  action: AgentAction | null;
  result: string | null;
  outcome?: StepOutcome | null;
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
  events: AgentEvent[];
  error?: string | null;
}

export interface ValidationResult {
  observation: string;
  receipt: Receipt | null;
  outcome?: StepOutcome | null;
}

export interface ReceiptsResult {
  receipts: Receipt[];
  logPath: string | null;
  error: string | null;
}

export interface VerifyResult {
  ok: boolean;
  count: number;
  error: string | null;
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
} as const;
