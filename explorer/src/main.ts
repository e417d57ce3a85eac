// The explorer page: finds plans, draws a hierarchy, answers questions about a decision, travels in time, follows live events,
// sets a correction beside its replay, and acts (correct, guide, review) as far as the token may.

import { describeViewer, readViewer, renderActions, type ActHooks, type Viewer } from "./actions";
import { ApiError, Live, exported, storeToken, storedToken, type DecisionEvent } from "./api";
import { decisionCaption, planName, typeName } from "./caption";
import { readComparison, renderComparison } from "./compare";
import { GraphView, TYPE_COLOURS, type Dependency, type Highlight } from "./graph";
import {
  decisionDetail,
  planOfDecision,
  hierarchyOf,
  impact,
  lineage,
  listPlans,
  planContent,
  searchDecisions,
  LOW_CONFIDENCE,
  type FoundDecision,
  type PlanFilters,
  type DecisionDetail,
  type DecisionRef,
  type DecisionToday,
  type PlanContent,
  type PlanInfo,
} from "./model";
import { Outline } from "./outline";
import { decisionLink, renderDecision, renderWalk, type PanelActions } from "./panel";
import { readView, writeView } from "./view";

function byId<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

const ui = {
  status: byId<HTMLParagraphElement>("status"),
  token: byId<HTMLInputElement>("token"),
  tokenForm: byId<HTMLFormElement>("token-form"),
  search: byId<HTMLInputElement>("search"),
  decisionSearch: byId<HTMLInputElement>("decision-search"),
  decisionResults: byId<HTMLUListElement>("decision-results"),
  planSort: byId<HTMLSelectElement>("plan-sort"),
  planProject: byId<HTMLInputElement>("plan-project"),
  onlyCorrected: byId<HTMLInputElement>("only-corrected"),
  onlyPending: byId<HTMLInputElement>("only-pending"),
  onlyUnsure: byId<HTMLInputElement>("only-unsure"),
  planList: byId<HTMLUListElement>("plan-list"),
  slider: byId<HTMLInputElement>("slider"),
  moment: byId<HTMLOutputElement>("moment"),
  toNow: byId<HTMLButtonElement>("to-now"),
  exportScope: byId<HTMLSelectElement>("export-scope"),
  exportFormat: byId<HTMLSelectElement>("export-format"),
  exportFile: byId<HTMLButtonElement>("export-file"),
  exportPng: byId<HTMLButtonElement>("export-png"),
  exportSvg: byId<HTMLButtonElement>("export-svg"),
  legend: byId<HTMLUListElement>("legend"),
  focusOn: byId<HTMLInputElement>("focus-on"),
  focusHops: byId<HTMLInputElement>("focus-hops"),
  panel: byId<HTMLElement>("panel"),
  compare: byId<HTMLElement>("compare"),
  viewer: byId<HTMLParagraphElement>("viewer"),
};

interface Moment {
  at: string;
  what: string;
}

const state = {
  plans: [] as PlanInfo[], // the plans listed: the first pages of those matching the search
  plansTotal: 0, // how many match in all
  plansNext: null as string | null, // where the next page starts
  top: null as string | null, // the open hierarchy's top plan
  hierarchy: [] as PlanInfo[],
  expanded: new Set<string>(),
  content: new Map<string, PlanContent>(),
  moments: new Map<string, Moment>(), // the hierarchy's history, from what has been read of it at "now"
  asOf: null as string | null,
  selected: null as string | null,
  detail: null as DecisionDetail | null, // the selected decision as it stood at the moment shown
  today: null as DecisionToday | null, // what became of it by now
  highlight: null as { kind: Highlight; decisions: Set<string>; plans: Set<string> } | null,
  compare: null as string | null, // the correction shown beside its replay
  viewer: null as Viewer | null, // who the token is, and what it may do
};

let busy = 0;
async function working<T>(task: () => Promise<T>): Promise<T | undefined> {
  busy += 1;
  document.body.dataset.busy = "true";
  try {
    return await task();
  } catch (error) {
    report(error);
    return undefined;
  } finally {
    busy -= 1;
    if (!busy) document.body.dataset.busy = "false";
  }
}

function say(message: string): void {
  ui.status.textContent = message;
}

function report(error: unknown): void {
  if (error instanceof ApiError && error.code === "UNAUTHENTICATED") {
    say("This server needs a token: paste yours above.");
    ui.token.focus();
  } else if (error instanceof ApiError && error.code === "FORBIDDEN") {
    say(`Your token may not do that: ${error.message}`);
  } else {
    say(error instanceof Error ? error.message : String(error));
  }
}

const graph = new GraphView(
  byId("graph"),
  (id) => void selectDecision(id),
  (id) => void togglePlan(id),
);
const outline = new Outline(byId<HTMLUListElement>("outline"), {
  togglePlan: (id) => void togglePlan(id),
  selectDecision: (id) => void selectDecision(id),
});
const live = new Live(
  (event) => onEvent(event),
  (planId) => onLost(planId),
);

// ---- find ------------------------------------------------------------------------------------------

function renderPlanList(): void {
  const items = state.plans.map((p) => {
    const item = document.createElement("li");
    const open = document.createElement("button");
    open.type = "button";
    open.dataset.planId = p.id;
    if (state.hierarchy.some((h) => h.id === p.id)) open.setAttribute("aria-current", "true");
    const title = document.createElement("strong");
    title.textContent = planName(p);
    const meta = document.createElement("small");
    const facts = [p.phase.toLowerCase(), `${p.size} decisions`, p.project ? `project ${p.project}` : "", p.parentPlanId ? "child plan" : ""];
    if (p.invalidatedAt) facts.push("invalidated");
    meta.textContent = `${facts.filter(Boolean).join(" · ")}\n${p.id}`;
    if (p.invalidatedAt) item.classList.add("invalidated");
    open.append(title, meta);
    open.addEventListener("click", () => void working(() => openHierarchy(p.id)));
    item.append(open);
    return item;
  });
  ui.planList.replaceChildren(...items);
  if (!state.plans.length) {
    const none = document.createElement("li");
    none.className = "none";
    none.textContent = ui.search.value.trim() ? "No plan matches." : "No plans you may see.";
    ui.planList.append(none);
  }
  if (state.plansNext) {
    const more = document.createElement("li");
    more.className = "more";
    const button = document.createElement("button");
    button.type = "button";
    button.id = "more-plans";
    button.textContent = `Show more (${state.plans.length} of ${state.plansTotal})`;
    button.addEventListener("click", () => void working(() => loadPlans(true)));
    more.append(button);
    ui.planList.append(more);
  }
}

function planFilters(): PlanFilters {
  return {
    newestFirst: ui.planSort.value !== "oldest",
    project: ui.planProject.value.trim() || null,
    hasCorrections: ui.onlyCorrected.checked || null,
    hasPendingReviews: ui.onlyPending.checked || null,
    maxConfidence: ui.onlyUnsure.checked ? LOW_CONFIDENCE : null,
  };
}

/** The first page of the plans matching the search box and filters (the server searches), or the next page. */
async function loadPlans(more = false): Promise<void> {
  const search = ui.search.value.trim() || null;
  const filters = planFilters();
  const asked = JSON.stringify([search, filters]);
  const page = await listPlans(search, filters, more ? state.plansNext : null);
  if (asked !== JSON.stringify([ui.search.value.trim() || null, planFilters()])) return; // changed meanwhile: a newer list follows
  state.plans = more ? [...state.plans, ...page.plans] : page.plans;
  state.plansTotal = page.total;
  state.plansNext = page.next;
  renderPlanList();
  say(`${page.total} plan(s)${search ? ` matching “${search}”` : ""}.`);
}

/** Decisions across plans matching the decision search box (words or an id), best first. */
async function findDecisions(): Promise<void> {
  const text = ui.decisionSearch.value.trim();
  if (!text) {
    ui.decisionResults.replaceChildren();
    return;
  }
  const { found, total } = await searchDecisions(text);
  if (text !== ui.decisionSearch.value.trim()) return; // typed on meanwhile
  const items = found.map((d: FoundDecision) => {
    const item = document.createElement("li");
    const open = document.createElement("button");
    open.type = "button";
    open.dataset.decisionId = d.id;
    open.title = d.id;
    const caption = document.createElement("strong");
    caption.textContent = decisionCaption(d, d.plan);
    const where = document.createElement("small");
    where.textContent = `${d.question} · in ${planName(d.plan)}${d.status === "SUPERSEDED" ? " · superseded" : ""}`;
    open.append(caption, where);
    open.addEventListener("click", () => void openDecision(d.id, d.planId));
    item.append(open);
    return item;
  });
  if (!items.length) {
    const none = document.createElement("li");
    none.className = "none";
    none.textContent = "No decision matches.";
    items.push(none);
  }
  ui.decisionResults.replaceChildren(...items);
  say(`${total} decision(s) matching “${text}”.`);
}

/** A decision found: its hierarchy opened with its plan open, and the decision in the panel. */
async function openDecision(decisionId: string, planId: string): Promise<void> {
  await working(async () => {
    if (!state.hierarchy.some((p) => p.id === planId)) await openHierarchy(planId, [planId]);
    await selectDecision(decisionId);
  });
}

// ---- see -------------------------------------------------------------------------------------------

function hiddenPlans(): Set<string> {
  // At a past moment, plans instantiated after it did not exist yet.
  const at = state.asOf ? Date.parse(state.asOf) : Infinity;
  return new Set(state.hierarchy.filter((p) => Date.parse(p.createdAt) > at).map((p) => p.id));
}

function dependencies(): Dependency[] {
  const found: Dependency[] = [];
  for (const content of state.content.values()) {
    for (const d of content.decisions) for (const to of d.dependsOn) found.push({ from: { id: d.id, planId: d.planId }, to });
  }
  return found;
}

function renderOutline(): void {
  outline.render({
    plans: state.hierarchy,
    hidden: hiddenPlans(),
    expanded: state.expanded,
    content: state.content,
    selected: state.selected,
    highlight: state.highlight,
  });
}

function share(): void {
  writeView({ plan: state.top, open: [...state.expanded], decision: state.selected, asOf: state.asOf, compare: state.compare });
}

async function openHierarchy(planId: string, open: string[] = []): Promise<void> {
  const plans = await hierarchyOf(planId);
  if (!plans.length) {
    say(`No plan ${planId} that you may see.`);
    return;
  }
  state.top = plans[0].id;
  state.hierarchy = plans;
  hideComparison();
  state.expanded.clear();
  state.content.clear();
  state.moments.clear();
  state.selected = null;
  state.detail = null;
  state.highlight = null;
  for (const p of plans) addMoment(p.createdAt, `plan instantiated: ${planName(p)}`);
  graph.showPlans(plans);
  graph.setHiddenPlans(hiddenPlans());
  live.stop();
  live.follow(plans.map((p) => p.id));
  for (const id of open) if (plans.some((p) => p.id === id)) await expand(id);
  renderPlanList();
  renderOutline();
  renderTimeline();
  ui.panel.replaceChildren(hint("Click a decision, or open a plan first (click it, or Right arrow in the outline)."));
  share();
  say(`Hierarchy of ${plans.length} plan(s), ${plans.reduce((n, p) => n + p.size, 0)} decisions; plans are collapsed.`);
}

function hint(text: string): HTMLParagraphElement {
  const p = document.createElement("p");
  p.className = "hint";
  p.textContent = text;
  return p;
}

async function fetchContent(planId: string): Promise<PlanContent> {
  const [shown, now] = await Promise.all([
    planContent(planId, state.asOf),
    state.asOf === null ? Promise.resolve(null) : planContent(planId, null),
  ]);
  for (const d of (now ?? shown).decisions) {
    addMoment(d.createdAt, `#${d.sequenceNumber} ${typeName(d.decisionType)} recorded${d.isCorrection ? " (a correction)" : ""}`);
    if (d.supersededAt) addMoment(d.supersededAt, `#${d.sequenceNumber} superseded`);
  }
  for (const r of (now ?? shown).reviews) {
    addMoment(r.createdAt, `review asked: ${typeName(r.decisionType)}`);
    if (r.resolvedAt) addMoment(r.resolvedAt, `review ${r.status.toLowerCase().replace(/_/g, " ")}`);
  }
  return shown;
}

async function expand(planId: string): Promise<void> {
  const content = await fetchContent(planId);
  state.content.set(planId, content);
  state.expanded.add(planId);
  graph.expand(planId, content.decisions, content.pending);
  graph.setLinks(state.hierarchy, dependencies());
  graph.reveal(planId);
  if (ui.focusOn.checked) refocus();
}

async function togglePlan(planId: string): Promise<void> {
  await working(async () => {
    if (state.expanded.has(planId)) {
      state.expanded.delete(planId);
      state.content.delete(planId);
      graph.collapse(planId);
      graph.setLinks(state.hierarchy, dependencies());
    } else {
      await expand(planId);
      const n = state.content.get(planId)?.decisions.length ?? 0;
      say(`Plan opened: ${n} decision(s).`);
    }
    applyHighlight();
    renderOutline();
    renderTimeline();
    share();
  });
}

// ---- question --------------------------------------------------------------------------------------

const panelActions: PanelActions = {
  lineage: () => void showLineage(),
  impact: () => void showImpact(),
  invalidationPath: () => void showInvalidationPath(),
  showMoment: (moment) => void travel(moment),
  clearHighlight: () => {
    state.highlight = null;
    applyHighlight();
    renderOutline();
  },
  select: (other) => void selectDecision(other),
  copied: (id, ok) => say(ok ? `Copied ${id}.` : `Could not copy; the id is ${id}.`),
  compare: (correctionId) => void showComparison(correctionId),
};

/** The moments either side of the correction that superseded the selected decision (by now), if one did. */
function correctedAt(): string[] {
  const today = state.today;
  return [today?.supersededAt, today?.supersededBy?.createdAt].filter((m): m is string => !!m);
}

/** The selected decision in the side panel, as the service read it at the moment shown. */
function showDetail(): void {
  const detail = state.detail;
  if (!detail) return;
  const content = state.content.get(detail.planId);
  const corrected = correctedAt();
  renderDecision(
    ui.panel,
    detail,
    state.today,
    {
      plans: plansById(),
      review: content?.reviews.find((r) => r.decision?.id === detail.id) ?? null,
      waiting: content?.pending.filter((r) => r.parent?.id === detail.id) ?? [],
      before: corrected.length ? momentBefore(corrected) : null,
      asOf: state.asOf,
    },
    panelActions,
  );
  renderActions(
    ui.panel,
    state.viewer,
    {
      id: detail.id,
      planId: detail.planId,
      current: state.today?.status === "CURRENT",
      waiting: state.asOf === null ? (content?.pending.filter((r) => r.parent?.id === detail.id) ?? []) : [],
      plans: plansById(),
    },
    actHooks,
    state.asOf === null,
  );
}

/** Reads the selected decision as of the moment shown; false when it did not exist then (or may not be seen). */
async function readSelected(id: string): Promise<boolean> {
  const { then, today } = await decisionDetail(id, state.asOf);
  state.today = today;
  state.detail = then;
  if (!then) {
    ui.panel.replaceChildren(hint(today ? "Not yet recorded at the moment shown." : `No decision ${id} that you may see.`));
    return today !== null;
  }
  return true;
}

async function selectDecision(id: string): Promise<void> {
  await working(async () => {
    if (!(await readSelected(id))) {
      say(`No decision ${id} that you may see.`);
      return;
    }
    const planId = state.detail?.planId;
    if (planId && !state.expanded.has(planId) && state.hierarchy.some((p) => p.id === planId)) await expand(planId);
    state.selected = id;
    graph.select(id);
    refocus();
    renderOutline();
    outline.reveal(`d:${id}`);
    showDetail();
    share();
  });
}

function applyHighlight(): void {
  const h = state.highlight;
  graph.highlight(h?.kind ?? null, h?.decisions ?? new Set(), h?.plans ?? new Set());
}

function plansById(): Map<string, PlanInfo> {
  return new Map(state.hierarchy.map((p) => [p.id, p]));
}

async function showLineage(): Promise<void> {
  const id = state.selected;
  if (!id) return;
  await working(async () => {
    const walk = await lineage(id, state.asOf);
    const decisions = new Set([id, ...walk.decisions.map((d) => d.id)]);
    state.highlight = { kind: "lineage", decisions, plans: new Set([...walk.plans.map((p) => p.id), ...walk.decisions.map((d) => d.planId)]) };
    applyHighlight();
    renderOutline();
    renderWalk(ui.panel, `Upstream lineage: ${walk.decisions.length} decision(s) it comes from`, null, walk.decisions.length, plansById());
  });
}

async function showImpact(): Promise<void> {
  const id = state.selected;
  if (!id) return;
  await working(async () => {
    const walk = await impact(id, state.asOf);
    state.highlight = {
      kind: "impact",
      decisions: new Set(walk.decisions.map((d) => d.id)),
      plans: new Set([...walk.plans.map((p) => p.id), ...walk.decisions.map((d) => d.planId)]),
    };
    applyHighlight();
    renderOutline();
    renderWalk(ui.panel, "Downstream impact: what correcting it would invalidate", walk, walk.decisions.length, plansById());
  });
}

/** The decisions drawn, by id: for captions where only an id is known. */
function drawnDecisions(): Map<string, DecisionRef> {
  const found = new Map<string, DecisionRef>();
  for (const content of state.content.values()) for (const d of content.decisions) found.set(d.id, d);
  return found;
}

/** For a decision superseded by now: the chain of edges from the corrected decision to it, as the correction walked it. */
async function showInvalidationPath(): Promise<void> {
  const detail = state.detail;
  const today = state.today;
  if (!detail || !today?.supersededAt) return;
  await working(async () => {
    const corrected = today.supersededBy?.correctsDecisionId ?? detail.id;
    const walk = await impact(corrected, momentBefore(correctedAt()));
    const path = walk.paths.find((p) => p.decisionId === detail.id);
    const ids = new Set([corrected, detail.id, ...(path?.steps.map((s) => s.nodeId) ?? [])]);
    state.highlight = { kind: "path", decisions: ids, plans: new Set() };
    applyHighlight();
    renderOutline();
    // Each step by its caption (linked), a plan by its name; an id only for what is not drawn.
    const known = drawnDecisions();
    const plans = plansById();
    const chain = document.createElement("ol");
    chain.className = "path";
    for (const [relationship, nodeId] of [["corrected", corrected], ...(path?.steps.map((s) => [s.relationship, s.nodeId]) ?? [])]) {
      const item = document.createElement("li");
      const ref = known.get(nodeId);
      item.append(`${relationship.toLowerCase().replace(/_/g, " ")}: `);
      if (ref) item.append(decisionLink(ref, plans, panelActions));
      else {
        const plan = plans.get(nodeId);
        item.append(plan ? `plan ${planName(plan)}` : nodeId);
      }
      chain.append(item);
    }
    const correctedRef = known.get(corrected);
    const title = `Invalidated through ${correctedRef ? decisionCaption(correctedRef, plans.get(correctedRef.planId)) : corrected}`;
    renderWalk(ui.panel, title, null, ids.size, plans, chain);
  });
}

// ---- a correction beside its replay -----------------------------------------------------------------

/** Shows the correction ``id`` names (a correction, a corrected decision, or one it superseded) beside its replay. */
async function showComparison(id: string): Promise<void> {
  await working(async () => {
    const comparison = await readComparison(id);
    if (!comparison) {
      say(`No correction of ${id} that you may see.`);
      return;
    }
    state.compare = comparison.correction.id;
    renderComparison(ui.compare, comparison, { select: (other) => void selectDecision(other), close: () => hideComparison(true) });
    ui.compare.hidden = false;
    document.body.classList.add("comparing");
    const shown = comparison.pairs.flatMap((p) => [p.old?.id, p.new?.id]).filter((d): d is string => d !== undefined);
    state.highlight = { kind: "path", decisions: new Set([comparison.correction.id, ...shown]), plans: new Set() };
    applyHighlight();
    renderOutline();
    share();
    say(`Correction beside its replay: ${comparison.pairs.length} row(s).`);
  });
}

/** Gives the drawing its place back (and, closed by the person, the address drops ``compare``). */
function hideComparison(closed = false): void {
  state.compare = null;
  ui.compare.hidden = true;
  ui.compare.replaceChildren();
  document.body.classList.remove("comparing");
  if (closed) share();
  graph.cy.resize();
}

// ---- act -------------------------------------------------------------------------------------------

/** Reads again what an action changed (the plans it touched and every plan open), then selects what it recorded. */
async function afterAction(planIds: string[], select: string | null, message: string): Promise<void> {
  for (const id of [...planIds, ...state.expanded]) changed.add(id);
  window.clearTimeout(refreshing);
  await refresh();
  if (select) await selectDecision(select);
  say(message);
}

const actHooks: ActHooks = {
  run: (task) => working(task).then(() => undefined),
  changed: afterAction,
  preview: (decisions, plans) => {
    state.highlight = { kind: "impact", decisions: new Set(decisions), plans: new Set(plans) };
    applyHighlight();
    renderOutline();
  },
};

async function readWho(): Promise<void> {
  state.viewer = await readViewer();
  ui.viewer.textContent = describeViewer(state.viewer);
  ui.viewer.dataset.may = [...(state.viewer?.may ?? [])].join(" ");
}

// ---- focus ---------------------------------------------------------------------------------------

/** Shows only the selected decision's neighbourhood (N hops up and down, across plans) while Focus is on. */
function refocus(): void {
  const hops = Math.max(1, Math.min(9, Number(ui.focusHops.value) || 1));
  const on = ui.focusOn.checked && state.selected !== null;
  graph.focus(on ? state.selected : null, hops);
  document.body.classList.toggle("focused", on);
}

ui.focusOn.addEventListener("change", () => {
  if (ui.focusOn.checked && !state.selected) say("Select a decision to focus on.");
  refocus();
});
ui.focusHops.addEventListener("change", () => refocus());

// ---- panes -----------------------------------------------------------------------------------------

const PANES_KEY = "decisiontrail.hiddenPanes";
const PANES = ["plans", "outline", "panel"] as const;

function hiddenPanes(): Set<string> {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(PANES_KEY) ?? "[]");
    return new Set(Array.isArray(stored) ? stored.filter((p): p is string => typeof p === "string") : []);
  } catch {
    return new Set();
  }
}

/** Shows each pane as remembered; the drawing takes the room of those hidden. */
function applyPanes(hidden: Set<string>): void {
  for (const pane of PANES) {
    document.body.classList.toggle(`hide-${pane}`, hidden.has(pane));
    byId<HTMLButtonElement>(`toggle-${pane}`).setAttribute("aria-pressed", String(!hidden.has(pane)));
  }
  graph.cy.resize();
}

for (const pane of PANES) {
  byId<HTMLButtonElement>(`toggle-${pane}`).addEventListener("click", () => {
    const hidden = hiddenPanes();
    if (hidden.has(pane)) hidden.delete(pane);
    else hidden.add(pane);
    localStorage.setItem(PANES_KEY, JSON.stringify([...hidden]));
    applyPanes(hidden);
  });
}

// ---- travel in time --------------------------------------------------------------------------------

function addMoment(at: string, what: string): void {
  const known = state.moments.get(at);
  if (known?.what.split("; ").includes(what)) return;
  state.moments.set(at, known ? { at, what: `${known.what}; ${what}` } : { at, what });
}

function timeline(): Moment[] {
  return [...state.moments.values()].sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.at.localeCompare(b.at));
}

/** The last moment of the history strictly before the earliest of ``moments``: the view just before a change. */
function momentBefore(moments: string[]): string {
  const first = Math.min(...moments.map((m) => Date.parse(m)));
  const earlier = timeline().filter((m) => Date.parse(m.at) < first);
  return earlier.at(-1)?.at ?? new Date(first - 1).toISOString();
}

function renderTimeline(): void {
  const moments = timeline();
  ui.slider.max = String(moments.length);
  const index = state.asOf === null ? moments.length : moments.findIndex((m) => m.at === state.asOf);
  ui.slider.value = String(index < 0 ? moments.length : index);
  ui.slider.disabled = !state.top;
  const shown = state.asOf === null ? null : (moments[index] ?? { at: state.asOf, what: "" });
  ui.moment.textContent = shown ? `${new Date(shown.at).toISOString().replace("T", " ").slice(0, 23)} · ${shown.what}` : "now";
  ui.slider.setAttribute("aria-valuetext", shown ? `as of ${shown.at}: ${shown.what}` : "now");
  document.body.classList.toggle("past", state.asOf !== null);
}

async function travel(moment: string | null): Promise<void> {
  await working(async () => {
    state.asOf = moment;
    state.highlight = null;
    const open = [...state.expanded];
    await Promise.all(open.map(async (id) => state.content.set(id, await fetchContent(id))));
    graph.setHiddenPlans(hiddenPlans());
    for (const id of open) {
      const content = state.content.get(id);
      if (content) graph.expand(id, content.decisions, content.pending);
    }
    graph.setLinks(state.hierarchy, dependencies());
    applyHighlight();
    graph.select(state.selected);
    if (state.selected) await readSelected(state.selected);
    refocus();
    showDetail();
    renderOutline();
    renderTimeline();
    share();
    say(moment ? `As of ${moment}.` : "Now.");
  });
}

let sliding = 0;
ui.slider.addEventListener("input", () => {
  const moments = timeline();
  const index = Number(ui.slider.value);
  const moment = index >= moments.length ? null : moments[index].at;
  window.clearTimeout(sliding);
  sliding = window.setTimeout(() => void travel(moment), 120);
});
ui.toNow.addEventListener("click", () => void travel(null));

// ---- live ------------------------------------------------------------------------------------------

const changed = new Set<string>();
let refreshing = 0;

function onEvent(event: DecisionEvent): void {
  addMoment(event.at, `${event.kind.toLowerCase().replace(/_/g, " ")}`);
  changed.add(event.planId);
  window.clearTimeout(refreshing);
  refreshing = window.setTimeout(() => void refresh(), 250);
}

/** What happened to a plan while the page was away could not be replayed: the plan is read again. */
function onLost(planId: string): void {
  changed.add(planId);
  window.clearTimeout(refreshing);
  refreshing = window.setTimeout(() => void refresh(), 250);
}

/** New decisions, reviews and corrections as they are committed; at a past moment only the timeline grows. */
async function refresh(): Promise<void> {
  if (!state.top) return;
  const plans = [...changed];
  changed.clear();
  await working(async () => {
    const hierarchy = await hierarchyOf(state.top ?? "");
    const known = new Set(state.hierarchy.map((p) => p.id));
    state.hierarchy = hierarchy;
    for (const p of hierarchy) {
      if (known.has(p.id)) graph.updatePlan(p);
      else {
        graph.addLatePlan(p);
        addMoment(p.createdAt, `plan instantiated: ${planName(p)}`);
      }
    }
    live.follow(hierarchy.map((p) => p.id));
    if (state.asOf === null) {
      for (const id of plans) {
        if (!state.expanded.has(id)) continue;
        const content = await fetchContent(id);
        state.content.set(id, content);
        graph.expand(id, content.decisions, content.pending);
      }
    }
    graph.setHiddenPlans(hiddenPlans());
    graph.setLinks(state.hierarchy, dependencies());
    applyHighlight();
    graph.select(state.selected);
    renderOutline();
    renderTimeline();
    say(state.asOf === null ? "Updated live." : "New changes arrived: press Now to see them.");
  });
}

// ---- share and take away ---------------------------------------------------------------------------

function download(blob: Blob, name: string): void {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/** What the export menu offers: each format the /export routes write (exports.ExportFormat), and its name. */
const EXPORT_FORMATS: readonly (readonly [string, string])[] = [
  ["graphml", "GraphML"],
  ["dot", "DOT (Graphviz)"],
  ["cyjs", "Cytoscape JSON"],
  ["json", "node-link JSON"],
  ["gexf", "GEXF (Gephi)"],
  ["prov.json", "PROV-JSON"],
];
ui.exportFormat.replaceChildren(...EXPORT_FORMATS.map(([format, name]) => new Option(name, format)));

ui.exportFile.addEventListener("click", () => {
  void working(async () => {
    const format = ui.exportFormat.value;
    const scope = ui.exportScope.value;
    const selected = state.selected;
    let path: string;
    if (scope === "hierarchy" || (scope === "plan" && !state.detail)) {
      if (!state.top) throw new Error("Open a plan first.");
      path = `/export/plans/${state.top}.${format}?scope=${scope === "hierarchy" ? "hierarchy" : "plan"}`;
    } else if (scope === "plan") {
      path = `/export/plans/${state.detail?.planId}.${format}?scope=plan`;
    } else {
      if (!selected) throw new Error("Select a decision first.");
      path = `/export/decisions/${selected}/${scope}.${format}`;
    }
    if (state.asOf) path += `${path.includes("?") ? "&" : "?"}asOf=${encodeURIComponent(state.asOf)}`;
    const blob = await exported(path);
    download(blob, `${path.split("/").slice(-2).join("-").split("?")[0]}`);
    say(`Downloaded ${format} (${blob.size} bytes).`);
  });
});
ui.exportPng.addEventListener("click", () => download(graph.png(), `decisiontrail-${state.top ?? "view"}.png`));
ui.exportSvg.addEventListener("click", () => download(graph.svg(), `decisiontrail-${state.top ?? "view"}.svg`));

// ---- start -----------------------------------------------------------------------------------------

function renderLegend(): void {
  const entries = Object.entries(TYPE_COLOURS).map(([type, colour]) => {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.setProperty("background-color", colour);
    item.append(swatch, typeName(type));
    return item;
  });
  const extra = [
    ["swatch ghost", "superseded"],
    ["swatch pending", "review pending"],
    ["swatch correction", "correction"],
    ["line depends", "depends on"],
    ["line spawn", "spawned plan"],
  ].map(([className, text]) => {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = className;
    item.append(swatch, text);
    return item;
  });
  ui.legend.replaceChildren(...entries, ...extra);
}

/** Runs ``task`` a moment after the typing stops, counting the page busy from the first key. */
function debounced(task: () => Promise<void>): () => void {
  let timer = 0;
  return () => {
    if (!timer) {
      busy += 1;
      document.body.dataset.busy = "true";
    }
    window.clearTimeout(timer);
    timer = window.setTimeout(() => {
      timer = 0;
      void working(task).finally(() => {
        busy -= 1;
        if (!busy) document.body.dataset.busy = "false";
      });
    }, 200);
  };
}
// The lists are searched on the server a moment after the typing stops; the page counts as busy from
// the first key, so nothing (a person or a test) takes the old list for the answer.
const relist = debounced(() => loadPlans());
ui.search.addEventListener("input", relist);
for (const control of [ui.planSort, ui.onlyCorrected, ui.onlyPending, ui.onlyUnsure]) control.addEventListener("change", relist);
ui.planProject.addEventListener("input", relist);
ui.decisionSearch.addEventListener("input", debounced(findDecisions));
ui.tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  storeToken(ui.token.value.trim());
  ui.token.value = "";
  ui.token.placeholder = storedToken() ? "token stored for this tab" : "none needed locally";
  live.stop();
  state.top = null;
  state.hierarchy = [];
  graph.clear();
  renderOutline();
  void working(start);
});

async function start(): Promise<void> {
  await working(() => loadPlans());
  await working(readWho);
  const view = readView();
  // A decision (or a correction to compare) named alone opens its plan's hierarchy with its plan open.
  const named = view.decision ?? view.compare;
  const plan = view.plan ?? (named ? await planOfDecision(named) : null);
  if (!plan) {
    if (named) say(`No decision ${named} that you may see.`);
    return;
  }
  const open = view.plan ? view.open : [plan];
  state.asOf = view.asOf;
  await openHierarchy(plan, open);
  if (view.decision) await selectDecision(view.decision);
  if (view.compare) await showComparison(view.compare);
  renderTimeline();
}

declare global {
  interface Window {
    decisiontrailExplorer: {
      graph: () => ReturnType<GraphView["summary"]>;
      legibility: () => ReturnType<GraphView["legibility"]>;
      position: (decisionId: string) => { x: number; y: number } | null;
      reconnectAfter: (planId: string, cursor: string) => void;
    };
  }
}
// For the browser tests and the benchmark: what is drawn, node by node; a lost connection.
window.decisiontrailExplorer = {
  graph: () => graph.summary(),
  legibility: () => graph.legibility(),
  position: (id) => graph.clientPosition(id),
  reconnectAfter: (planId, cursor) => live.reconnectAfter(planId, cursor),
};

ui.token.placeholder = storedToken() ? "token stored for this tab" : "none needed locally";
renderLegend();
renderTimeline();
applyPanes(hiddenPanes());
void working(start);
