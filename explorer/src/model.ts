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
}

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

const PLAN_FIELDS = `id description phase project createdAt invalidatedAt parentPlan { id } spawnedBy { id } decisions(first: 1) { totalCount }`;

/** A plan as PLAN_FIELDS asks for it: PlanInfo's own fields, and its relations as the API nests them. */
interface RawPlan extends Omit<PlanInfo, "parentPlanId" | "spawnedById" | "size"> {
  parentPlan: { id: string } | null;
  spawnedBy: { id: string } | null;
  decisions: { totalCount: number };
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
  };
}

export interface PlanList {
  plans: PlanInfo[];
  /** How many plans match in all. */
  total: number;
  /** Where the next page starts; null when this was the last. */
  next: string | null;
}

/** One page (100) of the plans the caller may see, those matching ``search`` (description, id or project). */
export async function listPlans(search: string | null, after: string | null = null): Promise<PlanList> {
  const data: {
    plans: { totalCount: number; nodes: RawPlan[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } = await query(
    `query Plans($search: String, $after: String) { plans(first: 100, after: $after, search: $search) {
      totalCount nodes { ${PLAN_FIELDS} } pageInfo { hasNextPage endCursor } } }`,
    { search, after },
  );
  const page = data.plans;
  return { plans: page.nodes.map(plan), total: page.totalCount, next: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null };
}

/** A plan with its ancestors and every plan below it: the hierarchy it belongs to, from its top. */
export async function hierarchyOf(planId: string): Promise<PlanInfo[]> {
  const data = await query<{ plan: (RawPlan & { ancestors: { id: string }[] }) | null }>(
    `query Top($id: ID!) { plan(id: $id) { ${PLAN_FIELDS} ancestors { id } } }`,
    { id: planId },
  );
  if (!data.plan) return [];
  const top = data.plan.ancestors.at(-1)?.id ?? planId;
  const below = await query<{ plan: (RawPlan & { descendants: RawPlan[] }) | null }>(
    `query Hierarchy($id: ID!) { plan(id: $id) { ${PLAN_FIELDS} descendants(maxDepth: 50) { ${PLAN_FIELDS} } } }`,
    { id: top },
  );
  return below.plan ? [plan(below.plan), ...below.plan.descendants.map(plan)] : [];
}

const DECISION_FIELDS = `id planId parentDecisionId sequenceNumber decisionType question chosenOption createdAt supersededAt
  supersededById isCorrection correctsDecisionId dependsOn { id planId }`;
const REVIEW_FIELDS = `id planId status decisionType question chosenOption confidenceScore threshold reason createdAt resolvedAt
  resolvedBy parent { id } decision { id }`;

type RawDecision = Omit<DecisionInfo, "superseded">;

function before(moment: string, asOf: string | null): boolean {
  return asOf === null || Date.parse(moment) <= Date.parse(asOf);
}

/**
 * A plan's decisions as they stood at ``asOf`` (now when null): the current tree then (``tree(asOf)``)
 * and, ghosted, what had been superseded by then; the reviews pending then.
 */
export async function planContent(planId: string, asOf: string | null): Promise<PlanContent> {
  const data = await query<{
    plan: { tree: { decision: RawDecision }[] } | null;
    reviews: { nodes: ReviewInfo[]; pageInfo: { hasNextPage: boolean } };
  }>(
    `query Content($id: ID!, $asOf: DateTime) {
      plan(id: $id) { tree(asOf: $asOf) { decision { ${DECISION_FIELDS} } } }
      reviews(planId: $id, first: 100) { nodes { ${REVIEW_FIELDS} } pageInfo { hasNextPage } }
    }`,
    { id: planId, asOf },
  );
  const current = (data.plan?.tree ?? []).map(({ decision }) => ({ ...decision, superseded: false }));
  const ghosts: DecisionInfo[] = [];
  let after: string | null = null;
  for (;;) {
    const page: {
      plan: { decisions: { nodes: RawDecision[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null;
    } = await query(
      `query Superseded($id: ID!, $after: String, $to: DateTime) {
        plan(id: $id) { decisions(first: 100, after: $after, filter: {status: SUPERSEDED, createdTo: $to}) {
          nodes { ${DECISION_FIELDS} } pageInfo { hasNextPage endCursor } } }
      }`,
      { id: planId, after, to: asOf },
    );
    if (!page.plan) break;
    for (const d of page.plan.decisions.nodes) {
      if (d.supersededAt && before(d.supersededAt, asOf)) ghosts.push({ ...d, superseded: true });
    }
    if (!page.plan.decisions.pageInfo.hasNextPage) break;
    after = page.plan.decisions.pageInfo.endCursor;
  }
  const reviews = data.reviews.nodes;
  const pending = reviews.filter(
    (r) => before(r.createdAt, asOf) && (r.status === "PENDING" || (asOf !== null && r.resolvedAt !== null && !before(r.resolvedAt, asOf))),
  );
  const decisions = [...current, ...ghosts].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  return { decisions, pending, reviews };
}

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
  supersededBy: { id: string; correctsDecisionId: string | null; createdAt: string } | null;
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

export async function decisionDetail(id: string): Promise<DecisionDetail | null> {
  const data = await query<{ decision: DecisionDetail | null }>(
    `query Decision($id: ID!) { decision(id: $id) {
      id planId sequenceNumber decisionType phase question chosenOption alternativesConsidered confidenceScore rationale
      actorReasoning contextSnapshot { hotContextHash hotContextRef relevantResources { resourceId path }
        actorStateRef { threadId checkpointNs checkpointId } }
      checkpointGroup { groupId } artifactsProduced { artifactPath artifactType digest }
      createdAt status isCorrection correctsDecisionId correctionReason supersededById supersededAt
      supersededBy { id correctsDecisionId createdAt }
      corrections { attemptId attemptNumber mode guidance reason requestedBy at replayOutcome correctionDecisionId
        invalidatedDecisionCount invalidatedPlanCount }
    } }`,
    { id },
  );
  return data.decision;
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
