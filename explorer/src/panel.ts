// The side panel: every field of the clicked decision, and the questions to ask of it.

import { typeName } from "./graph";
import type { DecisionDetail, Impact, PlanInfo, ReviewInfo } from "./model";

export interface PanelActions {
  lineage(): void;
  impact(): void;
  invalidationPath(): void;
  showMoment(moment: string | null, label: string): void;
  clearHighlight(): void;
  select(decisionId: string): void;
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

function items(values: string[]): HTMLUListElement | null {
  if (!values.length) return null;
  const list = element("ul");
  for (const value of values) list.append(element("li", value));
  return list;
}

function decisionLink(id: string, actions: PanelActions): HTMLButtonElement {
  const link = button(id, "go", () => actions.select(id));
  link.className = "link";
  return link;
}

function statusAt(d: DecisionDetail, asOf: string): HTMLElement {
  const at = Date.parse(asOf);
  const status =
    Date.parse(d.createdAt) > at ? "not yet recorded" : d.supersededAt !== null && Date.parse(d.supersededAt) <= at ? "superseded" : "current";
  const line = element("p", `${status} at the moment shown (${when(asOf)})`, "status-at");
  line.dataset.status = status;
  return line;
}

/** Renders a decision's fields; ``review`` is the review it came from, if a person was asked. */
export function renderDecision(
  panel: HTMLElement,
  d: DecisionDetail,
  review: ReviewInfo | null,
  before: string | null,
  asOf: string | null,
  actions: PanelActions,
): void {
  const heading = element("h2", `#${d.sequenceNumber} ${typeName(d.decisionType)}`);
  heading.id = "panel-title";
  panel.setAttribute("aria-labelledby", heading.id);
  const snapshot = d.contextSnapshot;
  const state = snapshot.actorStateRef;
  const superseded = d.supersededAt
    ? fields([
        ["superseded at", when(d.supersededAt)],
        ["superseded by", d.supersededById ? decisionLink(d.supersededById, actions) : null],
      ])
    : null;
  const corrections = d.corrections.map(
    (c) =>
      `attempt ${c.attemptNumber} (${c.mode.toLowerCase()}) by ${c.requestedBy} at ${when(c.at)}: “${c.guidance}”` +
      `${c.reason ? ` because ${c.reason}` : ""}; invalidated ${c.invalidatedDecisionCount} decision(s), ` +
      `${c.invalidatedPlanCount} plan(s); replay ${c.replayOutcome.toLowerCase()}`,
  );
  const actionsRow = element("div", undefined, "actions");
  actionsRow.append(
    button("Upstream lineage", "lineage", actions.lineage),
    button("Downstream impact", "impact", actions.impact),
  );
  if (d.supersededAt) {
    actionsRow.append(button("Why invalidated", "path", actions.invalidationPath));
    // Before: the last moment of the history before the correction; after: the correction's own.
    actionsRow.append(button("Before the correction", "before", () => actions.showMoment(before, "before")));
    actionsRow.append(button("After the correction", "after", () => actions.showMoment(d.supersededAt, "after")));
  }
  actionsRow.append(button("Clear highlight", "clear", actions.clearHighlight));
  panel.replaceChildren(
    heading,
    // The status today, and at the moment the drawing shows when that is a past one.
    element("p", d.status === "SUPERSEDED" ? "superseded today" : "current today", `status ${d.status.toLowerCase()}`),
    ...(asOf === null ? [] : [statusAt(d, asOf)]),
    fields([
      ["question", d.question],
      ["chosen option", d.chosenOption],
      ["alternatives considered", items(d.alternativesConsidered)],
      ["confidence", d.confidenceScore === null ? "not scored" : d.confidenceScore.toFixed(2)],
      ["rationale", d.rationale],
      ["actor reasoning", d.actorReasoning],
      ["phase", d.phase.toLowerCase()],
      ["recorded at", when(d.createdAt)],
      ["decision id", d.id],
      ["plan", d.planId],
      ["context", snapshot.hotContextRef],
      ["context hash", snapshot.hotContextHash],
      ["actor checkpoint", state ? `${state.threadId} / ${state.checkpointNs || "-"} / ${state.checkpointId}` : null],
      ["checkpoint group", d.checkpointGroup?.groupId],
      ["relevant resources", items(snapshot.relevantResources.map((r) => (r.path ? `${r.resourceId} (${r.path})` : r.resourceId)))],
      ["artifacts", items(d.artifactsProduced.map((a) => `${a.artifactType}: ${a.artifactPath}`))],
      ["corrects", d.correctsDecisionId ? decisionLink(d.correctsDecisionId, actions) : null],
      ["correction reason", d.correctionReason],
      [
        "review",
        review
          ? `${review.status.toLowerCase().replace(/_/g, " ")} by ${review.resolvedBy ?? "-"} at ${when(review.resolvedAt)} ` +
            `(confidence ${review.confidenceScore ?? "-"} under threshold ${review.threshold}: ${review.reason})`
          : "none: recorded without a review",
      ],
      ["correction history", items(corrections) ?? "never corrected"],
    ]),
    ...(superseded ? [superseded] : []),
    actionsRow,
    element("div", undefined, "walk"),
  );
}

/** The walk's summary under the panel's buttons: what a correction would invalidate, by type and by plan. */
export function renderWalk(panel: HTMLElement, title: string, walk: Impact | null, count: number, plans: Map<string, PlanInfo>): void {
  const box = panel.querySelector<HTMLElement>(".walk");
  if (!box) return;
  const heading = element("h3", title);
  if (!walk) {
    box.replaceChildren(heading, element("p", `${count} decision(s) highlighted.`));
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
    row.append(element("td", plans.get(planId)?.description ?? planId), element("td", String(n)));
    byPlan.append(row);
  }
  box.replaceChildren(
    heading,
    element("p", `${walk.decisions.length} decision(s) and ${walk.plans.length} child plan(s) would be invalidated.`),
    byType,
    byPlan,
  );
}
