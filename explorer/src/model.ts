// What the page reads from the API: the records it keeps and the queries that fetch them.

import { query } from "./api";

export interface PlanInfo {
  id: string;
  description: string;
  phase: string;
  project: string | null;
  createdAt: string;
  invalidatedAt: string | null;
  parentPlanId: string | null;
  spawnedById: string | null;
  size: number;
  /** The span an imported (OTLP) plan was read from (its ``arguments.otlp.span_name``); null for a plan recorded here. */
  spanName: string | null;
  /** What a closed plan's card says beside its size; read for the open hierarchy only (null in the plan list). */
  summary: PlanSummary | null;
}

/** What an analyst scans a closed plan for, as things stand now. */
export interface PlanSummary {
  /** Its decisions superseded (by a correction, or a correction upstream). */
  superseded: number;
  /** Reviews waiting under its decisions. */
  pendingReviews: number;
  /** Its current decisions of a confidence at most LOW_CONFIDENCE: what the plan list's filter finds. */
  lowConfidence: number;
}

/** What counts as low confidence: the plan list's filter and the cards' count. */
export const LOW_CONFIDENCE = 0.6;

export interface DecisionInfo {
  id: string;
  planId: string;
  parentDecisionId: string | null;
  sequenceNumber: number;
  decisionType: string;
  question: string;
  chosenOption: string;
  createdAt: string;
  supersededAt: string | null;
  supersededById: string | null;
  isCorrection: boolean;
  correctsDecisionId: string | null;
  dependsOn: { id: string; planId: string }[];
  /** Whether it was superseded at the moment shown (not necessarily now). */
  superseded: boolean;
}

export interface ReviewInfo {
  id: string;
  planId: string;
  status: string;
  decisionType: string;
  question: string;
  chosenOption: string;
  confidenceScore: number | null;
  threshold: number;
  reason: string;
  createdAt: string;
  resolvedAt: string | null;
  resolvedBy: string | null;
  parent: { id: string } | null;
  decision: { id: string } | null;
}

/** A plan's content at one moment: its decisions (superseded ones included) and the reviews pending then. */
export interface PlanContent {
  decisions: DecisionInfo[];
  pending: ReviewInfo[];
  reviews: ReviewInfo[];
}

const PLAN_FIELDS = `id description arguments phase project createdAt invalidatedAt parentPlan { id } spawnedBy { id } decisions(first: 1) { totalCount }`;

/** A plan's counts for its card, beside PLAN_FIELDS: each a ``Plan.decisions`` filter the API already has. */
const SUMMARY_FIELDS = `superseded: decisions(first: 1, filter: {status: SUPERSEDED}) { totalCount }
  unsure: decisions(first: 1, filter: {status: CURRENT, maxConfidence: ${LOW_CONFIDENCE}}) { totalCount }`;

/** A plan as PLAN_FIELDS asks for it: PlanInfo's own fields, and its relations as the API nests them. */
interface RawPlan extends Omit<PlanInfo, "parentPlanId" | "spawnedById" | "size" | "spanName" | "summary"> {
  arguments: unknown;
  parentPlan: { id: string } | null;
  spawnedBy: { id: string } | null;
  decisions: { totalCount: number };
  superseded?: { totalCount: number };
  unsure?: { totalCount: number };
}

/** The span name an imported plan keeps in its arguments (``{"otlp": {"span_name": ...}}``), if any. */
export function spanNameOf(args: unknown): string | null {
  const otlp = typeof args === "object" && args !== null ? (args as { otlp?: unknown }).otlp : undefined;
  const name = typeof otlp === "object" && otlp !== null ? (otlp as { span_name?: unknown }).span_name : undefined;
  return typeof name === "string" && name ? name : null;
}

function plan(raw: RawPlan): PlanInfo {
  return {
    id: raw.id,
    description: raw.description,
    phase: raw.phase,
    project: raw.project,
    createdAt: raw.createdAt,
    invalidatedAt: raw.invalidatedAt,
    parentPlanId: raw.parentPlan?.id ?? null,
    spawnedById: raw.spawnedBy?.id ?? null,
    size: raw.decisions.totalCount,
    spanName: spanNameOf(raw.arguments),
    summary:
      raw.superseded && raw.unsure
        ? { superseded: raw.superseded.totalCount, pendingReviews: 0, lowConfidence: raw.unsure.totalCount }
        : null,
  };
}

export interface PlanList {
  plans: PlanInfo[];
  /** How many plans match in all. */
  total: number;
  /** Where the next page starts; null when this was the last. */
  next: string | null;
}

/** How the plan list is sorted and narrowed (on the server: ``plans(newestFirst:, project:, ...)``). */
export interface PlanFilters {
  newestFirst: boolean;
  project: string | null;
  hasCorrections: boolean | null;
  hasPendingReviews: boolean | null;
  maxConfidence: number | null;
}

/** One page (100) of the plans the caller may see, those matching ``search`` (description, id or project) and ``filters``. */
export async function listPlans(search: string | null, filters: PlanFilters, after: string | null = null): Promise<PlanList> {
  const data: {
    plans: { totalCount: number; nodes: RawPlan[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } = await query(
    `query Plans($search: String, $after: String, $newestFirst: Boolean!, $project: String, $hasCorrections: Boolean,
        $hasPendingReviews: Boolean, $maxConfidence: Float) {
      plans(first: 100, after: $after, search: $search, newestFirst: $newestFirst, project: $project,
        hasCorrections: $hasCorrections, hasPendingReviews: $hasPendingReviews, maxConfidence: $maxConfidence) {
      totalCount nodes { ${PLAN_FIELDS} } pageInfo { hasNextPage endCursor } } }`,
    { search, after, ...filters },
  );
  const page = data.plans;
  return { plans: page.nodes.map(plan), total: page.totalCount, next: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null };
}

/** A decision found by search, with its plan's name for its caption. */
export interface FoundDecision extends DecisionRef {
  status: string;
  plan: { description: string; spanName: string | null };
}

/** The first 20 decisions across plans whose words or id match ``text``, best first (``searchDecisions``), and how many match. */
export async function searchDecisions(text: string): Promise<{ found: FoundDecision[]; total: number }> {
  const data = await query<{
    searchDecisions: { totalCount: number; nodes: (Omit<FoundDecision, "plan"> & { plan: { description: string; arguments: unknown } })[] };
  }>(
    `query Find($text: String!) { searchDecisions(text: $text, first: 20) {
      totalCount nodes { ${REF_FIELDS} status plan { description arguments } } } }`,
    { text },
  );
  const found = data.searchDecisions.nodes.map((d) => ({
    ...d,
    plan: { description: d.plan.description, spanName: spanNameOf(d.plan.arguments) },
  }));
  return { found, total: data.searchDecisions.totalCount };
}

/** A plan with its ancestors and every plan below it: the hierarchy it belongs to, from its top, each plan with its summary. */
export async function hierarchyOf(planId: string): Promise<PlanInfo[]> {
  const data = await query<{ plan: (RawPlan & { ancestors: { id: string }[] }) | null }>(
    `query Top($id: ID!) { plan(id: $id) { ${PLAN_FIELDS} ancestors { id } } }`,
    { id: planId },
  );
  if (!data.plan) return [];
  const top = data.plan.ancestors.at(-1)?.id ?? planId;
  const below = await query<{ plan: (RawPlan & { descendants: RawPlan[] }) | null }>(
    `query Hierarchy($id: ID!) { plan(id: $id) { ${PLAN_FIELDS} ${SUMMARY_FIELDS}
      descendants(maxDepth: 50) { ${PLAN_FIELDS} ${SUMMARY_FIELDS} } } }`,
    { id: top },
  );
  const plans = below.plan ? [plan(below.plan), ...below.plan.descendants.map(plan)] : [];
  const waiting = await pendingReviews(plans.map((p) => p.id));
  for (const p of plans) if (p.summary) p.summary.pendingReviews = waiting.get(p.id) ?? 0;
  return plans;
}

/** How many aliases one request may hold, under the service's limit (30, ``api.MAX_ALIASES``). */
const ALIASES_PER_REQUEST = 25;

/**
 * How many reviews wait in each plan (``reviews(planId:, status: PENDING) { totalCount }``, the
 * schema's one way to count them by plan), a request per 25 plans, sent together.
 */
async function pendingReviews(planIds: string[]): Promise<Map<string, number>> {
  const batches: string[][] = [];
  for (let i = 0; i < planIds.length; i += ALIASES_PER_REQUEST) batches.push(planIds.slice(i, i + ALIASES_PER_REQUEST));
  const answers = await Promise.all(
    batches.map((ids) =>
      query<Record<string, { totalCount: number }>>(
        `query Pending(${ids.map((_, i) => `$p${i}: ID!`).join(", ")}) {
          ${ids.map((_, i) => `p${i}: reviews(planId: $p${i}, status: PENDING, first: 1) { totalCount }`).join("\n")} }`,
        Object.fromEntries(ids.map((id, i) => [`p${i}`, id])),
      ),
    ),
  );
  const found = new Map<string, number>();
  batches.forEach((ids, b) => ids.forEach((id, i) => found.set(id, answers[b][`p${i}`]?.totalCount ?? 0)));
  return found;
}

const DECISION_FIELDS = `id planId parentDecisionId sequenceNumber decisionType question chosenOption createdAt supersededAt
  supersededById isCorrection correctsDecisionId dependsOn { id planId }`;
const REVIEW_FIELDS = `id planId status decisionType question chosenOption confidenceScore threshold reason createdAt resolvedAt
  resolvedBy parent { id } decision { id }`;

type RawDecision = Omit<DecisionInfo, "superseded">;

/**
 * A plan's decisions as they stood at ``asOf`` (now when null), all read as of then by the service
 * (``plan(asOf:)``): the current tree then and, ghosted, what had been superseded by then; the
 * reviews as they stood then (``reviews(asOf:)``), those pending then apart.
 */
export async function planContent(planId: string, asOf: string | null): Promise<PlanContent> {
  type SupersededPage = {
    plan: { decisions: { nodes: RawDecision[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null;
  };
  const superseded = (after: string | null): Promise<SupersededPage> =>
    query<SupersededPage>(
      `query Superseded($id: ID!, $after: String, $asOf: DateTime) {
        plan(id: $id, asOf: $asOf) { decisions(first: 100, after: $after, filter: {status: SUPERSEDED}) {
          nodes { ${DECISION_FIELDS} } pageInfo { hasNextPage endCursor } } }
      }`,
      { id: planId, after, asOf },
    );
  // The tree and the first page of superseded decisions at once: the one does not wait on the other.
  const [data, first] = await Promise.all([
    query<{
      plan: { tree: { decision: RawDecision }[] } | null;
      reviews: { nodes: ReviewInfo[]; pageInfo: { hasNextPage: boolean } };
    }>(
      `query Content($id: ID!, $asOf: DateTime) {
        plan(id: $id, asOf: $asOf) { tree { decision { ${DECISION_FIELDS} } } }
        reviews(planId: $id, first: 100, asOf: $asOf) { nodes { ${REVIEW_FIELDS} } pageInfo { hasNextPage } }
      }`,
      { id: planId, asOf },
    ),
    superseded(null),
  ]);
  const current = (data.plan?.tree ?? []).map(({ decision }) => ({ ...decision, superseded: false }));
  const ghosts: DecisionInfo[] = [];
  for (let page = first; page.plan; ) {
    for (const d of page.plan.decisions.nodes) ghosts.push({ ...d, superseded: true });
    if (!page.plan.decisions.pageInfo.hasNextPage) break;
    page = await superseded(page.plan.decisions.pageInfo.endCursor);
  }
  const reviews = data.reviews.nodes;
  const pending = reviews.filter((r) => r.status === "PENDING");
  const decisions = [...current, ...ghosts].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  return { decisions, pending, reviews };
}

/** Another decision as the panel names it: its caption, with its id kept for hover, copy and a link. */
export interface DecisionRef {
  id: string;
  planId: string;
  parentDecisionId: string | null;
  sequenceNumber: number;
  decisionType: string;
  question: string;
  chosenOption: string;
}

const REF_FIELDS = "id planId parentDecisionId sequenceNumber decisionType question chosenOption";

export interface DecisionDetail {
  id: string;
  planId: string;
  sequenceNumber: number;
  decisionType: string;
  phase: string;
  question: string;
  chosenOption: string;
  alternativesConsidered: string[];
  confidenceScore: number | null;
  rationale: string;
  actorReasoning: string | null;
  contextSnapshot: {
    hotContextHash: string;
    hotContextRef: string;
    relevantResources: { resourceId: string; path: string | null }[];
    actorStateRef: { threadId: string; checkpointNs: string; checkpointId: string } | null;
  };
  checkpointGroup: { groupId: string } | null;
  artifactsProduced: { artifactPath: string; artifactType: string; digest: string | null }[];
  createdAt: string;
  status: string;
  isCorrection: boolean;
  correctsDecisionId: string | null;
  correctionReason: string | null;
  supersededById: string | null;
  supersededAt: string | null;
  context: string | null;
  parent: DecisionRef | null;
  dependsOn: DecisionRef[];
  dependents: DecisionRef[];
  children: DecisionRef[];
  corrects: DecisionRef | null;
  supersededBy: (DecisionRef & { correctsDecisionId: string | null; createdAt: string; corrects: DecisionRef | null }) | null;
  plan: { id: string; description: string; arguments: unknown };
  corrections: {
    attemptId: string;
    attemptNumber: number;
    mode: string;
    guidance: string;
    reason: string;
    requestedBy: string;
    at: string;
    replayOutcome: string;
    correctionDecisionId: string;
    invalidatedDecisionCount: number;
    invalidatedPlanCount: number;
  }[];
}

/** What became of a decision by now, whatever the moment shown: for the panel's "today" and its way to either side of a correction. */
export interface DecisionToday {
  status: string;
  supersededAt: string | null;
  supersededBy: { id: string; correctsDecisionId: string | null; createdAt: string } | null;
}

/**
 * A decision as it stood at ``asOf`` (now when null), every field and relation read as of then by
 * the service (``decision(asOf:)``), and what became of it by now.
 */
export async function decisionDetail(id: string, asOf: string | null): Promise<{ then: DecisionDetail | null; today: DecisionToday | null }> {
  const data = await query<{ decision: DecisionDetail | null; today: DecisionToday | null }>(
    `query Decision($id: ID!, $asOf: DateTime) {
      today: decision(id: $id) { status supersededAt supersededBy { id correctsDecisionId createdAt } }
      decision(id: $id, asOf: $asOf) {
      id planId sequenceNumber decisionType phase question chosenOption alternativesConsidered confidenceScore rationale
      actorReasoning contextSnapshot { hotContextHash hotContextRef relevantResources { resourceId path }
        actorStateRef { threadId checkpointNs checkpointId } }
      checkpointGroup { groupId } artifactsProduced { artifactPath artifactType digest }
      createdAt status isCorrection correctsDecisionId correctionReason supersededById supersededAt
      context parent { ${REF_FIELDS} } dependsOn { ${REF_FIELDS} } dependents { ${REF_FIELDS} } children { ${REF_FIELDS} }
      corrects { ${REF_FIELDS} }
      supersededBy { ${REF_FIELDS} correctsDecisionId createdAt corrects { ${REF_FIELDS} } }
      plan { id description arguments }
      corrections { attemptId attemptNumber mode guidance reason requestedBy at replayOutcome correctionDecisionId
        invalidatedDecisionCount invalidatedPlanCount }
    } }`,
    { id, asOf },
  );
  return { then: data.decision, today: data.today };
}

/** The plan a decision lies in (for a link naming only the decision), or null when the caller may not see it. */
export async function planOfDecision(id: string): Promise<string | null> {
  const data = await query<{ decision: { planId: string } | null }>(`query PlanOf($id: ID!) { decision(id: $id) { planId } }`, { id });
  return data.decision?.planId ?? null;
}

export interface Walk {
  decisions: { id: string; planId: string; decisionType: string }[];
  plans: { id: string }[];
}

export async function lineage(id: string, asOf: string | null): Promise<Walk> {
  const data = await query<{ lineage: Walk }>(
    `query Lineage($id: ID!, $asOf: DateTime) { lineage(decisionId: $id, asOf: $asOf) {
      decisions { id planId decisionType } plans { id } } }`,
    { id, asOf },
  );
  return data.lineage;
}

export interface Impact extends Walk {
  countsByType: { decisionType: string; count: number }[];
  paths: { decisionId: string; steps: { relationship: string; nodeId: string }[] }[];
}

export async function impact(id: string, asOf: string | null): Promise<Impact> {
  const data = await query<{ impact: Impact }>(
    `query Impact($id: ID!, $asOf: DateTime) { impact(decisionId: $id, asOf: $asOf) {
      decisions { id planId decisionType } plans { id } countsByType { decisionType count }
      paths { decisionId steps { relationship nodeId } } } }`,
    { id, asOf },
  );
  return data.impact;
}
