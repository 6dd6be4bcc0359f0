// The receipts tree's shape, computed from receipts without VS Code: receiptsTree.ts turns these
// nodes into TreeItems. Kept pure so the unit tests can check labels, icons and children.

import type { Receipt } from "./protocol";

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
  children: ReceiptNode[];
  contextValue: "receipt" | "receiptDetail" | "artifact" | "logProblem";
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

/** What a receipt acted on: the path for file tools, the argv for commands. */
export function receiptSubject(receipt: Receipt): string {
  const path = argumentString(receipt, "path");
  if (path !== undefined) {
    return path;
  }
  const argv = argvOf(receipt);
  if (argv !== undefined) {
    return argv.join(" ");
  }
  return receipt.changed_artifacts[0] ?? "";
}

export function receiptLabel(receipt: Receipt): string {
  const subject = receiptSubject(receipt);
  return `${receipt.tool_call_id} · ${receipt.tool}${subject ? ` ${subject}` : ""}`;
}

/** The icon says what kind of effect it was from the receipt's own fields, not from a tool list. */
function effectIcon(receipt: Receipt): string {
  if (argvOf(receipt) !== undefined) {
    return "terminal";
  }
  return receipt.changed_artifacts.length > 0 ? "edit" : "symbol-event";
}

export function receiptIcon(receipt: Receipt): NodeIcon {
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

/** The file a receipt changed, for clicking; undefined when it changed none. */
export function receiptFile(receipt: Receipt): string | undefined {
  return receipt.changed_artifacts[0];
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
    description: receipt.exit_state,
    tooltip: `${receiptLabel(receipt)} (${receipt.exit_state})\n${receipt.result}`,
    icon: receiptIcon(receipt),
    openPath: receiptFile(receipt),
    contextValue: "receipt",
    children: [
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

/** A warning at the top of the tree when the log is broken or could not be read. */
export function logProblemNode(message: string): ReceiptNode {
  return {
    id: "log-problem",
    label: "Receipt log problem",
    description: message,
    tooltip: message,
    icon: { id: "warning", color: "list.warningForeground" },
    children: [],
    contextValue: "logProblem",
  };
}

/** Root nodes: the problem (if any) first, then one node per receipt in log order. */
export function receiptRoots(
  receipts: readonly Receipt[],
  problem: string | null,
): ReceiptNode[] {
  const nodes = receipts.map(receiptNode);
  return problem ? [logProblemNode(problem), ...nodes] : nodes;
}
