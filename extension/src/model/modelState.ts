// Words for the status bar from a counterfoil/modelState notification. Pure, unit-tested.

import type { ModelState } from "../daemon/protocol";

export interface ModelStatusText {
  text: string;
  tooltip: string;
}

const ICONS: Record<ModelState["state"], string> = {
  unloaded: "$(circle-outline)",
  loading: "$(loading~spin)",
  ready: "$(check)",
  generating: "$(sync~spin)",
  error: "$(error)",
};

/** A step whose prompt is still being read: no token generated yet, whether or not the engine
 * reports its prefill (a rate then is the prefill's, not a generation's). */
function prefilling(state: ModelState): boolean {
  return state.state === "generating" && !state.tokens;
}

export function describeModelState(state: ModelState): ModelStatusText {
  const icon = ICONS[state.state] ?? "$(question)";
  const doing = prefilling(state) ? "reading the prompt" : state.state;
  let text = `${icon} Counterfoil: ${doing}`;
  if (
    state.state === "generating" &&
    typeof state.tokensPerSecond === "number"
  ) {
    text += ` ${state.tokensPerSecond.toFixed(1)} tok/s`;
  }
  const server = endpointHost(state.endpoint);
  if (server) {
    text += ` @ ${server}`;
  }
  const lines = [`Model: ${state.model ?? "unknown"}`, `State: ${state.state}`];
  if (typeof state.tokens === "number") {
    lines.push(`Tokens: ${state.tokens}`);
  }
  if (typeof state.tokensPerSecond === "number") {
    lines.push(`Speed: ${state.tokensPerSecond.toFixed(1)} tokens/s`);
  }
  if (state.message) {
    lines.push(state.message);
  }
  return { text, tooltip: lines.join("\n") };
}

/** `host:port` of a model server's URL, short enough for the status bar. */
function endpointHost(endpoint: string | null | undefined): string | null {
  if (!endpoint) {
    return null;
  }
  try {
    return new URL(endpoint).host || endpoint;
  } catch {
    return endpoint;
  }
}
