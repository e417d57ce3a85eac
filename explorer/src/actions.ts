// Acting from the page, within the token's rights: correct a decision (its impact previewed first), add guidance, resolve a review.

import { ApiError, mutate, query } from "./api";
import { decisionCaption, planName, typeName } from "./caption";
import { spanNameOf, type PlanInfo, type ReviewInfo } from "./model";

/** Who the token is and what its role allows (``viewer``): the actions the page offers. */
export interface Viewer {
  name: string;
  role: string;
  project: string | null;
  may: Set<string>;
}

/** The caller, or null when the service does not say (no token yet, or an older service): then nothing is offered. */
export async function readViewer(): Promise<Viewer | null> {
  try {
    const data = await query<{ viewer: { name: string; role: string; project: string | null; may: string[] } }>(
      "query Viewer { viewer { name role project may } }",
    );
    return { ...data.viewer, may: new Set(data.viewer.may) };
  } catch {
    return null;
  }
}

/** ``analyst-1 (analyst): may read``: who the page acts as. */
export function describeViewer(v: Viewer | null): string {
  if (!v) return "";
  const who = `${v.name} (${v.role.toLowerCase()}${v.project ? `, project ${v.project}` : ""})`;
  return `${who}: may ${[...v.may].map((a) => a.toLowerCase()).join(", ")}`;
}

/** What the page does around an action: run it as busy work, and read again what it changed. */
export interface ActHooks {
  /** Runs ``task`` with the page busy; its error is the caller's to show. */
  run(task: () => Promise<void>): Promise<void>;
  /** After a success: the plans to read again, the decision to select, what to say. */
  changed(planIds: string[], select: string | null, message: string): Promise<void>;
  /** Highlights what a correction would invalidate, in the drawing and the outline. */
  preview(decisions: string[], plans: string[]): void;
}

/** The decision the panel shows, as the actions need it. */
export interface Acting {
  id: string;
  planId: string;
  current: boolean;
  /** Reviews waiting under it now. */
  waiting: ReviewInfo[];
  plans: Map<string, PlanInfo>;
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

function labelled(text: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, id: string): HTMLLabelElement {
  control.id = id;
  control.name = id;
  const label = element("label", text);
  label.htmlFor = id;
  return label;
}

/** A refusal as the API words it, with its code and the field it names. */
export function refusal(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const where = error.field ? `, field ${error.field}` : "";
  return `Refused (${error.code ?? "error"}${where}): ${error.message}`;
}

function errorLine(): HTMLParagraphElement {
  const line = element("p", undefined, "error");
  line.setAttribute("role", "alert");
  line.hidden = true;
  return line;
}

function show(line: HTMLParagraphElement, error: unknown): void {
  line.textContent = refusal(error);
  line.hidden = false;
}

/**
 * The *Act* section under the panel's fields: only what the viewer may do, and only at now (the
 * past is not acted on): correct and add guidance with CORRECT, resolve a review with REVIEW.
 */
export function renderActions(panel: HTMLElement, viewer: Viewer | null, at: Acting, hooks: ActHooks, now: boolean): void {
  panel.querySelector(".act")?.remove();
  if (!viewer || !now) return;
  const mayCorrect = viewer.may.has("CORRECT") && at.current;
  const mayReview = viewer.may.has("REVIEW") && at.waiting.length > 0;
  if (!mayCorrect && !mayReview) return;
  const section = element("section", undefined, "act");
  section.setAttribute("aria-label", "Act on this decision");
  section.append(element("h3", "Act"));
  const forms = element("div", undefined, "act-forms");
  if (mayCorrect) {
    const row = element("div", undefined, "actions");
    row.append(
      button("Correct this decision…", "correct", () => forms.replaceChildren(correctForm(at, hooks))),
      button("Add guidance under it…", "guide", () => forms.replaceChildren(guidanceForm(at, hooks))),
    );
    section.append(row);
  }
  section.append(forms);
  if (mayReview) for (const review of at.waiting) section.append(reviewForm(review, hooks));
  const walk = panel.querySelector(".walk");
  if (walk) walk.before(section);
  else panel.append(section);
}

interface Preview {
  decisions: { id: string; planId: string; parentDecisionId: string | null; sequenceNumber: number; decisionType: string; chosenOption: string }[];
  plans: { id: string; description: string; arguments: unknown }[];
}

async function previewImpact(decisionId: string): Promise<Preview> {
  const data = await query<{ impact: Preview }>(
    `query Preview($id: ID!) { impact(decisionId: $id) {
      decisions { id planId parentDecisionId sequenceNumber decisionType chosenOption } plans { id description arguments } } }`,
    { id: decisionId },
  );
  return data.impact;
}

/** Correcting: mode, guidance and reason; the impact previewed; then confirmed. */
function correctForm(at: Acting, hooks: ActHooks): HTMLFormElement {
  const form = element("form", undefined, "act-form");
  form.dataset.form = "correct";
  form.append(element("h4", "Correct this decision"));
  const mode = element("select");
  mode.append(new Option("revert: roll back and re-run from here", "REVERT"), new Option("append: add the fix at the end of its branch", "APPEND"));
  const guidance = element("textarea");
  guidance.rows = 3;
  guidance.placeholder = "what should have been chosen";
  const reason = element("input");
  reason.placeholder = "why (optional)";
  form.append(
    labelled("Mode", mode, "correct-mode"),
    mode,
    labelled("Guidance", guidance, "correct-guidance"),
    guidance,
    labelled("Reason", reason, "correct-reason"),
    reason,
  );
  const previewBox = element("div", undefined, "preview");
  const error = errorLine();
  const confirm = button("Confirm the correction", "confirm-correct", () => {
    error.hidden = true;
    void hooks.run(async () => {
      try {
        const data = await mutate<{
          correctDecision: { correction: { id: string; planId: string }; invalidated: { id: string; planId: string }[]; invalidatedPlans: { id: string }[] };
        }>(
          `mutation Correct($input: CorrectDecisionInput!) { correctDecision(input: $input) {
            correction { id planId } invalidated { id planId } invalidatedPlans { id } } }`,
          { input: { decisionId: at.id, mode: mode.value, guidance: guidance.value, reason: reason.value } },
        );
        const done = data.correctDecision;
        const plans = new Set([done.correction.planId, ...done.invalidated.map((d) => d.planId), ...done.invalidatedPlans.map((p) => p.id)]);
        await hooks.changed(
          [...plans],
          done.correction.id,
          `Corrected: ${done.invalidated.length} decision(s) and ${done.invalidatedPlans.length} child plan(s) superseded; the correction is selected.`,
        );
      } catch (failure) {
        show(error, failure);
      }
    });
  });
  confirm.hidden = true;
  const previewButton = button("Preview what it would invalidate", "preview-correct", () => {
    error.hidden = true;
    void hooks.run(async () => {
      try {
        const walk = await previewImpact(at.id);
        hooks.preview(
          walk.decisions.map((d) => d.id),
          walk.plans.map((p) => p.id),
        );
        const list = element("ul", undefined, "preview-decisions");
        for (const d of walk.decisions) {
          const item = element("li", decisionCaption(d, at.plans.get(d.planId)));
          item.dataset.id = d.id;
          list.append(item);
        }
        const plans = element("ul", undefined, "preview-plans");
        for (const p of walk.plans) {
          const item = element("li", planName({ description: p.description, spanName: spanNameOf(p.arguments) }));
          item.dataset.planId = p.id;
          plans.append(item);
        }
        const counted = element(
          "p",
          `Correcting it would supersede ${walk.decisions.length} decision(s) and invalidate ${walk.plans.length} child plan(s):`,
          "preview-count",
        );
        counted.dataset.decisions = String(walk.decisions.length);
        counted.dataset.plans = String(walk.plans.length);
        previewBox.replaceChildren(counted, list, ...(walk.plans.length ? [element("p", "Child plans invalidated:"), plans] : []));
        confirm.hidden = false;
      } catch (failure) {
        show(error, failure);
      }
    });
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  form.append(previewButton, previewBox, confirm, error);
  return form;
}

/** Guidance without a correction: a user_intervention under this decision that supersedes nothing. */
function guidanceForm(at: Acting, hooks: ActHooks): HTMLFormElement {
  const form = element("form", undefined, "act-form");
  form.dataset.form = "guide";
  form.append(element("h4", "Add guidance under this decision"));
  const guidance = element("textarea");
  guidance.rows = 3;
  guidance.placeholder = "what the actor should take into account from here";
  const reason = element("input");
  reason.placeholder = "why (optional)";
  const error = errorLine();
  form.append(labelled("Guidance", guidance, "guide-text"), guidance, labelled("Reason", reason, "guide-reason"), reason);
  form.append(
    button("Add the guidance", "add-guidance", () => {
      error.hidden = true;
      void hooks.run(async () => {
        try {
          const data = await mutate<{ addGuidance: { id: string; planId: string } }>(
            `mutation Guide($input: AddGuidanceInput!) { addGuidance(input: $input) { id planId } }`,
            { input: { planId: at.planId, parentDecisionId: at.id, guidance: guidance.value, reason: reason.value } },
          );
          await hooks.changed([data.addGuidance.planId], data.addGuidance.id, "Guidance added; it is selected.");
        } catch (failure) {
          show(error, failure);
        }
      });
    }),
    error,
  );
  form.addEventListener("submit", (event) => event.preventDefault());
  return form;
}

interface ReviewDetail {
  id: string;
  planId: string;
  status: string;
  decisionType: string;
  question: string;
  chosenOption: string;
  alternativesConsidered: string[];
  digest: string;
}

/** A review waiting under the decision: approve what it proposes, choose an alternative, or write another answer. */
function reviewForm(review: ReviewInfo, hooks: ActHooks): HTMLFormElement {
  const form = element("form", undefined, "act-form review");
  form.dataset.form = "review";
  form.dataset.reviewId = review.id;
  form.append(
    element("h4", `Review: ${typeName(review.decisionType)}`),
    element("p", `${review.question} Proposed: ${review.chosenOption} (confidence ${review.confidenceScore ?? "-"} under ${review.threshold}).`),
  );
  const error = errorLine();
  const controls = element("div", undefined, "review-controls");
  form.append(controls, error);
  form.addEventListener("submit", (event) => event.preventDefault());
  const resolve = (detail: ReviewDetail, action: string, option: string | null): void => {
    error.hidden = true;
    void hooks.run(async () => {
      try {
        const data = await mutate<{ resolveReview: { review: { status: string }; decision: { id: string; planId: string } } }>(
          `mutation Resolve($input: ResolveReviewInput!) { resolveReview(input: $input) { review { status } decision { id planId } } }`,
          { input: { reviewId: detail.id, action, option, digest: detail.digest } },
        );
        const done = data.resolveReview;
        await hooks.changed(
          [done.decision.planId],
          done.decision.id,
          `Review ${done.review.status.toLowerCase().replace(/_/g, " ")}; the decision it recorded is selected.`,
        );
      } catch (failure) {
        show(error, failure);
      }
    });
  };
  // What it proposes is read again (its digest is what the approval answers; its alternatives to choose from).
  void query<{ review: ReviewDetail | null }>(
    `query Review($id: ID!) { review(id: $id) { id planId status decisionType question chosenOption alternativesConsidered digest } }`,
    { id: review.id },
  ).then(
    ({ review: detail }) => {
      if (!detail || detail.status !== "PENDING") {
        controls.replaceChildren(element("p", "No longer pending.", "hint"));
        return;
      }
      const row = element("div", undefined, "actions");
      row.append(button("Approve", "approve", () => resolve(detail, "APPROVE", null)));
      if (detail.alternativesConsidered.length) {
        const choice = element("select");
        for (const alternative of detail.alternativesConsidered) choice.append(new Option(alternative, alternative));
        row.append(
          labelled("Alternative", choice, `alternative-${detail.id}`),
          choice,
          button("Choose it", "select-alternative", () => resolve(detail, "SELECT_ALTERNATIVE", choice.value)),
        );
      }
      const custom = element("input");
      custom.placeholder = "another answer";
      const own = element("div", undefined, "actions");
      own.append(labelled("Other", custom, `custom-${detail.id}`), custom, button("Use it", "custom", () => resolve(detail, "CUSTOM", custom.value)));
      controls.replaceChildren(row, own);
    },
    (failure: unknown) => show(error, failure),
  );
  return form;
}
