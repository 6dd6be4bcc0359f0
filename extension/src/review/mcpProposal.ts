// What an MCP question shows: a tool's definition before the model is offered it (the server,
// the tool's name, its description and input schema, and what changed since the one approved),
// and a call with its exact arguments. The daemon decides what is asked; these are the words.
// Pure functions, no VS Code, so they are unit-tested on their own.

import type {
  McpCallPreview,
  McpDefinitionPreview,
  McpServerShown,
} from "../daemon/protocol";
import { argvText } from "../argvText";
import { shownPath, shownText } from "../shownPath";

/** How the server is reached: its argv, or its URL. */
export function serverReached(server: McpServerShown): string {
  if (server.url) {
    return server.url;
  }
  return server.command ? argvText(server.command) : server.transport;
}

/** The tool by server and name, one line of text: "files/read". */
export function mcpToolName(
  preview: McpDefinitionPreview | McpCallPreview,
): string {
  return shownPath(`${preview.server.name}/${preview.tool}`);
}

/** The run panel's subject: "MCP tool files/read (new)", "mcp_call files/read". */
export function mcpSubject(
  preview: McpDefinitionPreview | McpCallPreview,
): string {
  if (preview.kind === "mcp_call") {
    return `mcp_call ${mcpToolName(preview)}`;
  }
  const state = preview.state === "changed" ? "changed definition" : "new";
  return `MCP tool ${mcpToolName(preview)} (${state})`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** The whole definition, and what changed since the approved one, shown where it is asked. */
export function definitionDetail(preview: McpDefinitionPreview): string {
  const lines = [
    `server: ${preview.server.name} (${preview.server.transport}: ${serverReached(preview.server)})`,
    `tool: ${shownPath(preview.tool)}`,
  ];
  if (preview.state === "changed") {
    const changed = preview.changes.map((name) => name.replace("_", " "));
    lines.push(
      `changed since you approved it: ${changed.join(", ") || "the definition"}`,
    );
    if (
      preview.approvedDescription !== undefined &&
      preview.approvedDescription !== null &&
      preview.changes.includes("description")
    ) {
      lines.push(`approved description: ${preview.approvedDescription}`);
    }
    if (
      preview.approvedInputSchema !== undefined &&
      preview.approvedInputSchema !== null &&
      preview.changes.includes("input_schema")
    ) {
      lines.push(`approved input schema: ${json(preview.approvedInputSchema)}`);
    }
  }
  lines.push(`description: ${preview.description}`);
  lines.push(`input schema: ${json(preview.inputSchema)}`);
  lines.push(`sha256: ${preview.sha256}`);
  return shownText(lines.join("\n"));
}

/** The call exactly as it will be made, shown where it is asked. */
export function callDetail(preview: McpCallPreview): string {
  const detail = [
    `server: ${preview.server.name} (${preview.server.transport}: ${serverReached(preview.server)})`,
    `tool: ${shownPath(preview.tool)} (definition sha256 ${preview.definitionSha256.slice(0, 12)})`,
    `arguments: ${json(preview.arguments)}`,
  ].join("\n");
  return shownText(detail);
}

/** The notification's question, in one paragraph (the run panel shows the whole detail). */
export function mcpQuestion(
  toolCallId: string,
  preview: McpDefinitionPreview | McpCallPreview,
  note?: string | null,
): string {
  const noted = note ? ` (${note})` : "";
  if (preview.kind === "mcp_call") {
    return shownText(
      `Counterfoil wants to call the MCP tool ${mcpToolName(preview)} (${toolCallId})${noted} with arguments ${JSON.stringify(preview.arguments)}`,
    );
  }
  const what =
    preview.state === "changed"
      ? `The definition of the MCP tool ${mcpToolName(preview)} changed (${preview.changes.map((name) => name.replace("_", " ")).join(", ")}). Offer it to the model again?`
      : `Offer the MCP tool ${mcpToolName(preview)} to the model?`;
  return shownText(
    `${what} Description: ${preview.description} · input schema ${JSON.stringify(preview.inputSchema)}`,
  );
}
