// The run panel's webview: draws the conversation the extension posts and posts back what the
// person clicks. Text is only ever set with textContent, never parsed as HTML. It runs in the
// webview, not the extension host: esbuild bundles it for the browser (esbuild.mjs), and it
// imports types only.

import { wireBranches } from "./branchesScript";
import { button, closeAllDetails, details, el } from "./panelDom";
import { acceptBlocked, isGoing, takesReason, untiedAt } from "./runModel";
import type { DrawnTurn, ModelMessage, PanelMessage } from "./panelMessages";
import type { ProposalState, ProposalView, StepView } from "./runModel";
import { ruleApprovalLine } from "./turnNotes";

/** The webview's handle on its host, which VS Code defines before the script runs. */
declare function acquireVsCodeApi(): {
  postMessage(message: PanelMessage): void;
};

const vscode = acquireVsCodeApi();

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) {
    throw new Error(`the run panel has no #${id}`);
  }
  return node as T;
}

function buttonsById<Id extends string>(
  ...ids: Id[]
): Record<Id, HTMLButtonElement> {
  return Object.fromEntries(
    ids.map((id) => [id, byId<HTMLButtonElement>(id)]),
  ) as Record<Id, HTMLButtonElement>;
}

const conversation = byId<HTMLElement>("conversation");
const form = byId<HTMLFormElement>("composer");
const message = byId<HTMLTextAreaElement>("message");
const label = byId<HTMLLabelElement>("message-label");
const {
  send,
  stop,
  pause,
  steer,
  new: newConversation,
} = buttonsById("send", "stop", "pause", "steer", "new");
/** Reasons typed but not sent yet, by call id, so a redraw keeps them. */
const reasons: Record<string, string> = {};
/** The turns still going in this drawing (a rule's approval there offers Stop beside it). */
let goingTurns = new Set<number>();

const STATE_WORDS: Record<ProposalState, string> = {
  pending: "pending: waiting for your answer",
  approved: "accepted",
  rejected: "rejected",
  stale: "stale",
  withdrawn: "withdrawn: not answered",
  interrupted: "interrupted (not rejected)",
  refused: "refused",
  failed: "failed",
};

function proposalBlock(proposal: ProposalView): HTMLDivElement {
  const box = el("div", `proposal state-${proposal.state}`);
  box.dataset.call = proposal.toolCallId;
  const head = el("div", "proposal-head");
  const byRule = proposal.byRule;
  head.append(
    el("span", "subject", `${proposal.subject} (${proposal.toolCallId})`),
    el(
      "span",
      `badge ${proposal.state}`,
      byRule && proposal.state === "approved"
        ? `approved by rule ${byRule.index}`
        : STATE_WORDS[proposal.state] || proposal.state,
    ),
  );
  box.append(head);
  if (byRule) {
    // Nobody was asked: the rule is named as it decides, and Stop is right beside it.
    const line = el("div", "rule-approval");
    line.append(el("span", "", ruleApprovalLine(byRule)));
    if (proposal.turn !== undefined && goingTurns.has(proposal.turn)) {
      line.append(
        button("Stop run", "link", () => vscode.postMessage({ type: "stop" })),
      );
    }
    box.append(line);
  }
  if (proposal.detail && proposal.state === "pending") {
    box.append(el("pre", "proposal-detail", proposal.detail));
  }
  if (proposal.reason) {
    box.append(el("div", "reason", proposal.reason));
  }
  if (proposal.edited) {
    box.append(el("div", "reason", "accepted with your changes"));
  }
  if (
    (proposal.kind === "edit" || proposal.kind === "changes") &&
    proposal.state === "pending"
  ) {
    box.append(
      button("Show diff", "link", () =>
        vscode.postMessage({ type: "showDiff", id: proposal.toolCallId }),
      ),
    );
  }
  if (
    proposal.state === "pending" &&
    proposal.hunks &&
    proposal.hunks.length > 1
  ) {
    const list = el("fieldset", "hunks");
    list.append(el("legend", "", "Hunks to keep"));
    proposal.hunks.forEach((hunk, index) => {
      const row = el("label", "hunk");
      const box2 = el("input");
      box2.type = "checkbox";
      box2.checked = hunk.kept;
      box2.dataset.hunk = String(index);
      box2.addEventListener("change", () => {
        const keep = Array.from(list.querySelectorAll("input")).map(
          (input) => input.checked,
        );
        vscode.postMessage({ type: "hunks", id: proposal.toolCallId, keep });
      });
      row.append(box2, el("span", "", hunk.label));
      list.append(row);
    });
    box.append(list);
  }
  if (proposal.state === "pending") {
    const reason = el("input", "reason-input");
    reason.type = "text";
    reason.placeholder = "Reason for rejecting (optional, the model reads it)";
    reason.value = reasons[proposal.toolCallId] || "";
    reason.addEventListener("input", () => {
      reasons[proposal.toolCallId] = reason.value;
    });
    reason.hidden = !takesReason(proposal);
    const row = el("div", "row");
    const blocked = acceptBlocked(proposal);
    const accept = button(
      "Accept",
      "accept",
      () => vscode.postMessage({ type: "accept", id: proposal.toolCallId }),
      blocked !== undefined,
    );
    if (blocked) {
      accept.title = blocked;
    }
    row.append(
      accept,
      button("Reject", "secondary reject", () =>
        vscode.postMessage({
          type: "reject",
          id: proposal.toolCallId,
          reason: reason.value,
        }),
      ),
    );
    box.append(reason, row);
  }
  return box;
}

function stepBlock(
  step: StepView,
  proposals: Record<string, ProposalView>,
  shown: Set<string>,
  turn: number,
): HTMLElement {
  const box = el(
    "section",
    `step${step.wentWrong ? " went-wrong" : ""}${step.earlier ? " earlier" : ""}`,
  );
  box.id = stepAnchor(turn, step.step);
  box.append(el("h3", "", `Step ${step.step}: ${step.action}`));
  if (step.thinking) {
    box.append(details("Thinking", step.thinking, `${box.id}/thinking`));
  }
  if (step.text) box.append(el("p", "model-text", step.text));
  if (step.modelNote) {
    box.append(el("p", "model-note", `Model server: ${step.modelNote}`));
  }
  const found = step.toolCallId ? proposals[step.toolCallId] : undefined;
  // A proposal asked again in a later turn is drawn there, not at its withdrawn step.
  const proposal =
    found && (found.turn === undefined || found.turn === turn)
      ? found
      : undefined;
  if (proposal && step.toolCallId) {
    box.append(proposalBlock(proposal));
    shown.add(step.toolCallId);
  }
  if (step.observation !== null && step.observation !== undefined) {
    const lines = String(step.observation).split("\n");
    const summary = `Observation${step.stateWords ? ` (${step.stateWords})` : ""}: ${lines[0]}`;
    if (lines.length > 1) {
      box.append(details(summary, step.observation, `${box.id}/observation`));
    } else {
      box.append(el("p", "observation", summary));
    }
    if (step.protectedNote) {
      box.append(
        el("p", "model-note", `Only you see this: ${step.protectedNote}.`),
      );
    }
    if (step.refusalNote) {
      box.append(
        el("p", "model-note", `Only you see this: ${step.refusalNote}.`),
      );
    }
    if (step.enableNote) {
      box.append(el("p", "model-note enable-note", `${step.enableNote}.`));
    }
    const outputSha256 = step.outputSha256;
    if (outputSha256) {
      box.append(
        button("Full output", "link", () =>
          vscode.postMessage({ type: "openOutput", sha256: outputSha256 }),
        ),
      );
    }
    const shown = step.shownToModel;
    if (shown) {
      box.append(
        el(
          "p",
          "model-note shown-to-model",
          `The model was shown the first and last parts of this output, not all of it: ${shown.artifactId} (${shown.byteCount} bytes, stored) is named for it to read the rest in ranges.`,
        ),
        details("What the model was shown", shown.text, `${box.id}/shown`),
      );
    }
  }
  return box;
}

/** The steering message typed for a resume, kept across redraws. */
let steering = "";

/** A turn's article (its class says what kind and how it went), headed by its goal. */
function turnBlock(className: string, goal: string): HTMLElement {
  const block = el("article", className);
  block.append(el("h2", "goal", goal));
  return block;
}

/** A run kept on disk: what the receipts show, and Resume, Steer and resume, Discard. */
function resumableBlock(
  resumable: NonNullable<ModelMessage["resumable"]>,
): HTMLElement {
  const block = turnBlock(
    `turn resumable status-${resumable.state}`,
    `${resumable.state === "paused" ? "Paused" : "Interrupted"} run: ${resumable.goal}`,
  );
  const list = el("ul");
  for (const line of resumable.lines) list.append(el("li", "", line));
  block.append(list);
  const text = el("input", "reason-input");
  text.type = "text";
  text.placeholder =
    "Steering for the model (optional, one message before it goes on)";
  text.value = steering;
  text.addEventListener("input", () => {
    steering = text.value;
  });
  const row = el("div", "row");
  const runId = resumable.runId;
  row.append(
    button("Resume", "accept", () =>
      vscode.postMessage({ type: "resume", runId }),
    ),
    button("Steer and resume", "secondary", () => {
      if (!steering.trim()) {
        text.focus();
        return;
      }
      vscode.postMessage({ type: "resume", runId, steer: steering.trim() });
      steering = "";
    }),
    button("Discard", "secondary", () =>
      vscode.postMessage({ type: "discard", runId }),
    ),
  );
  block.append(text, row);
  return block;
}

/** Your settings refused (each with what is used instead), what the folder's settings did;
 * Allow… when a grant waits for the person's yes. */
function folderSettingsBlock(
  settings: NonNullable<ModelMessage["folderSettings"]>,
): HTMLElement {
  const block = el("section", "folder-settings");
  if (settings.refused.length > 0) {
    block.append(el("h2", "goal", "Your settings not taken"));
    const refused = el("ul", "refused-settings");
    for (const line of settings.refused) refused.append(el("li", "", line));
    block.append(refused);
  }
  if (settings.lines.length === 0) return block;
  block.append(el("h2", "goal", "This folder's settings"));
  const list = el("ul");
  for (const line of settings.lines) list.append(el("li", "", line));
  block.append(list);
  if (settings.waiting) {
    const row = el("div", "row");
    row.append(
      button("Allow…", "secondary", () =>
        vscode.postMessage({ type: "allowFolderGrants" }),
      ),
    );
    block.append(row);
  }
  return block;
}

let sentGoal: string | null = null;

/**
 * Clears the goal field once the run it started is open (its goal is then the turn's first
 * line); a run that never started leaves it where the person typed it.
 */
function settleGoal(state: ModelMessage): void {
  if (sentGoal === null) return;
  const turn: DrawnTurn | undefined = state.turns[state.turns.length - 1];
  if (!turn || turn.goal !== sentGoal) return;
  if (isGoing(turn) || turn.steps.length > 0) {
    if (message.value.trim() === sentGoal) message.value = "";
  }
  sentGoal = null;
}

/** What the model is doing (loading, a step's prefill or generation), the turn's first item. */
function activityBlock(turn: DrawnTurn): HTMLElement | null {
  const loading = turn.loading ?? [];
  if (loading.length === 0 && !turn.activity) return null;
  const block = el("ul", "activity");
  for (const line of loading)
    block.append(el("li", "loading", `Model: ${line}`));
  if (turn.activity) {
    block.append(
      el(
        "li",
        "step-activity",
        `Step ${turn.activity.step}: ${turn.activity.message}`,
      ),
    );
  }
  return block;
}

const HEADINGS: Partial<Record<DrawnTurn["status"], string>> = {
  stopped: "Stopped",
  paused: "Paused",
  interrupted: "Interrupted",
  ended: "Ended",
};

/** From this many steps on, the panel offers Collapse all and Jump to step. */
const LONG_RUN_STEPS = 8;

function stepAnchor(turn: number, step: number): string {
  return `step-${turn}-${step}`;
}

/** The rules file the run read, set apart from what the model says. */
function rulesNote(line: string): HTMLElement {
  const note = el("p", "rules");
  note.append(
    el("strong", "", "Rules file read by the run: "),
    el("span", "", line),
  );
  return note;
}

/** Above a long run: close every observation, or go to one step. */
function runTools(state: ModelMessage): HTMLElement | null {
  const steps = state.turns.flatMap((turn, index) =>
    turn.steps.map((step) => ({ index, step })),
  );
  if (steps.length < LONG_RUN_STEPS) return null;
  const bar = el("nav", "run-tools");
  const collapse = button("Collapse all", "secondary", () =>
    closeAllDetails(conversation),
  );
  const jump = el("select", "jump");
  jump.title = "Jump to step";
  jump.append(el("option", "", "Jump to step…"));
  for (const { index, step } of steps) {
    const option = el(
      "option",
      "",
      `${state.turns.length > 1 ? `${index + 1}.` : ""}Step ${step.step}: ${step.action}`,
    );
    option.value = stepAnchor(index, step.step);
    jump.append(option);
  }
  jump.addEventListener("change", () => {
    document.getElementById(jump.value)?.scrollIntoView({ block: "start" });
    jump.selectedIndex = 0;
  });
  bar.append(collapse, jump);
  return bar;
}

/** The pending proposals of the last drawing, to tell a new one. */
let pendingShown = new Set<string>();

/** A proposal that just became pending is brought into view, its reason field with it. */
function revealNewPending(): void {
  const pending = new Set<string>();
  let first: Element | null = null;
  for (const node of Array.from(
    conversation.querySelectorAll<HTMLElement>(".proposal.state-pending"),
  )) {
    const id = node.dataset.call ?? "";
    pending.add(id);
    if (!pendingShown.has(id) && first === null) first = node;
  }
  pendingShown = pending;
  first?.scrollIntoView({ block: "nearest" });
}

function render(state: ModelMessage): void {
  settleGoal(state);
  // Follow the run as it grows, unless the person scrolled up to read.
  const atBottom =
    window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  conversation.replaceChildren();
  const tools = runTools(state);
  if (tools) conversation.append(tools);
  const shown = new Set<string>();
  goingTurns = new Set(
    state.turns.flatMap((turn, index) => (isGoing(turn) ? [index] : [])),
  );
  let running = false;
  let stopping = false;
  let pausing = false;
  state.turns.forEach((turn, index) => {
    const block = turnBlock(
      `turn status-${turn.status}`,
      turn.followUp
        ? `Follow-up: ${turn.goal}`
        : turn.resumed
          ? `Resumed: ${turn.goal}`
          : turn.goal,
    );
    const activity = activityBlock(turn);
    if (activity) block.append(activity);
    if (turn.agentsFileLine) {
      block.append(rulesNote(turn.agentsFileLine));
    }
    if (turn.steer) {
      const said = el("p", "person");
      said.append(el("strong", "", "You: "), el("span", "", turn.steer));
      block.append(said);
    }
    turn.steps.forEach((step, position) => {
      const before = turn.steps[position - 1];
      if (step.earlier && !before?.earlier) {
        block.append(
          el(
            "p",
            "earlier-note",
            `Steps ${step.earlier}, from the run's record:`,
          ),
        );
      } else if (!step.earlier && before?.earlier) {
        block.append(el("p", "earlier-note", "Resumed here."));
      }
      // Asked before this step and tied to none (an MCP tool's definition): drawn here.
      for (const proposal of untiedAt(turn, index, state.proposals, position)) {
        block.append(proposalBlock(proposal));
        shown.add(proposal.toolCallId);
      }
      block.append(stepBlock(step, state.proposals, shown, index));
    });
    if (turn.steps[turn.steps.length - 1]?.earlier) {
      block.append(el("p", "earlier-note", "Resumed here."));
    }
    if (turn.streaming) {
      const live = el("section", "step streaming");
      live.append(
        el(
          "h3",
          "",
          `Step ${turn.streaming.step}: ${turn.liveStepWords ?? "generating…"}`,
        ),
      );
      if (turn.streaming.thinking) {
        const key = `${stepAnchor(index, turn.streaming.step)}/thinking`;
        live.append(details("Thinking", turn.streaming.thinking, key));
      }
      if (turn.streaming.text)
        live.append(el("p", "model-text", turn.streaming.text));
      block.append(live);
    }
    // This turn's proposals not tied to a step yet.
    for (const proposal of Object.values(state.proposals)) {
      if (!shown.has(proposal.toolCallId) && proposal.turn === index) {
        block.append(proposalBlock(proposal));
        shown.add(proposal.toolCallId);
      }
    }
    if (isGoing(turn)) {
      running = true;
      stopping = turn.status === "stopping";
      pausing = turn.status === "pausing";
      block.append(
        el(
          "p",
          "run-state",
          stopping
            ? "Stopping…"
            : pausing
              ? "Pausing at the next boundary…"
              : "Running…",
        ),
      );
    } else {
      const verdict = el("div", "verdict");
      verdict.append(el("h3", "", HEADINGS[turn.status] ?? "Verdict"));
      const list = el("ul");
      for (const line of turn.verdictLines) list.append(el("li", "", line));
      verdict.append(list);
      if (turn.final) {
        const claim = el("p", "claim");
        claim.append(
          el("strong", "", "The model's claim: "),
          el("span", "", turn.final),
        );
        verdict.append(claim);
        if (turn.finalUnchecked) {
          verdict.append(
            el(
              "p",
              "model-note",
              `Not checked against the record: ${turn.finalUnchecked}`,
            ),
          );
        }
      }
      if (turn.proposedBy) {
        verdict.append(el("p", "model-note", `Model: ${turn.proposedBy}`));
      }
      if (turn.modelUsage) {
        verdict.append(
          el("p", "model-note", `Model usage: ${turn.modelUsage}`),
        );
      }
      block.append(verdict);
    }
    conversation.append(block);
  });
  // Pending proposals outside any turn (a validation or a revert).
  for (const proposal of Object.values(state.proposals)) {
    if (!shown.has(proposal.toolCallId) && proposal.state === "pending") {
      conversation.append(proposalBlock(proposal));
    }
  }
  if (state.resumable) {
    conversation.append(resumableBlock(state.resumable));
  } else if (state.looking) {
    conversation.append(el("p", "looking", state.looking));
  }
  if (state.folderSettings) {
    conversation.prepend(folderSettingsBlock(state.folderSettings));
  }
  const hasTurns = state.turns.length > 0;
  // After a crash or a pause the daemon keeps no conversation to follow up: Resume goes on.
  const last = state.turns[state.turns.length - 1];
  const cutShort =
    state.resumable !== null ||
    last?.status === "interrupted" ||
    last?.status === "paused";
  // A run that ended elsewhere keeps no conversation to follow up: a new goal starts afresh.
  const followsUp = hasTurns && last?.status !== "ended";
  label.textContent = cutShort
    ? "Resume the run above, or start a new conversation"
    : followsUp
      ? "Follow-up (continues this conversation)"
      : "Goal";
  send.textContent = followsUp ? "Send follow-up" : "Run";
  send.hidden = cutShort;
  message.hidden = cutShort;
  send.disabled = running;
  pause.hidden = !running;
  pause.disabled = stopping || pausing;
  steer.hidden = !running;
  steer.disabled = stopping || pausing;
  stop.hidden = !running;
  stop.disabled = stopping;
  stop.textContent = stopping ? "Stopping…" : "Stop run";
  newConversation.hidden = (!hasTurns && !cutShort) || running;
  if (atBottom) {
    window.scrollTo(0, document.body.scrollHeight);
  }
  revealNewPending();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = message.value.trim();
  if (!text) return;
  vscode.postMessage({ type: "send", text });
  // Kept until the run gets to its first step: a start that fails (no model, the runtime
  // missing) leaves the goal where the person typed it.
  sentGoal = text;
});
message.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    form.requestSubmit();
  }
});
stop.addEventListener("click", () => vscode.postMessage({ type: "stop" }));
pause.addEventListener("click", () => vscode.postMessage({ type: "pause" }));
steer.addEventListener("click", () => vscode.postMessage({ type: "steer" }));
newConversation.addEventListener("click", () =>
  vscode.postMessage({ type: "newConversation" }),
);
window.addEventListener("message", (event: MessageEvent<unknown>) => {
  const data = event.data as Partial<ModelMessage> | null;
  if (data && data.type === "model") render(data as ModelMessage);
});
wireBranches((branchMessage) => vscode.postMessage(branchMessage));
vscode.postMessage({ type: "ready" });
