// The same hierarchy as a text tree (WAI-ARIA tree pattern): readable by a screen reader, usable with the keyboard.

import { chosenText, planFacts, planFlags, planName, typeName } from "./caption";
import type { DecisionInfo, PlanInfo, ReviewInfo } from "./model";

export interface OutlineState {
  plans: PlanInfo[];
  hidden: Set<string>;
  expanded: Set<string>;
  content: Map<string, { decisions: DecisionInfo[]; pending: ReviewInfo[] }>;
  selected: string | null;
  highlight: { kind: string; decisions: Set<string>; plans: Set<string> } | null;
}

export interface OutlineActions {
  togglePlan(planId: string): void;
  selectDecision(decisionId: string): void;
}

/**
 * Renders the hierarchy as nested ``treeitem``s: a plan holds its decision tree (when open), a
 * child plan sits under the decision that spawned it. One item is in the tab order at a time; the
 * arrow keys move, Right and Left open and close plans, Enter opens a decision in the panel.
 */
export class Outline {
  private focusedKey: string | null = null;

  constructor(
    private readonly root: HTMLUListElement,
    private readonly actions: OutlineActions,
  ) {
    root.addEventListener("keydown", (event) => this.key(event));
    root.addEventListener("click", (event) => {
      const item = (event.target as HTMLElement).closest<HTMLLIElement>("li[role=treeitem]");
      if (!item) return;
      event.stopPropagation();
      this.focus(item);
      this.activate(item);
    });
  }

  render(state: OutlineState): void {
    const visible = state.plans.filter((p) => !state.hidden.has(p.id));
    const children = new Map<string, PlanInfo[]>(); // spawning decision (or parent plan) -> child plans
    for (const plan of visible) {
      if (!plan.parentPlanId) continue;
      const spawnedInside = plan.spawnedById && state.content.get(plan.parentPlanId)?.decisions.some((d) => d.id === plan.spawnedById);
      const key = spawnedInside && state.expanded.has(plan.parentPlanId) ? `d:${plan.spawnedById}` : `p:${plan.parentPlanId}`;
      children.set(key, [...(children.get(key) ?? []), plan]);
    }
    const known = new Set(visible.map((p) => p.id));
    const tops = visible.filter((p) => !p.parentPlanId || !known.has(p.parentPlanId));
    const hadFocus = this.root.contains(document.activeElement);
    const fragment = document.createDocumentFragment();
    for (const plan of tops) fragment.append(this.planItem(plan, 1, state, children));
    this.root.replaceChildren(fragment);
    const again = this.focusedKey ? this.root.querySelector<HTMLLIElement>(`li[data-key="${this.focusedKey}"]`) : null;
    const first = again ?? this.root.querySelector<HTMLLIElement>("li[role=treeitem]");
    if (first) first.tabIndex = 0;
    if (hadFocus) first?.focus();
  }

  private planItem(plan: PlanInfo, level: number, state: OutlineState, children: Map<string, PlanInfo[]>): HTMLLIElement {
    const open = state.expanded.has(plan.id);
    const item = this.item(`p:${plan.id}`, level);
    item.dataset.kind = "plan";
    item.dataset.id = plan.id;
    // data-open: its decisions are fetched and shown. Its child plans show either way, so the
    // hierarchy reads whole while every plan is closed; aria-expanded says whether anything is under it.
    item.dataset.open = String(open);
    if (state.highlight && !open && state.highlight.plans.has(plan.id)) item.dataset.highlight = state.highlight.kind;
    const facts = [open ? "open" : "closed", ...planFacts(plan).split(" · "), ...planFlags(plan.summary)];
    item.append(this.label(`plan: ${planName(plan)}`, facts.join(", "), "outline-plan"));
    const group = document.createElement("ul");
    group.setAttribute("role", "group");
    const content = state.content.get(plan.id);
    if (open && content) {
      const byParent = new Map<string | null, DecisionInfo[]>();
      const present = new Set(content.decisions.map((d) => d.id));
      for (const d of content.decisions) {
        const parent = d.parentDecisionId && present.has(d.parentDecisionId) ? d.parentDecisionId : null;
        byParent.set(parent, [...(byParent.get(parent) ?? []), d]);
      }
      for (const d of byParent.get(null) ?? []) group.append(this.decisionItem(d, level + 1, state, byParent, children, content.pending, plan));
    }
    for (const child of children.get(`p:${plan.id}`) ?? []) group.append(this.planItem(child, level + 1, state, children));
    if (group.childElementCount) item.append(group);
    item.setAttribute("aria-expanded", String(group.childElementCount > 0));
    return item;
  }

  private decisionItem(
    d: DecisionInfo,
    level: number,
    state: OutlineState,
    byParent: Map<string | null, DecisionInfo[]>,
    plans: Map<string, PlanInfo[]>,
    pending: ReviewInfo[],
    plan: PlanInfo,
  ): HTMLLIElement {
    const item = this.item(`d:${d.id}`, level);
    item.dataset.kind = "decision";
    item.dataset.id = d.id;
    item.dataset.status = d.superseded ? "superseded" : "current";
    item.setAttribute("aria-selected", String(state.selected === d.id));
    if (state.highlight?.decisions.has(d.id)) item.dataset.highlight = state.highlight.kind;
    const waiting = pending.filter((r) => r.parent?.id === d.id);
    const notes = [
      d.superseded ? "superseded" : "",
      d.isCorrection ? "correction" : "",
      waiting.length ? `${waiting.length} review pending` : "",
    ].filter(Boolean);
    item.append(
      this.label(
        `#${d.sequenceNumber} ${typeName(d.decisionType)}: ${chosenText(d, plan)}`,
        notes.join(", "),
        `outline-decision t-${typeName(d.decisionType)}`,
      ),
    );
    const kids = byParent.get(d.id) ?? [];
    const spawned = plans.get(`d:${d.id}`) ?? [];
    if (kids.length || spawned.length) {
      item.setAttribute("aria-expanded", "true");
      const group = document.createElement("ul");
      group.setAttribute("role", "group");
      for (const kid of kids) group.append(this.decisionItem(kid, level + 1, state, byParent, plans, pending, plan));
      for (const plan of spawned) group.append(this.planItem(plan, level + 1, state, plans));
      item.append(group);
    }
    return item;
  }

  private item(key: string, level: number): HTMLLIElement {
    const item = document.createElement("li");
    item.setAttribute("role", "treeitem");
    item.setAttribute("aria-level", String(level));
    item.dataset.key = key;
    item.tabIndex = -1;
    return item;
  }

  private label(text: string, note: string, className: string): HTMLSpanElement {
    const label = document.createElement("span");
    label.className = `outline-label ${className}`;
    label.textContent = text;
    if (note) {
      const small = document.createElement("small");
      small.textContent = ` (${note})`;
      label.append(small);
    }
    return label;
  }

  private visibleItems(): HTMLLIElement[] {
    return [...this.root.querySelectorAll<HTMLLIElement>("li[role=treeitem]")].filter(
      (item) => !item.parentElement?.closest("li[aria-expanded=false]"),
    );
  }

  private focus(item: HTMLLIElement): void {
    for (const other of this.root.querySelectorAll<HTMLLIElement>("li[tabindex='0']")) other.tabIndex = -1;
    item.tabIndex = 0;
    item.focus();
    this.focusedKey = item.dataset.key ?? null;
  }

  /** Focuses an item by what it shows (a decision selected in the drawing, say). */
  reveal(key: string): void {
    const item = this.root.querySelector<HTMLLIElement>(`li[data-key="${key}"]`);
    if (item) {
      for (const other of this.root.querySelectorAll<HTMLLIElement>("li[tabindex='0']")) other.tabIndex = -1;
      item.tabIndex = 0;
      this.focusedKey = key;
      item.scrollIntoView({ block: "nearest" });
    }
  }

  private activate(item: HTMLLIElement): void {
    const id = item.dataset.id ?? "";
    if (item.dataset.kind === "plan") this.actions.togglePlan(id);
    else this.actions.selectDecision(id);
  }

  private key(event: KeyboardEvent): void {
    const item = (event.target as HTMLElement).closest<HTMLLIElement>("li[role=treeitem]");
    if (!item) return;
    const items = this.visibleItems();
    const at = items.indexOf(item);
    const move = (to: HTMLLIElement | undefined): void => {
      if (to) this.focus(to);
    };
    const isPlan = item.dataset.kind === "plan";
    const open = isPlan ? item.dataset.open === "true" : item.getAttribute("aria-expanded") === "true";
    switch (event.key) {
      case "ArrowDown":
        move(items[at + 1]);
        break;
      case "ArrowUp":
        move(items[at - 1]);
        break;
      case "Home":
        move(items[0]);
        break;
      case "End":
        move(items.at(-1));
        break;
      case "ArrowRight":
        if (isPlan && !open) this.actions.togglePlan(item.dataset.id ?? "");
        else move(item.querySelector<HTMLLIElement>(":scope > ul > li[role=treeitem]") ?? undefined);
        break;
      case "ArrowLeft":
        if (isPlan && open) this.actions.togglePlan(item.dataset.id ?? "");
        else move(item.parentElement?.closest<HTMLLIElement>("li[role=treeitem]") ?? undefined);
        break;
      case "Enter":
      case " ":
        this.activate(item);
        break;
      default:
        return;
    }
    event.preventDefault();
  }
}
