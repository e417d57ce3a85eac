// A correction beside its replay: what it superseded and what replaced it, decision by decision, across child plans.

import { query } from "./api";
import { decisionCaption, planName, typeName } from "./caption";
import { hierarchyOf, type PlanInfo } from "./model";

/** One correction attempt as the API keeps it (``CorrectionAttempt``). */
export interface Attempt {
  attemptId: string;
  attemptNumber: number;
  mode: string;
  guidance: string;
  reason: string;
  requestedBy: string;
  at: string;
  replayOutcome: string;
  replayDetail: string | null;
  originalDecisionId: string;
  correctedDecisionId: string;
  correctionDecisionId: string;
  replayedDecisionIds: string[];
  invalidatedDecisionCount: number;
  invalidatedPlanCount: number;
}

const ATTEMPT_FIELDS = `attemptId attemptNumber mode guidance reason requestedBy at replayOutcome replayDetail originalDecisionId
  correctedDecisionId correctionDecisionId replayedDecisionIds invalidatedDecisionCount invalidatedPlanCount`;

interface Ref {
  id: string;
  planId: string;
  parentDecisionId: string | null;
  sequenceNumber: number;
  decisionType: string;
  question: string;
  chosenOption: string;
}

/** A decision as the comparison shows it: what may change between the superseded branch and its replay. */
export interface Compared extends Ref {
  confidenceScore: number | null;
  rationale: string;
  dependsOn: Ref[];
}

const REF = "id planId parentDecisionId sequenceNumber decisionType question chosenOption";
const COMPARED = `${REF} confidenceScore rationale dependsOn { ${REF} }`;

export type PairKind = "changed" | "same" | "removed" | "added";

export interface Pair {
  old: Compared | null;
  new: Compared | null;
  kind: PairKind;
  /** The fields that differ (for a pair): question, chosen option, confidence, rationale, depends on, type. */
  changed: Set<string>;
}

export interface Comparison {
  attempt: Attempt;
  correction: Compared;
  pairs: Pair[];
  plans: Map<string, PlanInfo>;
  /** The child plans the correction invalidated, and those the replay spawned anew. */
  invalidatedPlans: string[];
  newPlans: string[];
}

/**
 * The attempt that ``id`` names: a correction decision's own attempt; for a corrected decision, its
 * latest; for a decision a correction superseded, that correction's. Null when there is none the
 * caller may see.
 */
async function attemptOf(id: string, hops = 0): Promise<Attempt | null> {
  const data = await query<{
    decision: { id: string; isCorrection: boolean; supersededById: string | null; corrections: Attempt[] } | null;
  }>(`query Attempts($id: ID!) { decision(id: $id) { id isCorrection supersededById corrections { ${ATTEMPT_FIELDS} } } }`, { id });
  const d = data.decision;
  if (!d) return null;
  const own = d.isCorrection ? d.corrections.find((a) => a.correctionDecisionId === id) : undefined;
  const made = d.corrections.filter((a) => a.correctedDecisionId === id).at(-1);
  const found = own ?? made ?? null;
  if (found || hops > 0 || !d.supersededById) return found;
  return attemptOf(d.supersededById, hops + 1);
}

/** Several decisions by id in one request (aliases), those the caller may see, in the order asked. */
async function decisions(ids: string[]): Promise<Compared[]> {
  if (!ids.length) return [];
  const params = ids.map((_, i) => `$d${i}: ID!`).join(", ");
  const fields = ids.map((_, i) => `d${i}: decision(id: $d${i}) { ${COMPARED} }`).join("\n");
  const data = await query<Record<string, Compared | null>>(
    `query Decisions(${params}) { ${fields} }`,
    Object.fromEntries(ids.map((id, i) => [`d${i}`, id])),
  );
  return ids.map((_, i) => data[`d${i}`]).filter((d): d is Compared => d !== null);
}

/** Every decision of the given plans (as they stand now), 100 at a time. */
async function planDecisions(planIds: string[]): Promise<Compared[]> {
  const found: Compared[] = [];
  for (const planId of planIds) {
    let after: string | null = null;
    for (;;) {
      const page: {
        plan: { decisions: { nodes: Compared[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null;
      } = await query(
        `query PlanDecisions($id: ID!, $after: String) { plan(id: $id) { decisions(first: 100, after: $after) {
          nodes { ${COMPARED} } pageInfo { hasNextPage endCursor } } } }`,
        { id: planId, after },
      );
      if (!page.plan) break;
      found.push(...page.plan.decisions.nodes);
      if (!page.plan.decisions.pageInfo.hasNextPage) break;
      after = page.plan.decisions.pageInfo.endCursor;
    }
  }
  return found;
}

/** The plans the given decisions spawned (their children: the caller reads those plans to go deeper). */
function spawnedBy(by: Set<string>, plans: PlanInfo[]): string[] {
  return plans.filter((p) => p.spawnedById !== null && by.has(p.spawnedById)).map((p) => p.id);
}

/**
 * Reads a correction and its replay: the superseded branch (``impact`` of the corrected decision
 * just before the correction, across child plans) and what replaced it (the replay's decisions and
 * the decisions of the plans they spawned), paired position by position.
 */
export async function readComparison(id: string): Promise<Comparison | null> {
  const attempt = await attemptOf(id);
  if (!attempt) return null;
  const [correction] = await decisions([attempt.correctionDecisionId]);
  if (!correction) return null;
  const before = new Date(Date.parse(attempt.at) - 1).toISOString();
  const walk = await query<{ impact: { decisions: { id: string }[]; plans: { id: string }[] } }>(
    `query Superseded($id: ID!, $asOf: DateTime) { impact(decisionId: $id, asOf: $asOf) { decisions { id } plans { id } } }`,
    { id: attempt.correctedDecisionId, asOf: before },
  );
  const oldIds = [attempt.correctedDecisionId, ...walk.impact.decisions.map((d) => d.id).filter((d) => d !== attempt.correctedDecisionId)];
  const hierarchy = await hierarchyOf(correction.planId);
  const plans = new Map(hierarchy.map((p) => [p.id, p]));
  // The replay's decisions, and every decision of the child plans they spawned, at any depth.
  const replayed = await decisions(attempt.replayedDecisionIds);
  const newPlans: string[] = [];
  let spawners = new Set(replayed.map((d) => d.id));
  const fromNewPlans: Compared[] = [];
  while (spawners.size) {
    const below = spawnedBy(spawners, hierarchy).filter((p) => !newPlans.includes(p));
    newPlans.push(...below);
    const read = await planDecisions(below);
    fromNewPlans.push(...read);
    spawners = new Set(read.map((d) => d.id));
  }
  const seen = new Set(replayed.map((d) => d.id));
  const replacing = [...replayed, ...fromNewPlans.filter((d) => !seen.has(d.id))];
  const superseded = (await decisions(oldIds)).filter((d) => !seen.has(d.id));
  return {
    attempt,
    correction,
    pairs: pairUp(superseded, replacing, correction, attempt.correctedDecisionId, plans),
    plans,
    invalidatedPlans: walk.impact.plans.map((p) => p.id),
    newPlans,
  };
}

function planDepth(planId: string, plans: Map<string, PlanInfo>): number {
  let depth = 0;
  for (let p = plans.get(planId); p?.parentPlanId; p = plans.get(p.parentPlanId)) depth += 1;
  return depth;
}

/**
 * The pairing rule (docs/explorer.md, "A correction beside its replay"): taken in plan depth then
 * recording order, a superseded decision pairs with the first unpaired replacement at its place in
 * the plan (under the same parent: for the top of the superseded branch its own parent, or the
 * correction; below it, the replacement of its parent; a child plan's root, the root of the plan the
 * replacement of its spawning decision spawned) of the same decision type, and the same question
 * if one has it. The corrected decision, if nothing took its place, pairs with the correction
 * itself. What is left is removed (left) or added (right).
 */
export function pairUp(
  superseded: Compared[],
  replacing: Compared[],
  correction: Compared,
  correctedId: string,
  plans: Map<string, PlanInfo>,
): Pair[] {
  const order = (a: Compared, b: Compared): number =>
    planDepth(a.planId, plans) - planDepth(b.planId, plans) || a.sequenceNumber - b.sequenceNumber || a.id.localeCompare(b.id);
  const olds = [...superseded].sort(order);
  const news = [...replacing].sort(order);
  const oldIds = new Set(olds.map((d) => d.id));
  const replacedBy = new Map<string, Compared>();
  const taken = new Set<string>();
  for (const old of olds) {
    let places: (d: Compared) => boolean;
    if (old.parentDecisionId === null) {
      const spawner = plans.get(old.planId)?.spawnedById ?? null;
      const spawnerNow = spawner ? replacedBy.get(spawner)?.id : undefined;
      places = (d) => d.parentDecisionId === null && spawnerNow !== undefined && plans.get(d.planId)?.spawnedById === spawnerNow;
    } else if (oldIds.has(old.parentDecisionId)) {
      const parentNow = replacedBy.get(old.parentDecisionId)?.id;
      places = (d) => parentNow !== undefined && d.parentDecisionId === parentNow;
    } else {
      const parent = old.parentDecisionId;
      places = (d) => d.parentDecisionId === parent || d.parentDecisionId === correction.id;
    }
    const free = news.filter((d) => !taken.has(d.id) && places(d) && d.decisionType === old.decisionType);
    const match = free.find((d) => d.question === old.question) ?? free[0];
    if (match) {
      replacedBy.set(old.id, match);
      taken.add(match.id);
    }
  }
  if (!replacedBy.has(correctedId) && oldIds.has(correctedId)) replacedBy.set(correctedId, correction);
  const mapped = (id: string): string => replacedBy.get(id)?.id ?? id;
  const pairs: Pair[] = [];
  for (const old of olds) {
    const now = replacedBy.get(old.id) ?? null;
    if (!now) {
      pairs.push({ old, new: null, kind: "removed", changed: new Set() });
      continue;
    }
    const changed = new Set<string>();
    if (old.decisionType !== now.decisionType) changed.add("type");
    if (old.question !== now.question) changed.add("question");
    if (old.chosenOption !== now.chosenOption) changed.add("chosen option");
    if (old.confidenceScore !== now.confidenceScore) changed.add("confidence");
    if (old.rationale !== now.rationale) changed.add("rationale");
    const before = old.dependsOn.map((d) => mapped(d.id)).sort();
    const after = now.dependsOn.map((d) => d.id).sort();
    if (before.join() !== after.join()) changed.add("depends on");
    pairs.push({ old, new: now, kind: changed.size ? "changed" : "same", changed });
  }
  for (const now of news) if (!taken.has(now.id)) pairs.push({ old: null, new: now, kind: "added", changed: new Set() });
  return pairs;
}

// ---- the view ----------------------------------------------------------------------------------------

export interface CompareActions {
  select(decisionId: string): void;
  close(): void;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  if (text !== undefined) made.textContent = text;
  if (className) made.className = className;
  return made;
}

function when(moment: string): string {
  return new Date(moment).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

const FIELDS: [string, (d: Compared) => string][] = [
  ["question", (d) => d.question],
  ["chosen option", (d) => d.chosenOption],
  ["confidence", (d) => (d.confidenceScore === null ? "not scored" : d.confidenceScore.toFixed(2))],
  ["rationale", (d) => d.rationale],
];

function card(d: Compared, pair: Pair, side: "old" | "new", comparison: Comparison, actions: CompareActions): HTMLElement {
  const box = element("div", undefined, "card");
  const plan = comparison.plans.get(d.planId);
  const link = element("button", decisionCaption(d, plan, 80), "link");
  link.type = "button";
  link.dataset.id = d.id;
  link.title = d.id;
  link.addEventListener("click", () => actions.select(d.id));
  const heading = element("p", undefined, "caption");
  heading.append(link);
  if (d.id === comparison.correction.id) heading.append(element("span", " (the correction)", "note"));
  if (pair.changed.has("type")) heading.classList.add("changed");
  box.append(heading);
  const list = element("dl");
  const rows: [string, string | Node][] = FIELDS.map(([name, read]) => [name, read(d)]);
  const deps = d.dependsOn.length ? element("ul") : "nothing";
  if (typeof deps !== "string") {
    for (const dep of d.dependsOn) deps.append(element("li", decisionCaption(dep, comparison.plans.get(dep.planId))));
  }
  rows.push(["depends on", deps]);
  for (const [name, value] of rows) {
    const term = element("dt", name);
    const definition = element("dd");
    definition.dataset.field = name;
    definition.append(value);
    if (pair.changed.has(name)) {
      definition.dataset.changed = "true";
      term.dataset.changed = "true";
    }
    list.append(term, definition);
  }
  box.append(list);
  box.dataset.side = side;
  return box;
}

/** Draws the comparison into ``section``: the correction, then a row per pair, grouped by plan. */
export function renderComparison(section: HTMLElement, comparison: Comparison, actions: CompareActions): void {
  const { attempt, correction, pairs, plans } = comparison;
  const header = element("div", undefined, "compare-head");
  const title = element("h2", `Correction ${decisionCaption(correction, plans.get(correction.planId))}, beside its replay`);
  title.id = "compare-title";
  section.setAttribute("aria-labelledby", title.id);
  const close = element("button", "Close the comparison", "close");
  close.type = "button";
  close.dataset.action = "close-compare";
  close.addEventListener("click", actions.close);
  header.append(title, close);
  const counts = { changed: 0, same: 0, removed: 0, added: 0 };
  for (const p of pairs) counts[p.kind] += 1;
  const summary = element(
    "p",
    `Attempt ${attempt.attemptNumber} (${attempt.mode.toLowerCase()}) by ${attempt.requestedBy} at ${when(attempt.at)}: ` +
      `“${attempt.guidance}”${attempt.reason ? ` because ${attempt.reason}` : ""}. Replay ${attempt.replayOutcome.toLowerCase()}` +
      `${attempt.replayDetail ? ` (${attempt.replayDetail})` : ""}.`,
    "summary",
  );
  const tally = element(
    "p",
    `${counts.changed} changed, ${counts.same} unchanged, ${counts.removed} removed (not made again), ${counts.added} added by the replay; ` +
      `${comparison.invalidatedPlans.length} child plan(s) invalidated, ${comparison.newPlans.length} spawned anew.`,
    "tally",
  );
  tally.dataset.changed = String(counts.changed);
  tally.dataset.removed = String(counts.removed);
  tally.dataset.added = String(counts.added);
  const table = element("table", undefined, "compare");
  const head = element("thead");
  const headRow = element("tr");
  headRow.append(element("th", "Superseded by the correction"), element("th", "What replaced it"));
  head.append(headRow);
  const body = element("tbody");
  let lastOld: string | undefined;
  let lastNew: string | undefined;
  for (const pair of pairs) {
    const oldPlan = pair.old ? plans.get(pair.old.planId) : undefined;
    const newPlan = pair.new ? plans.get(pair.new.planId) : undefined;
    // A plan heading where either side moves to another plan (a side left empty stays where it was).
    if ((pair.old && pair.old.planId !== lastOld) || (pair.new && pair.new.planId !== lastNew)) {
      lastOld = pair.old?.planId ?? lastOld;
      lastNew = pair.new?.planId ?? lastNew;
      const planRow = element("tr", undefined, "plan-row");
      const name = (p: PlanInfo | undefined, id: string | undefined): string =>
        id === undefined ? "" : `in ${p ? planName(p) : id}${p?.invalidatedAt ? " (invalidated)" : ""}`;
      planRow.append(element("th", name(oldPlan, pair.old?.planId)), element("th", name(newPlan, pair.new?.planId)));
      body.append(planRow);
    }
    const row = element("tr", undefined, `pair ${pair.kind}`);
    row.dataset.kind = pair.kind;
    if (pair.old) row.dataset.old = pair.old.id;
    if (pair.new) row.dataset.new = pair.new.id;
    if (pair.changed.size) row.dataset.changes = [...pair.changed].join(",");
    const left = element("td", undefined, "old");
    const right = element("td", undefined, "new");
    if (pair.old) left.append(card(pair.old, pair, "old", comparison, actions));
    else left.append(element("p", "nothing here before: added by the replay", "absent"));
    if (pair.new) right.append(card(pair.new, pair, "new", comparison, actions));
    else right.append(element("p", `removed: the replay made no ${typeName(pair.old?.decisionType ?? "")} here`, "absent"));
    row.append(left, right);
    body.append(row);
  }
  table.append(head, body);
  section.replaceChildren(header, summary, tally, table);
}
