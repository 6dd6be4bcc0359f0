// What the run panel shows, kept as plain data and changed only by what the daemon and the review
// report: the conversation's turns (goal, streamed model text, steps, proposals, verdict). It
// renders the daemon's facts and decides nothing. Pure, unit-tested; runPanel.ts posts it to
// the webview, where runPanelScript.ts draws it.

import type {
  AgentEvent,
  AgentsFileRecord,
  ApprovalState,
  EffectState,
  RunActivity,
  RuleApproved,
  RunResult,
  ShownToModel,
  Verdict,
} from "../daemon/protocol";
import type { ResumableView } from "./resumable";
import {
  enableWords,
  protectedWords,
  refusalWords,
  stateWords,
  wentWrong,
  wrongWords,
} from "./stepNotice";
import { argvText } from "../argvText";
import { proposalSubject } from "../review/proposal";

export { stateWords, wentWrong };

/**
 * A proposal in the panel: waiting for an answer, or what became of it in the daemon's words;
 * `stale` is a No the editor sent because the file changed on disk; `withdrawn`: a pause took
 * the question back unanswered; `interrupted`: the run stopped (a crash, a reload) while it
 * waited. Resume asks either again; neither is a rejection.
 */
export type ProposalState =
  "pending" | "stale" | "withdrawn" | "interrupted" | EffectState;

export interface ProposalView {
  toolCallId: string;
  subject: string;
  /** `changes`: a change set (a command's revert, a reviewed command's changes);
   * `mcp_definition`: an MCP tool's definition before its first use (no effect of its own). */
  kind: "edit" | "command" | "changes" | "mcp_definition" | "mcp_call";
  state: ProposalState;
  /** The whole of what is asked, shown under the subject (an MCP call's exact arguments). */
  detail?: string;
  /** Why it is in that state, when there is more to say ("stale: file changed on disk"). */
  reason?: string;
  /** For edits: each hunk's label and whether it is kept. */
  hunks?: Array<{ label: string; kept: boolean }>;
  /** Whether the proposed text was edited by hand. */
  edited?: boolean;
  /** The turn it belongs to (index into `turns`); absent outside any run (a revert). */
  turn?: number;
  /** How many steps its turn showed when it was asked: one tied to no step (an MCP tool's
   * definition) is drawn there, in the order it was asked, not after the run's last step. */
  askedAt?: number;
  /** An edit whose file changed while it waited: still pending, but Accept cannot apply it. */
  outdated?: boolean;
  /** Approved by the person's approval rule, nobody asked: its place in the set and its words,
   * as the daemon said them (`counterfoil/ruleApproved`). */
  byRule?: { index: number; words: string };
}

/** Why the panel's Accept cannot act on a waiting proposal (then it is disabled), if so. */
export function acceptBlocked(proposal: ProposalView): string | undefined {
  return proposal.outdated === true
    ? "The file changed since the model read it: Accept cannot apply this edit. Re-propose it on the file as it is now, or Reject."
    : undefined;
}

/** Whether a No can carry a reason: the model reads it, except for an MCP tool's definition
 * (a No there leaves the tool out; no call of the model's is answered). */
export function takesReason(proposal: Pick<ProposalView, "kind">): boolean {
  return proposal.kind !== "mcp_definition";
}

export interface StepView {
  step: number;
  thinking: string;
  text: string;
  action: string;
  observation: string | null;
  /** What became of the step's call (null: a read that ran, a final answer, no action). */
  state: EffectState | null;
  /** The state in words, with a command's exit status: "approved, exit status 1". */
  stateWords?: string | null;
  /** Rejected, refused, failed, or a command that exited non-zero or timed out. */
  wentWrong?: boolean;
  toolCallId?: string | null;
  /** A command's full output in the content store. */
  outputSha256?: string | null;
  /** The person's reject reason, as the model read it. */
  reason?: string | null;
  /** A model server's remark on the response ("this server does not enforce the schema"). */
  modelNote?: string | null;
  /** For the person: why the path is kept from the model (the model is told less). */
  protectedNote?: string | null;
  /** For the person: what the gate said of a refusal beyond the model's words (a missing path). */
  refusalNote?: string | null;
  /** What the model read instead of the observation, when it was too long to show whole. */
  shownToModel?: ShownToModel | null;
  /** For the person: how to turn on a tool the step found not enabled. */
  enableNote?: string | null;
  /** A step from before a resume, retold from the run's record: "before the interruption". */
  earlier?: string | null;
}

export type TurnStatus =
  | "running"
  | "stopping"
  | "pausing"
  | "finished"
  | "stopped"
  | "paused"
  | "interrupted"
  /** Stopped here, then ended elsewhere (a branch of it kept, discarded): nothing to resume. */
  | "ended";

/** Whether a turn is still going (its controls are Stop, Pause and Steer). */
export function isGoing(turn: TurnView): boolean {
  return (
    turn.status === "running" ||
    turn.status === "stopping" ||
    turn.status === "pausing"
  );
}

export interface TurnView {
  goal: string;
  /** A follow-up continuing the turns before it. */
  followUp?: boolean;
  /** A run kept on disk, going on from where it stopped. */
  resumed?: boolean;
  runId?: string | null;
  status: TurnStatus;
  steps: StepView[];
  /** The model's text of the step being generated. */
  streaming: { step: number; thinking: string; text: string } | null;
  verdict: Verdict | null;
  /** How many proposals waiting for an answer the turn's pause withdrew. */
  withdrawn?: number;
  /** The person's steering message this resumed turn goes on with (the daemon's runStarted). */
  steer?: string | null;
  /** The run's reason (completed, cancelled, …) and error, once it ended. */
  reason?: string;
  error?: string | null;
  final?: string | null;
  /** Why the final answer was taken without the check against the record (the daemon's words). */
  finalUnchecked?: string | null;
  modifiedFiles?: string[];
  /** The model's own counts for the run: information about the model, not evidence. */
  modelUsage?: string | null;
  /** The model that ran, in the daemon's one line for it (spec, short digest, engine). */
  proposedBy?: string | null;
  /** The root's AGENTS.md as the run read it (the daemon's runStarted), if there is one. */
  agentsFile?: AgentsFileRecord | null;
  /** What the model's loading did, in the daemon's words (the file, an import, the load). */
  loading?: string[];
  /** What the model is doing now, or last did, for a step (the daemon's runActivity). */
  activity?: { step: number; message: string } | null;
}

export interface RunModel {
  turns: TurnView[];
  proposals: Record<string, ProposalView>;
  /** A run kept on disk that can go on: offered with Resume instead of a follow-up. */
  resumable: ResumableView | null;
}

/**
 * What an empty panel says while it looks for a run that can go on (the daemon starting and
 * listing its runs after a reload), so the Goal box alone does not read as "nothing to resume";
 * a turn or an offer to resume replaces it.
 */
export function lookingLine(
  model: RunModel,
  looking: string | null,
): string | null {
  return model.turns.length === 0 && model.resumable === null ? looking : null;
}

export function emptyModel(): RunModel {
  return { turns: [], proposals: {}, resumable: null };
}

/** Splits a response into its `<think>` block and the rest. */
export function splitThinking(response: string): {
  thinking: string;
  text: string;
} {
  const match = /<think>([\s\S]*?)(<\/think>|$)/.exec(response);
  if (!match) {
    return { thinking: "", text: response.trim() };
  }
  const text = (
    response.slice(0, match.index) +
    response.slice(match.index + match[0].length)
  ).trim();
  return { thinking: match[1].trim(), text };
}

/** The action in words: "edit_file app.py", "run_command python -m pytest", "final answer". */
export function describeAction(event: AgentEvent): string {
  const action = event.action;
  if (!action) {
    // The daemon says why (a tool not enabled, no JSON) in its own field.
    return event.noAction
      ? `no action (${event.noAction.split("\n", 1)[0]})`
      : "no action (the response did not parse)";
  }
  if ("final" in action) {
    // The daemon answered it with what the run's record shows, and the run went on.
    if (event.finalHeld) return "final answer, not taken as the end";
    return event.finalUnchecked
      ? "final answer, not checked against the record"
      : "final answer";
  }
  if (event.readForModel) {
    // Counterfoil read it before the model's first step: the model did not ask for it.
    return `read for the model: ${event.readForModel}`;
  }
  const target = action.arguments.path ?? action.arguments.argv;
  const subject = Array.isArray(target)
    ? argvText(target.map(String))
    : typeof target === "string"
      ? target
      : "";
  const pattern = action.arguments.pattern;
  if (action.tool === "search_files" && typeof pattern === "string") {
    return `search_files ${JSON.stringify(pattern)} in ${subject || "."}`;
  }
  return `${action.tool} ${subject}`.trim();
}

function currentTurn(model: RunModel): TurnView | undefined {
  return model.turns[model.turns.length - 1];
}

function latestTurnOf(model: RunModel, runId: string): TurnView | undefined {
  return [...model.turns].reverse().find((turn) => turn.runId === runId);
}

/**
 * The latest turn of run `runId` (a resumed run has one turn per part), else the latest turn
 * (the one the extension opened, before its id).
 */
function turnOf(model: RunModel, runId: string | null): TurnView | undefined {
  return (
    (runId !== null ? latestTurnOf(model, runId) : undefined) ??
    currentTurn(model)
  );
}

/** Applies `update` to run `runId`'s turn; nothing happens before the first turn. */
function updateTurn(
  model: RunModel,
  runId: string | null,
  update: (turn: TurnView) => void,
): void {
  const turn = turnOf(model, runId);
  if (turn) {
    update(turn);
  }
}

/**
 * A turn begins: the extension opens it when it asks (no run id yet), and the daemon's
 * runStarted gives that turn its run id; a runStarted for no open turn opens one.
 */
export function startTurn(
  model: RunModel,
  goal: string,
  runId?: string | null,
  followUp = false,
  agentsFile?: AgentsFileRecord | null,
  resumed = false,
  steer: string | null = null,
): void {
  const last = currentTurn(model);
  const known = runId ? latestTurnOf(model, runId) : undefined;
  const opened =
    runId && last && last.status === "running" && !last.runId ? last : known;
  if (opened) {
    opened.runId = runId ?? opened.runId;
    opened.followUp = opened.followUp || followUp;
    opened.resumed = opened.resumed || resumed;
    opened.agentsFile = agentsFile ?? opened.agentsFile;
    opened.steer = steer ?? opened.steer;
    return;
  }
  model.turns.push({
    goal,
    followUp,
    resumed,
    runId,
    status: "running",
    steps: [],
    streaming: null,
    verdict: null,
    agentsFile,
    steer,
  });
}

/** Appends the model's newly streamed text (or thinking) to the step being generated. */
export function addModelText(
  model: RunModel,
  step: number,
  text: string,
  thinking = false,
  runId: string | null = null,
): void {
  updateTurn(model, runId, (turn) => {
    if (!turn.streaming || turn.streaming.step !== step) {
      turn.streaming = { step, thinking: "", text: "" };
    }
    if (thinking) {
      turn.streaming.thinking += text;
    } else {
      turn.streaming.text += text;
    }
  });
}

/** The most loading lines a turn keeps: the first (the model) and the latest. */
const LOADING_LINES = 6;

/** What the daemon says the model is doing for run `activity.runId`. */
export function addActivity(model: RunModel, activity: RunActivity): void {
  updateTurn(model, activity.runId, (turn) => {
    if (activity.step === null) {
      const lines = [...(turn.loading ?? []), activity.message];
      turn.loading =
        lines.length > LOADING_LINES
          ? [lines[0], ...lines.slice(1 - LOADING_LINES)]
          : lines;
      return;
    }
    turn.activity = { step: activity.step, message: activity.message };
  });
}

/** Whether the panel shows step `step` of run `runId` already (a resume in the same panel). */
function stepShown(
  model: RunModel,
  runId: string | null,
  step: number,
): boolean {
  return model.turns.some(
    (turn) =>
      turn.runId === runId && turn.steps.some((shown) => shown.step === step),
  );
}

export function addEvent(model: RunModel, event: AgentEvent): void {
  if (event.earlier && stepShown(model, event.runId, event.step)) {
    return; // the panel that showed the run keeps its own steps above
  }
  updateTurn(model, event.runId, (turn) => {
    const { thinking, text: said } = splitThinking(event.response);
    // A response that is only the action's JSON says nothing the action line does not.
    const text = isJson(said) ? "" : said;
    const view: StepView = {
      step: event.step,
      thinking,
      // A final answer's words are the turn's (below its steps), or a held one's own.
      text:
        event.action && "final" in event.action
          ? event.finalHeld
            ? event.action.final
            : ""
          : text,
      action: describeAction(event),
      observation: event.result,
      state: event.state,
      stateWords: stateWords(event),
      wentWrong: wentWrong(event),
      toolCallId: event.toolCallId ?? null,
      outputSha256: event.outputSha256 ?? null,
      reason: event.reason ?? null,
      modelNote: event.modelNote ?? null,
      protectedNote: protectedWords(event) ?? null,
      refusalNote: refusalWords(event) ?? null,
      shownToModel: event.shownToModel ?? null,
      enableNote: enableWords(event) ?? null,
      earlier: event.earlier ?? null,
    };
    if (event.action && "final" in event.action) {
      view.observation = event.finalHeld ?? event.finalUnchecked ?? null;
      if (event.finalUnchecked) turn.finalUnchecked = event.finalUnchecked;
    }
    turn.steps.push(view);
    turn.streaming = null;
    const id = event.toolCallId;
    if (id && model.proposals[id]) {
      const proposal = model.proposals[id];
      if (event.state !== "rejected" && wentWrong(event)) {
        // Accepted in the editor, then not done (or a command that did not pass).
        proposal.state = event.state === "refused" ? "refused" : "failed";
        proposal.reason = wrongWords(event);
      }
    }
  });
}

function isJson(text: string): boolean {
  if (!text.startsWith("{")) {
    return false;
  }
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function setProposal(model: RunModel, proposal: ProposalView): void {
  const known = model.proposals[proposal.toolCallId];
  const current = model.turns[model.turns.length - 1];
  const going =
    current && isGoing(current) ? model.turns.length - 1 : undefined;
  // A proposal asked again when its run resumed belongs to the resumed turn.
  const askedAgain = proposal.state === "pending" && going !== undefined;
  const turn = askedAgain ? going : (known?.turn ?? going);
  const askedAt =
    known?.askedAt !== undefined && known.turn === turn
      ? known.askedAt
      : turn !== undefined
        ? model.turns[turn].steps.length
        : undefined;
  model.proposals[proposal.toolCallId] = {
    ...known,
    ...proposal,
    turn,
    askedAt,
  };
}

/**
 * The proposals of turn `index` tied to none of its steps (an MCP tool's definition, a
 * question asked again after a resume) that were asked when it showed `position` steps, in the
 * order asked; `position` at the turn's end takes every one left (asked later, or not known).
 */
export function untiedAt(
  turn: Pick<TurnView, "steps">,
  index: number,
  proposals: Record<string, ProposalView>,
  position: number,
): ProposalView[] {
  const tied = new Set(turn.steps.map((step) => step.toolCallId));
  const last = position >= turn.steps.length;
  return Object.values(proposals).filter(
    (proposal) =>
      proposal.turn === index &&
      !tied.has(proposal.toolCallId) &&
      (proposal.askedAt === position ||
        (last && (proposal.askedAt ?? Infinity) > position)),
  );
}

/**
 * Where a question stands, as the daemon says it at each change (`counterfoil/approvalState`):
 * asked (again, after a pause or a steer), withdrawn, interrupted, or denied without an
 * answer; the one state the panel shows for it. A person's answer keeps the panel's own words
 * (accepted, with changes, stale), which say more than `answered`.
 */
export function setApprovalState(model: RunModel, told: ApprovalState): void {
  const proposal = model.proposals[told.toolCallId];
  if (!proposal || told.state === "answered") {
    return; // a question the editor has not shown yet is shown pending when it is
  }
  if (told.state === "denied") {
    proposal.state = "rejected";
  } else {
    proposal.state = told.state;
    if (told.state === "pending") {
      // Asked again in the resumed turn: it belongs there, not at its withdrawn step.
      const turn =
        told.runId !== null ? latestTurnOf(model, told.runId) : undefined;
      proposal.turn = turn ? model.turns.indexOf(turn) : proposal.turn;
    }
  }
  proposal.reason = told.why ?? undefined;
}

/**
 * A call the person's approval rule approved, as the daemon decided it: shown at once in its
 * run's turn, as approved, with the rule named (the step that did it comes after).
 */
export function addRuleApproval(model: RunModel, told: RuleApproved): void {
  const params = told.approved;
  const kind = params.preview.kind;
  const turn = turnOf(model, told.runId);
  model.proposals[params.toolCallId] = {
    toolCallId: params.toolCallId,
    subject: proposalSubject(params),
    kind,
    state: "approved",
    byRule: { index: told.ruleIndex, words: told.ruleWords },
    turn: turn ? model.turns.indexOf(turn) : undefined,
  };
}

export function setStopping(model: RunModel): void {
  const turn = currentTurn(model);
  if (turn && turn.status === "running") {
    turn.status = "stopping";
  }
}

export function setPausing(model: RunModel): void {
  const turn = currentTurn(model);
  if (turn && turn.status === "running") {
    turn.status = "pausing";
  }
}

/**
 * A turn's proposals still waiting when it stopped: `withdrawn` by a pause, `interrupted` by a
 * crash or a reload; never rejected, and Resume asks them again.
 */
function interruptProposals(
  model: RunModel,
  turn: TurnView,
  state: "withdrawn" | "interrupted",
): number {
  const index = model.turns.indexOf(turn);
  let count = 0;
  for (const proposal of Object.values(model.proposals)) {
    const open =
      proposal.state === "pending" ||
      proposal.state === "interrupted" ||
      proposal.state === "withdrawn";
    if (proposal.turn === index && open) {
      count++;
      if (proposal.state === state) {
        continue; // the daemon said so, in its words (counterfoil/approvalState)
      }
      proposal.state = state;
      proposal.reason =
        state === "withdrawn"
          ? "the run paused before you answered; nothing was done, and Resume asks again"
          : "the run stopped while it waited; Resume asks again";
    }
  }
  return count;
}

/** The daemon died under the current turn: it is interrupted, nothing of it rejected. */
export function interruptTurn(model: RunModel): void {
  const turn = currentTurn(model);
  if (turn && isGoing(turn)) {
    turn.status = "interrupted";
    turn.streaming = null;
    turn.reason = "interrupted";
    turn.error = null;
    interruptProposals(model, turn, "interrupted");
  }
}

export function finishTurn(model: RunModel, result: RunResult): void {
  updateTurn(model, result.runId ?? null, (turn) => {
    const paused =
      result.reason === "paused" || result.reason === "interrupted";
    turn.status =
      result.reason === "cancelled"
        ? "stopped"
        : paused
          ? "paused"
          : "finished";
    if (paused) {
      turn.withdrawn = interruptProposals(
        model,
        turn,
        result.reason === "paused" ? "withdrawn" : "interrupted",
      );
    }
    const partial = turn.streaming;
    if (partial && (partial.text || partial.thinking)) {
      // What the model had said when it was stopped stays readable.
      turn.steps.push({
        step: partial.step,
        thinking: partial.thinking,
        text: partial.text,
        action: "stopped while generating",
        observation: null,
        state: null,
      });
    }
    turn.streaming = null;
    turn.verdict = result.verdict;
    turn.reason = result.reason;
    turn.error = result.error ?? null;
    turn.final = result.final;
    turn.modifiedFiles = result.modifiedFiles;
    turn.modelUsage = result.modelUsage ?? null;
    turn.proposedBy = result.proposedBy ?? null;
    turn.runId = result.runId;
  });
}

/**
 * The paused or interrupted turns of runs the daemon says have ended since (`ended`: their run
 * ids) are ended: the panel no longer offers them to resume.
 */
export function endTurns(model: RunModel, ended: ReadonlySet<string>): boolean {
  let changed = false;
  for (const turn of model.turns) {
    const stopped = turn.status === "paused" || turn.status === "interrupted";
    if (stopped && turn.runId && ended.has(turn.runId)) {
      turn.status = "ended";
      changed = true;
    }
  }
  return changed;
}

export function failTurn(model: RunModel, error: string): void {
  const turn = currentTurn(model);
  if (turn) {
    turn.status = "stopped";
    turn.streaming = null;
    turn.reason = "error";
    turn.error = error;
  }
}

export const VALIDATION_WORDS: Record<string, string> = {
  passed: "Validation passed",
  failed: "Validation failed",
  not_run: "Validation not run",
  stale: "Validation stale (files changed after it ran)",
};

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export function filesChangedLine(files: string[]): string {
  return files.length > 0
    ? `Files changed: ${files.join(", ")}`
    : "No files changed";
}

/**
 * The verdict in lines a person reads correctly, facts first: validation, files changed, effects
 * rejected, refused or failed; before the run ends (no verdict yet) only why it stopped.
 */
export function verdictLines(turn: TurnView): string[] {
  const lines: string[] = [];
  if (turn.status === "interrupted") {
    // The daemon sent no verdict; what the receipts show is in the resumable block.
    return [
      "Run interrupted: the daemon stopped before the run ended. Nothing was rejected.",
    ];
  }
  if (turn.status === "ended") {
    return [
      "This run has ended since it stopped (a branch of it was kept, or it was discarded): there is nothing to resume.",
    ];
  }
  if (turn.status === "paused") {
    // True either way: a pause during a command, or with a proposal waiting (none ran then).
    return turn.withdrawn
      ? [
          "Run paused at a boundary. Nothing was rejected: the proposal waiting for your answer was withdrawn, and Resume asks it again.",
        ]
      : ["Run paused at a boundary. Nothing was rejected."];
  }
  const verdict = turn.verdict;
  if (turn.reason && turn.reason !== "completed") {
    lines.push(
      `Run stopped: ${turn.reason}${turn.error ? ` (${turn.error})` : ""}`,
    );
  }
  if (verdict) {
    lines.push(
      VALIDATION_WORDS[verdict.validation] ??
        `Validation ${verdict.validation}`,
    );
    const files = verdict.filesChanged.map((file) => file.path);
    lines.push(filesChangedLine(files));
    const effects: string[] = [];
    if (verdict.rejected.length > 0) {
      effects.push(`${plural(verdict.rejected.length, "effect")} rejected`);
    }
    if (verdict.reviewRejected.length > 0) {
      effects.push(`${verdict.reviewRejected.length} review rejected`);
    }
    if (verdict.refused.length > 0) {
      effects.push(`${verdict.refused.length} refused`);
    }
    if (verdict.failed.length > 0) {
      effects.push(`${verdict.failed.length} failed`);
    }
    if (effects.length > 0) {
      lines.push(effects.join(", "));
    }
    const byRule = verdict.effects.filter(
      (effect) => effect.state === "approved" && effect.byRule,
    ).length;
    if (byRule > 0) {
      lines.push(
        `${plural(byRule, "effect")} approved by your rules, not asked`,
      );
    }
    return lines;
  }
  return lines;
}
