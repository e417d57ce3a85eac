// How the page names plans and decisions for a person: captions, never bare ids (the id stays on hover and copy).

import type { PlanSummary } from "./model";

/** What a caption needs of a decision. */
export interface Captioned {
  sequenceNumber: number;
  decisionType: string;
  chosenOption: string;
  parentDecisionId: string | null;
}

/** What a caption needs of a plan. */
export interface NamedPlan {
  description: string;
  spanName: string | null;
}

export function typeName(type: string): string {
  return type.toLowerCase();
}

export function short(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** A plan by its description; an imported plan by the span it was read from, then its description. */
export function planName(plan: NamedPlan): string {
  if (plan.spanName && plan.spanName !== plan.description) return `${plan.spanName}: ${plan.description}`;
  return plan.description;
}

/**
 * What a decision chose, in words: a plan's root (its prompt definition, whose chosen option is the
 * action's arguments as JSON) by its plan's name, any other by its chosen option.
 */
export function chosenText(d: Captioned, plan: NamedPlan | null | undefined): string {
  return d.parentDecisionId === null && plan ? planName(plan) : d.chosenOption;
}

/** ``#3 strategy_choice: Token bucket``, shortened to ``length``. */
export function decisionCaption(d: Captioned, plan: NamedPlan | null | undefined, length = 60): string {
  return `#${d.sequenceNumber} ${typeName(d.decisionType)}: ${short(chosenText(d, plan), length)}`;
}

function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A plan's phase and size: ``execute · 7 decisions`` (and ``· invalidated``). */
export function planFacts(plan: { phase: string; size: number; invalidatedAt: string | null }): string {
  return `${plan.phase.toLowerCase()} · ${counted(plan.size, "decision", "decisions")}${plan.invalidatedAt ? " · invalidated" : ""}`;
}

/** What an analyst scans a plan for, those there are: ``2 superseded``, ``1 review pending``, ``3 low confidence``. */
export function planFlags(summary: PlanSummary | null): string[] {
  if (!summary) return [];
  return [
    summary.superseded ? `${summary.superseded} superseded` : "",
    summary.pendingReviews ? counted(summary.pendingReviews, "review pending", "reviews pending") : "",
    summary.lowConfidence ? `${summary.lowConfidence} low confidence` : "",
  ].filter(Boolean);
}
