// The side panel: every field of the clicked decision, and the questions to ask of it.

import { decisionCaption, planName, typeName } from "./caption";
import { spanNameOf, type DecisionDetail, type DecisionRef, type DecisionToday, type Impact, type PlanInfo, type ReviewInfo } from "./model";

export interface PanelActions {
  lineage(): void;
  impact(): void;
  invalidationPath(): void;
  showMoment(moment: string | null, label: string): void;
  clearHighlight(): void;
  select(decisionId: string): void;
  copied(id: string, ok: boolean): void;
  /** Opens the comparison of a correction (named by its correction decision) beside its replay. */
  compare(correctionId: string): void;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  if (text !== undefined) made.textContent = text;
  if (className) made.className = className;
  return made;
}

function button(text: string, name: string, action: () => void): HTMLButtonElement {
  const made = element("button", text);
  made.type = "button";
  made.dataset.action = name;
  made.addEventListener("click", action);
  return made;
}

function when(moment: string | null): string {
  return moment ? new Date(moment).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "";
}

function fields(rows: [string, string | Node | null | undefined][]): HTMLDListElement {
  const list = element("dl");
  for (const [name, value] of rows) {
    if (value === null || value === undefined || value === "") continue;
    const term = element("dt", name);
    term.dataset.field = name;
    const definition = element("dd");
    definition.dataset.field = name;
    if (typeof value === "string") definition.textContent = value;
    else definition.append(value);
    list.append(term, definition);
  }
  return list;
}

function items(values: (string | Node)[]): HTMLUListElement | null {
  if (!values.length) return null;
  const list = element("ul");
  for (const value of values) {
    const item = element("li");
    item.append(value);
    list.append(item);
  }
  return list;
}

/** An id shown as what it names: the caption links to it, the id is on hover and a button copies it. */
function copyButton(id: string, actions: PanelActions): HTMLButtonElement {
  const copy = button("copy id", "copy", () => {
    navigator.clipboard.writeText(id).then(
      () => actions.copied(id, true),
      () => actions.copied(id, false),
    );
  });
  copy.className = "copy";
  copy.dataset.id = id;
  copy.title = `Copy ${id}`;
  return copy;
}

export function decisionLink(ref: DecisionRef, plans: Map<string, PlanInfo>, actions: PanelActions): HTMLSpanElement {
  const holder = element("span", undefined, "ref");
  const link = button(decisionCaption(ref, plans.get(ref.planId)), "go", () => actions.select(ref.id));
  link.className = "link";
  link.dataset.id = ref.id;
  link.title = ref.id;
  holder.append(link, copyButton(ref.id, actions));
  return holder;
}

function idWithCopy(id: string, actions: PanelActions): HTMLSpanElement {
  const holder = element("span", undefined, "ref");
  holder.append(element("code", id), copyButton(id, actions));
  return holder;
}

/** One message of a stored context: LangChain's ``messages_to_dict`` form, ``{type, data: {content}}``. */
interface StoredMessage {
  type: string;
  data: { content: unknown; name?: string | null; tool_calls?: { name: string; args: unknown }[] };
}

function isMessages(value: unknown): value is StoredMessage[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((m) => typeof m === "object" && m !== null && typeof (m as StoredMessage).type === "string" && typeof (m as StoredMessage).data === "object")
  );
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : JSON.stringify(part))).join("\n");
  }
  return JSON.stringify(content, null, 2);
}

/**
 * The stored context as a person reads it: a conversation as its messages (who said what, the tool
 * calls made), any other JSON laid out, plain text as it is.
 */
function contextView(context: string): HTMLElement {
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(context);
  } catch {
    // not JSON: shown as the text it is
  }
  const box = element("div", undefined, "context");
  if (isMessages(parsed)) {
    box.dataset.form = "messages";
    const list = element("ol", undefined, "messages");
    for (const message of parsed) {
      const item = element("li", undefined, `message ${message.type}`);
      item.dataset.role = message.type;
      const who = message.data.name ? `${message.type} (${message.data.name})` : message.type;
      item.append(element("span", who, "role"));
      const said = contentText(message.data.content);
      if (said) item.append(element("p", said, "content"));
      for (const call of message.data.tool_calls ?? []) item.append(element("p", `calls ${call.name}(${JSON.stringify(call.args)})`, "tool-call"));
      list.append(item);
    }
    box.append(list);
  } else {
    box.dataset.form = parsed === undefined ? "text" : "json";
    box.append(element("pre", parsed === undefined ? context : JSON.stringify(parsed, null, 2)));
  }
  return box;
}

/** What the panel knows beside the decision: its plans (for captions), the reviews it went through or waits on then. */
export interface PanelContext {
  plans: Map<string, PlanInfo>;
  review: ReviewInfo | null;
  /** Reviews waiting under it at the moment shown. */
  waiting: ReviewInfo[];
  /** The last moment before the correction that superseded it (by now), for "Before the correction". */
  before: string | null;
  asOf: string | null;
}

/**
 * Renders a decision as it stood at the moment shown (``d``, read as of then), beside what became
 * of it by now (``today``).
 */
export function renderDecision(panel: HTMLElement, d: DecisionDetail, today: DecisionToday | null, at: PanelContext, actions: PanelActions): void {
  const plans = at.plans;
  const heading = element("h2", `#${d.sequenceNumber} ${typeName(d.decisionType)}`);
  heading.id = "panel-title";
  panel.setAttribute("aria-labelledby", heading.id);
  const snapshot = d.contextSnapshot;
  const state = snapshot.actorStateRef;
  const link = (ref: DecisionRef): HTMLSpanElement => decisionLink(ref, plans, actions);
  const superseded = d.supersededAt
    ? fields([
        ["superseded at", when(d.supersededAt)],
        ["superseded by", d.supersededBy ? link(d.supersededBy) : d.supersededById],
        ["invalidated by correcting", d.supersededBy?.corrects ? link(d.supersededBy.corrects) : null],
      ])
    : null;
  const corrections = d.corrections.map(
    (c) =>
      `attempt ${c.attemptNumber} (${c.mode.toLowerCase()}) by ${c.requestedBy} at ${when(c.at)}: “${c.guidance}”` +
      `${c.reason ? ` because ${c.reason}` : ""}; invalidated ${c.invalidatedDecisionCount} decision(s), ` +
      `${c.invalidatedPlanCount} plan(s); replay ${c.replayOutcome.toLowerCase()}`,
  );
  const actionsRow = element("div", undefined, "actions");
  actionsRow.append(button("Upstream lineage", "lineage", actions.lineage), button("Downstream impact", "impact", actions.impact));
  if (today?.supersededAt) {
    // Superseded by now (whatever the moment shown): the ways to either side of that correction.
    actionsRow.append(button("Why invalidated", "path", actions.invalidationPath));
    actionsRow.append(button("Before the correction", "before", () => actions.showMoment(at.before, "before")));
    actionsRow.append(button("After the correction", "after", () => actions.showMoment(today.supersededAt, "after")));
  }
  // Each correction this decision took part in, beside its replay: as the correction, as the
  // decision corrected (each attempt), or as a decision it superseded.
  const comparable = new Map<string, string>();
  if (d.isCorrection) comparable.set(d.id, "Compare with what it replaced");
  for (const c of d.corrections) {
    if (!comparable.has(c.correctionDecisionId)) comparable.set(c.correctionDecisionId, `Compare attempt ${c.attemptNumber} with its replay`);
  }
  if (today?.supersededBy?.correctsDecisionId && !comparable.has(today.supersededBy.id)) {
    comparable.set(today.supersededBy.id, "Compare with its replay");
  }
  for (const [correctionId, label] of comparable) {
    const compare = button(label, "compare", () => actions.compare(correctionId));
    compare.dataset.correction = correctionId;
    actionsRow.append(compare);
  }
  actionsRow.append(button("Clear highlight", "clear", actions.clearHighlight));
  const plan = plans.get(d.planId) ?? { description: d.plan.description, spanName: spanNameOf(d.plan.arguments) };
  const isRoot = d.parent === null && d.decisionType === "PROMPT_DEFINITION";
  const statusToday = today?.status ?? d.status;
  const waiting = at.waiting.map(
    (r) => `${typeName(r.decisionType)}: ${r.chosenOption} (confidence ${r.confidenceScore ?? "-"} under threshold ${r.threshold}: ${r.reason})`,
  );
  panel.replaceChildren(
    heading,
    // The status today, and the status at the moment the drawing shows (as the service read it then).
    element("p", statusToday === "SUPERSEDED" ? "superseded today" : "current today", `status ${statusToday.toLowerCase()}`),
    ...(at.asOf === null ? [] : [statusAt(d.status, at.asOf)]),
    ...(superseded ? [superseded] : []),
    // The questions first, and what they answer just under them, where the eye already is.
    actionsRow,
    element("div", undefined, "walk"),
    fields([
      ["question", d.question],
      ["chosen option", isRoot ? planName(plan) : d.chosenOption],
      ["arguments", isRoot && d.chosenOption !== planName(plan) ? element("pre", prettyJson(d.chosenOption)) : null],
      ["alternatives considered", items(d.alternativesConsidered)],
      ["confidence", d.confidenceScore === null ? "not scored" : d.confidenceScore.toFixed(2)],
      ["rationale", d.rationale],
      ["actor reasoning", d.actorReasoning],
      ["phase", d.phase.toLowerCase()],
      ["recorded at", when(d.createdAt)],
      ["decision id", idWithCopy(d.id, actions)],
      ["plan", planName(plan)],
      ["parent", d.parent ? link(d.parent) : null],
      ["depends on", items(d.dependsOn.map(link)) ?? "nothing"],
      ["dependents", items(d.dependents.map(link)) ?? "none"],
      ["children", items(d.children.map(link)) ?? "none"],
      ["corrects", d.corrects ? link(d.corrects) : d.correctsDecisionId],
      ["correction reason", d.correctionReason],
      [
        "review",
        at.review
          ? `${at.review.status.toLowerCase().replace(/_/g, " ")} by ${at.review.resolvedBy ?? "-"} at ${when(at.review.resolvedAt)} ` +
            `(confidence ${at.review.confidenceScore ?? "-"} under threshold ${at.review.threshold}: ${at.review.reason})`
          : "none: recorded without a review",
      ],
      ["review pending under it", items(waiting)],
      ["correction history", items(corrections) ?? "never corrected"],
      ["context", d.context === null ? "stored elsewhere (see the reference)" : contextView(d.context)],
      ["context reference", snapshot.hotContextRef],
      ["context hash", snapshot.hotContextHash],
      ["actor checkpoint", state ? `${state.threadId} / ${state.checkpointNs || "-"} / ${state.checkpointId}` : null],
      ["checkpoint group", d.checkpointGroup?.groupId],
      ["relevant resources", items(snapshot.relevantResources.map((r) => (r.path ? `${r.resourceId} (${r.path})` : r.resourceId)))],
      ["artifacts", items(d.artifactsProduced.map((a) => `${a.artifactType}: ${a.artifactPath}`))],
    ]),
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function statusAt(status: string, asOf: string): HTMLElement {
  const line = element("p", `${status} at the moment shown (${when(asOf)})`, "status-at");
  line.dataset.status = status.toLowerCase();
  return line;
}

/** The walk's summary under the panel's buttons: what a correction would invalidate, by type and by plan. */
export function renderWalk(
  panel: HTMLElement,
  title: string,
  walk: Impact | null,
  count: number,
  plans: Map<string, PlanInfo>,
  steps: Node | null = null,
): void {
  const box = panel.querySelector<HTMLElement>(".walk");
  if (!box) return;
  const heading = element("h3", title);
  if (!walk) {
    box.replaceChildren(heading, ...(steps ? [steps] : []), element("p", `${count} decision(s) highlighted.`));
    return;
  }
  const byType = element("table");
  byType.dataset.counts = "type";
  byType.append(element("caption", "by type"));
  for (const c of walk.countsByType) {
    const row = element("tr");
    row.append(element("td", typeName(c.decisionType)), element("td", String(c.count)));
    byType.append(row);
  }
  const perPlan = new Map<string, number>();
  for (const d of walk.decisions) perPlan.set(d.planId, (perPlan.get(d.planId) ?? 0) + 1);
  const byPlan = element("table");
  byPlan.dataset.counts = "plan";
  byPlan.append(element("caption", "by plan"));
  for (const [planId, n] of perPlan) {
    const row = element("tr");
    const plan = plans.get(planId);
    row.append(element("td", plan ? planName(plan) : planId), element("td", String(n)));
    byPlan.append(row);
  }
  box.replaceChildren(
    heading,
    element("p", `${walk.decisions.length} decision(s) and ${walk.plans.length} child plan(s) would be invalidated.`),
    byType,
    byPlan,
  );
}
