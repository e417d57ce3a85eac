// The drawing: closed plans as summary cards laid out as a tree by spawn depth; an opened plan a compound node holding its decision tree.

import cytoscape from "cytoscape";
import svg from "cytoscape-svg";

import { chosenText, planFacts, planFlags, planName, short, typeName } from "./caption";
import { treePositions } from "./layout";
import type { DecisionInfo, PlanInfo, ReviewInfo } from "./model";

declare module "cytoscape" {
  interface Core {
    /** Added by cytoscape-svg: the drawing as SVG text. */
    svg(options?: { full?: boolean; scale?: number; bg?: string }): string;
  }
}

cytoscape.use(svg);

/** What ``dirtyStyleCache`` walks: the fields of Cytoscape's elements it reads (its own, private). */
interface RawElement {
  _private: { styleCache: unknown; group: string; edges?: RawElement[]; children?: RawElement[]; parent?: RawElement | null };
}

/**
 * Cytoscape calls ``dirtyStyleCache`` for every style property it applies to an element (some 15
 * for each decision as it is first drawn). In a drawing with compound nodes (an opened plan is
 * one) each call builds four collections (the element, its descendants, its ancestors and all
 * their edges) only to clear a cache field on each: a third of a 1,000-decision plan's expansion,
 * with the garbage it leaves. This clears exactly the same elements, walking the same links
 * (``children``, ``parent``, ``edges``) without building a collection. It reads Cytoscape's private
 * fields, so it is made only for the version it was written against (package.json pins it): another
 * version draws as ever, without it.
 */
const STYLE_CACHE_PATCHED_FOR = "3.35.0";

function clearStyleCachesDirectly(cy: cytoscape.Core): void {
  const proto = Object.getPrototypeOf(cy.collection()) as { dirtyStyleCache?: () => unknown; __direct?: boolean };
  const original = proto.dirtyStyleCache;
  if (!original || proto.__direct || (cytoscape as unknown as { version?: string }).version !== STYLE_CACHE_PATCHED_FOR) return;
  const clear = (ele: RawElement): void => {
    ele._private.styleCache = null;
    if (ele._private.group === "nodes") for (const edge of ele._private.edges ?? []) edge._private.styleCache = null;
  };
  proto.dirtyStyleCache = function (this: ArrayLike<RawElement>) {
    const core = (this as unknown as { cy(): { hasCompoundNodes(): boolean } }).cy();
    if (!core.hasCompoundNodes()) return original.call(this);
    for (let i = 0; i < this.length; i += 1) {
      const ele = this[i];
      clear(ele);
      const below = [...(ele._private.children ?? [])];
      while (below.length) {
        const child = below.pop() as RawElement;
        clear(child);
        for (const grandchild of child._private.children ?? []) below.push(grandchild);
      }
      for (let up = ele._private.parent; up; up = up._private.parent) clear(up);
    }
    return this;
  };
  proto.__direct = true;
}

/** The colour of each decision type: the exports' palette (exports.PALETTE), so a GEXF looks the same. */
export const TYPE_COLOURS: Record<string, string> = {
  PROMPT_DEFINITION: "#1f77b4",
  INVARIANT_ENFORCED: "#9467bd",
  STRATEGY_CHOICE: "#2ca02c",
  IMPLEMENTATION_CHOICE: "#ff7f0e",
  RESOURCE_SELECTION: "#17becf",
  SUBPLAN_SPAWN: "#d62728",
  SUBPLAN_PARALLEL_SPAWN: "#e377c2",
  TOOL_INVOCATION: "#8c564b",
  ERROR_RECOVERY: "#bcbd22",
  VALIDATION_RESPONSE: "#aec7e8",
  USER_INTERVENTION: "#ffbb78",
};

/** A DEPENDS_ON of a drawn decision: ``from`` depends on ``to``. */
export interface Dependency {
  from: { id: string; planId: string };
  to: { id: string; planId: string };
}

export type Highlight = "lineage" | "impact" | "path";

const planNode = (id: string): string => `p:${id}`;
const decisionNode = (id: string): string => `d:${id}`;

export { typeName };

/** A closed plan's card: its name, its phase and size, then what an analyst scans for (a line left out when there is none). */
function cardLabel(plan: PlanInfo): string {
  return [short(planName(plan), 34), planFacts(plan), planFlags(plan.summary).join(" · ")].filter(Boolean).join("\n");
}

/** An open plan's label, above its box: its name, phase and size. */
function openLabel(plan: PlanInfo): string {
  return `${short(planName(plan), 48)}\n${planFacts(plan)}`;
}

/** A plan node's data and classes: the card's and the open box's labels, and what the card is marked for. */
function planLook(plan: PlanInfo): { data: { label: string; openLabel: string }; classes: string[] } {
  return {
    data: { label: cardLabel(plan), openLabel: openLabel(plan) },
    classes: [
      ...(plan.invalidatedAt ? ["invalidated"] : []),
      ...(plan.summary?.pendingReviews ? ["pending"] : []),
      ...(plan.summary?.superseded ? ["corrected"] : []),
    ],
  };
}

/** The smallest a label is ever drawn on screen, in CSS pixels: below it Cytoscape leaves labels out. */
export const LEGIBLE_PX = 10;
/** Every label's font size in the drawing's own units; at zoom 1 it is drawn this many pixels high. */
const FONT_SIZE = 12;
/** The zoom a view opens at, at least: the labels are then drawn FONT_SIZE px high (a view pans rather than shrinks). */
const LEGIBLE_ZOOM = 1;
/** A small drawing is not blown up past this when it is fitted. */
const MOST_ZOOM = 1.5;

/** A closed plan's card: room for four lines of labels (name, phase and size, and its flags wrapped once). */
const CARD_WIDTH = 250;
const CARD_HEIGHT = 60;
/** Between the cards of one depth and the next, and between stacked cards. */
const CARD_RANK_GAP = 60;
const CARD_ROW_GAP = 8;
const DECISION_WIDTH = 190;
const DECISION_HEIGHT = 46;
const RANK_GAP = 60;
/** A pending review's diamond, under the decision it waits on. */
const REVIEW_WIDTH = 70;
const REVIEW_HEIGHT = 40;
const ROW_GAP = 14;

/** A rectangle in the drawing's own units. */
interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** Where a plan's tree begins inside its box, from the box's top left (room for the plan's label). */
const TREE_INSET = { x: 20, y: 30 };

/** The top left a drawn tree was laid out from: its first root and first leaf sit at (0, 0) of the layout. */
function treeOrigin(nodes: cytoscape.NodeCollection): { x1: number; y1: number } {
  let x = Infinity;
  let y = Infinity;
  nodes.forEach((node) => {
    x = Math.min(x, node.position("x"));
    y = Math.min(y, node.position("y"));
  });
  return { x1: x - TREE_INSET.x - DECISION_WIDTH / 2, y1: y - TREE_INSET.y - DECISION_HEIGHT / 2 };
}

const STYLE: cytoscape.StylesheetJson = [
  {
    selector: "node",
    style: {
      shape: "round-rectangle",
      width: DECISION_WIDTH,
      height: DECISION_HEIGHT,
      label: "data(label)",
      "font-size": FONT_SIZE,
      "min-zoomed-font-size": LEGIBLE_PX,
      "font-family": "system-ui, sans-serif",
      "text-wrap": "wrap",
      "text-max-width": "180px",
      "text-valign": "center",
      "text-halign": "center",
      color: "#1b1b1b",
      "border-width": 1,
      "border-color": "#555",
    },
  },
  {
    selector: "node.plan",
    style: {
      "background-color": "#eef0f3",
      "border-color": "#404040",
      "border-width": 2,
      width: CARD_WIDTH,
      height: CARD_HEIGHT,
      "text-max-width": `${CARD_WIDTH - 16}px`,
      "line-height": 1.2,
    },
  },
  { selector: "node.plan.corrected:childless", style: { "background-color": "#fbeae8" } },
  { selector: "node.plan.pending:childless", style: { "border-width": 4, "border-color": "#d4a000" } },
  {
    selector: "node.plan:parent",
    style: {
      label: "data(openLabel)",
      "font-weight": "bold",
      "text-max-width": "400px",
      "text-valign": "top",
      "text-halign": "center",
      "text-margin-y": -4,
      "background-color": "#f6f7f9",
      "background-opacity": 0.9,
      padding: "18px",
    },
  },
  { selector: "node.plan.invalidated", style: { "border-style": "dashed", opacity: 0.6 } },
  ...Object.entries(TYPE_COLOURS).map(([type, colour]) => ({
    selector: `node.t-${typeName(type)}`,
    style: { "background-color": colour },
  })),
  { selector: "node.decision", style: { "background-opacity": 0.85 } },
  { selector: "node.superseded", style: { opacity: 0.35, "border-style": "dashed" } },
  { selector: "node.correction", style: { "border-width": 3, "border-color": "#000" } },
  { selector: "node.pending", style: { "border-width": 4, "border-color": "#d4a000" } },
  {
    selector: "node.review",
    style: { shape: "diamond", width: REVIEW_WIDTH, height: REVIEW_HEIGHT, "background-color": "#ffd700", label: "review" },
  },
  {
    selector: "edge",
    style: {
      width: 1.5,
      "curve-style": "bezier",
      "target-arrow-shape": "triangle",
      "arrow-scale": 0.8,
      "line-color": "#8a8a8a",
      "target-arrow-color": "#8a8a8a",
    },
  },
  { selector: "edge.depends", style: { "line-style": "dashed", "line-color": "#3b6fb6", "target-arrow-color": "#3b6fb6" } },
  {
    // Elbows, as a tree is drawn: from a card (or the spawning decision) out right, along, then into the child's card.
    selector: "edge.spawn",
    style: {
      width: 3,
      "line-color": "#d62728",
      "target-arrow-color": "#d62728",
      "line-style": "dotted",
      "curve-style": "taxi",
      "taxi-direction": "rightward",
      "taxi-turn": CARD_RANK_GAP / 2,
    },
  },
  { selector: "edge.to-review", style: { "line-color": "#d4a000", "target-arrow-color": "#d4a000", "line-style": "dashed" } },
  { selector: ".dimmed", style: { opacity: 0.15 } },
  { selector: "node.lit", style: { "underlay-color": "#ffeb3b", "underlay-opacity": 0.9, "underlay-padding": 6, opacity: 1 } },
  { selector: "node.lit-impact", style: { "underlay-color": "#ff5252", "underlay-opacity": 0.7, "underlay-padding": 6, opacity: 1 } },
  { selector: "edge.lit, edge.lit-impact", style: { width: 3, opacity: 1 } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#0050b3" } },
  { selector: ".outside-focus", style: { display: "none" } },
];

export interface GraphNodeSummary {
  id: string;
  kind: "plan" | "decision" | "review";
  /** Its label as drawn (a closed plan's is its card; an open plan's is drawn from openLabel, above its box). */
  label: string;
  parent: string | null;
  classes: string[];
  /** The centre, in the drawing's own coordinates. */
  x: number;
  y: number;
  /** Whether it is drawn (not hidden: a plan not yet instantiated, or outside the focus). */
  visible: boolean;
}

/** How big the labels in view are drawn: each label's font size times the zoom, in CSS pixels. */
export interface Legibility {
  zoom: number;
  /** Labels drawn in the viewport (those Cytoscape leaves out for being too small are not drawn, so not counted). */
  labels: { id: string; px: number }[];
  /** Labels Cytoscape leaves out at this zoom for being smaller than LEGIBLE_PX. */
  hidden: number;
}

/**
 * The hierarchy's drawing. Plans start collapsed; expanding one adds its decisions inside it and
 * lays out only them, moving the plans to its right and below it aside, so nothing else jumps.
 */
export class GraphView {
  readonly cy: cytoscape.Core;
  private readonly grown = new Map<string, { dx: number; dy: number }>();
  /** The bodies of an opened plan's nodes as laid out (the plan's box and the labels are bigger). */
  private readonly trees = new Map<string, Box>();

  constructor(container: HTMLElement, onDecision: (id: string) => void, onPlan: (id: string) => void) {
    this.cy = cytoscape({
      container,
      style: STYLE,
      minZoom: 0.05,
      maxZoom: 3,
      textureOnViewport: true,
      hideEdgesOnViewport: true,
      boxSelectionEnabled: false,
    });
    clearStyleCachesDirectly(this.cy);
    this.cy.on("tap", "node.decision", (event) => onDecision(String(event.target.data("ref"))));
    this.cy.on("tap", "node.plan", (event) => onPlan(String(event.target.data("ref"))));
  }

  clear(): void {
    this.cy.elements().remove();
    this.grown.clear();
    this.trees.clear();
  }

  /**
   * The hierarchy's plans, closed, each a summary card, laid out as a tree by spawn depth: a plan's
   * column is its depth, the plans at the bottom take successive rows and a parent sits midway
   * between its first and last child, siblings in id (creation) order. It opens on the top plan.
   */
  showPlans(plans: PlanInfo[]): void {
    this.clear();
    this.plans = plans;
    const at = treePositions(
      plans.map((p) => ({ id: planNode(p.id), parent: p.parentPlanId ? planNode(p.parentPlanId) : null })),
      { rank: CARD_WIDTH + CARD_RANK_GAP, row: CARD_HEIGHT + CARD_ROW_GAP },
    );
    this.cy.batch(() => {
      for (const plan of plans) this.addPlan(plan, at.get(planNode(plan.id)));
    });
    this.relink();
    this.legibleView(this.cy.getElementById(planNode(plans[0]?.id ?? "")), undefined, "cards");
  }

  /**
   * Everything when it fits at a legible zoom; otherwise the legible zoom itself, panned to show
   * ``start`` (a plan's first decision, say) at the top left, at the centre, or at the left edge
   * with as many cards beside it as fit (a top plan, among its descendants): labels are never
   * shrunk out of reading.
   */
  private legibleView(
    start: cytoscape.CollectionReturnValue | cytoscape.NodeSingular,
    within?: cytoscape.Collection,
    anchor: "top-left" | "centre" | "cards" = "top-left",
    inside?: Box,
  ): void {
    // ``inside`` lies within what is shown (nodes' bodies, from the positions the layout gave them):
    // when it alone is too big to fit at the legible zoom, so is everything, and the view is the
    // legible zoom whatever a fit would say. Finding what is visible and fitting it would first
    // work out the style and bounds of every element (half a second for a 1,000-decision plan).
    if (!within && inside && start.nonempty() && this.tooBigToFit(inside)) {
      this.legibleAt(start, anchor);
      return;
    }
    const shown = within ?? this.cy.elements(":visible");
    if (shown.empty()) return;
    this.cy.fit(shown, 30);
    if (this.cy.zoom() > MOST_ZOOM) {
      this.cy.zoom(MOST_ZOOM);
      this.cy.center(shown);
    } else if (this.cy.zoom() < LEGIBLE_ZOOM) {
      this.legibleAt(start.nonempty() ? start : shown, anchor);
    }
  }

  /** Whether ``box`` fitted with a 30 px margin (as ``legibleView`` fits) would be drawn smaller than the legible zoom. */
  private tooBigToFit(box: Box): boolean {
    return box.x2 - box.x1 > (this.cy.width() - 60) / LEGIBLE_ZOOM || box.y2 - box.y1 > (this.cy.height() - 60) / LEGIBLE_ZOOM;
  }

  /** The legible zoom, ``from`` at the top left, at the centre, or among the most cards. */
  private legibleAt(from: cytoscape.CollectionReturnValue | cytoscape.NodeSingular | cytoscape.Collection, anchor: "top-left" | "centre" | "cards"): void {
    this.cy.zoom(LEGIBLE_ZOOM);
    if (anchor === "centre") this.cy.center(from);
    else if (anchor === "cards") this.cy.pan(this.mostCardsPan(from.boundingBox()));
    else this.cy.pan({ x: 30 - from.boundingBox().x1 * LEGIBLE_ZOOM, y: 30 - from.boundingBox().y1 * LEGIBLE_ZOOM });
  }

  /**
   * The pan, at the legible zoom, with ``box`` 30 px from the left edge and, of the ways to show it
   * whole, the one that shows the most cards beside it (each its whole height, at least its centre
   * across; nearest to it halfway down among equals): the parent centred on its children lies far from them in a big hierarchy, so a top
   * plan halfway down would often be drawn alone between its spawn links.
   */
  private mostCardsPan(box: cytoscape.BoundingBox12): { x: number; y: number } {
    const zoom = LEGIBLE_ZOOM;
    const margin = 30;
    const x = margin - box.x1 * zoom;
    const width = this.cy.width() / zoom;
    const height = this.cy.height() / zoom;
    const left = box.x1 - margin / zoom;
    const cards = this.cy
      .nodes("node.plan:childless:visible")
      .map((n) => n.boundingBox())
      .filter((b) => (b.x1 + b.x2) / 2 >= left && (b.x1 + b.x2) / 2 <= left + width); // a narrow pane shows the next column's halves
    // A view's top (in the drawing's units) that shows the box whole: from its bottom at the view's bottom to its top at the view's top.
    const lowest = box.y2 + margin / zoom - height;
    const highest = box.y1 - margin / zoom;
    const middle = (box.y1 + box.y2) / 2 - height / 2;
    const clamp = (top: number): number => Math.min(highest, Math.max(lowest, top));
    const candidates = [middle, ...cards.flatMap((b) => [b.y1 - margin / zoom, b.y2 + margin / zoom - height])].map(clamp);
    let best = { top: clamp(middle), shown: -1 };
    for (const top of candidates) {
      const shown = cards.filter((b) => b.y1 >= top && b.y2 <= top + height).length;
      const nearer = Math.abs(top - middle) < Math.abs(best.top - middle);
      if (shown > best.shown || (shown === best.shown && nearer)) best = { top, shown };
    }
    return { x, y: -best.top * zoom };
  }

  /** A plan that appeared later (live): placed right of its parent plan, below its siblings. */
  addLatePlan(plan: PlanInfo): void {
    if (this.cy.getElementById(planNode(plan.id)).nonempty()) return;
    const node = this.addPlan(plan);
    const parent = plan.parentPlanId ? this.cy.getElementById(planNode(plan.parentPlanId)) : null;
    if (parent?.nonempty()) {
      const box = parent.boundingBox();
      const x = box.x2 + CARD_RANK_GAP + CARD_WIDTH / 2;
      node.position({ x, y: box.y1 + CARD_HEIGHT / 2 });
      const sibling = this.cy.nodes("node.plan").filter((n) => n.id() !== node.id() && n.boundingBox().x1 > box.x2);
      if (sibling.nonempty()) node.position({ x, y: sibling.boundingBox().y2 + CARD_ROW_GAP + CARD_HEIGHT / 2 });
    }
    this.relink();
  }

  updatePlan(plan: PlanInfo): void {
    const node = this.cy.getElementById(planNode(plan.id));
    const look = planLook(plan);
    node.data(look.data);
    for (const mark of ["invalidated", "pending", "corrected"]) node.toggleClass(mark, look.classes.includes(mark));
  }

  setHiddenPlans(hidden: Set<string>): void {
    this.cy.batch(() => {
      this.cy.nodes("node.plan").forEach((node) => {
        node.style("display", hidden.has(String(node.data("ref"))) ? "none" : "element");
      });
    });
  }

  private addPlan(plan: PlanInfo, position?: cytoscape.Position): cytoscape.NodeSingular {
    const look = planLook(plan);
    return this.cy.add({
      group: "nodes",
      data: { id: planNode(plan.id), ref: plan.id, ...look.data },
      classes: ["plan", "card", ...look.classes],
      ...(position ? { position } : {}),
    });
  }

  isExpanded(planId: string): boolean {
    return this.cy.getElementById(planNode(planId)).isParent();
  }

  /**
   * Fills a plan with its decisions (replacing what it held) and lays out only them, inside the
   * plan's box; the plans to its right move right and those below it move down by what it grew.
   */
  expand(planId: string, decisions: DecisionInfo[], pending: ReviewInfo[]): void {
    const plan = this.cy.getElementById(planNode(planId));
    if (plan.empty()) return;
    const wasOpen = plan.isParent();
    const before = plan.boundingBox();
    const shifted = wasOpen ? this.grown.get(planId) : undefined;
    // Drawn again (live, or at another moment): from where its tree began, not from its box, which
    // holds the padding and label around the tree and would move the tree a little each time.
    const origin = wasOpen ? treeOrigin(plan.children()) : { x1: before.x1, y1: before.y1 };
    // A tree's layered layout in linear time (dagre took about a second for 1,000 decisions), from
    // the plan's top left, so the rest of the drawing stays where it was. Each node is added at its
    // place: positioned after adding, Cytoscape would work out every bound twice.
    const at = treePositions(
      [
        ...decisions.map((d) => ({ id: decisionNode(d.id), parent: d.parentDecisionId ? decisionNode(d.parentDecisionId) : null })),
        ...pending.map((r) => ({ id: `r:${r.id}`, parent: r.parent ? decisionNode(r.parent.id) : null })),
      ],
      { rank: DECISION_WIDTH + RANK_GAP, row: DECISION_HEIGHT + ROW_GAP },
    );
    const place = (id: string): cytoscape.Position => {
      const point = at.get(id) ?? { x: 0, y: 0 };
      return {
        x: point.x + origin.x1 + TREE_INSET.x + DECISION_WIDTH / 2,
        y: point.y + origin.y1 + TREE_INSET.y + DECISION_HEIGHT / 2,
      };
    };
    const tree: Box = { x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity };
    const within = (id: string, half: { w: number; h: number }): void => {
      const { x, y } = place(id);
      tree.x1 = Math.min(tree.x1, x - half.w);
      tree.y1 = Math.min(tree.y1, y - half.h);
      tree.x2 = Math.max(tree.x2, x + half.w);
      tree.y2 = Math.max(tree.y2, y + half.h);
    };
    for (const d of decisions) within(decisionNode(d.id), { w: DECISION_WIDTH / 2, h: DECISION_HEIGHT / 2 });
    for (const r of pending) within(`r:${r.id}`, { w: REVIEW_WIDTH / 2, h: REVIEW_HEIGHT / 2 });
    if (decisions.length || pending.length) this.trees.set(planId, tree);
    else this.trees.delete(planId);
    const present = new Set(decisions.map((d) => d.id));
    const plans = new Map(this.plans.map((p) => [p.id, p]));
    const waitedOn = new Set(pending.flatMap((r) => (r.parent && present.has(r.parent.id) ? [r.parent.id] : [])));
    this.cy.batch(() => {
      plan.children().remove();
      plan.removeClass("card");
      this.cy.add([
        ...decisions.map((d) => ({
          group: "nodes" as const,
          data: {
            id: decisionNode(d.id),
            ref: d.id,
            parent: plan.id(),
            label: `#${d.sequenceNumber} ${typeName(d.decisionType)}\n${short(chosenText(d, plans.get(d.planId)), 44)}`,
          },
          position: place(decisionNode(d.id)),
          classes: [
            "decision",
            `t-${typeName(d.decisionType)}`,
            ...(d.superseded ? ["superseded"] : []),
            ...(d.isCorrection ? ["correction"] : []),
            ...(waitedOn.has(d.id) ? ["pending"] : []),
          ],
        })),
        ...pending.map((review) => ({
          group: "nodes" as const,
          data: { id: `r:${review.id}`, ref: review.id, parent: plan.id() },
          position: place(`r:${review.id}`),
          classes: ["review"],
        })),
        ...decisions
          .filter((d) => d.parentDecisionId && present.has(d.parentDecisionId))
          .map((d) => ({
            group: "edges" as const,
            data: { id: `parent:${d.id}`, source: decisionNode(d.parentDecisionId ?? ""), target: decisionNode(d.id) },
            classes: ["tree"],
          })),
        ...pending
          .filter((review) => review.parent && present.has(review.parent.id))
          .map((review) => ({
            group: "edges" as const,
            data: { id: `review:${review.id}`, source: decisionNode(review.parent?.id ?? ""), target: `r:${review.id}` },
            classes: ["to-review"],
          })),
      ]);
    });
    const after = plan.boundingBox();
    const base = shifted ?? { dx: 0, dy: 0 };
    const dx = after.w - before.w;
    const dy = after.h - before.h;
    this.moveAside(planId, before, dx, dy);
    this.grown.set(planId, { dx: base.dx + dx, dy: base.dy + dy });
    this.relink();
  }

  /** Empties a plan back to one node; what moved aside when it opened moves back. */
  collapse(planId: string): void {
    const plan = this.cy.getElementById(planNode(planId));
    if (!plan.isParent()) return;
    const before = plan.boundingBox();
    const topLeft = { x: before.x1, y: before.y1 };
    plan.children().remove();
    plan.addClass("card");
    plan.position({ x: topLeft.x + CARD_WIDTH / 2, y: topLeft.y + CARD_HEIGHT / 2 });
    const after = plan.boundingBox();
    this.moveAside(planId, before, after.w - before.w, after.h - before.h);
    this.grown.delete(planId);
    this.trees.delete(planId);
    this.relink();
  }

  private moveAside(planId: string, box: cytoscape.BoundingBox12 & cytoscape.BoundingBoxWH, dx: number, dy: number): void {
    if (!dx && !dy) return;
    this.cy.batch(() => {
      this.cy.nodes("node.plan").forEach((other) => {
        if (other.data("ref") === planId) return;
        const b = other.boundingBox();
        const right = b.x1 >= box.x2 - 1;
        const below = !right && b.y1 >= box.y2 - 1 && b.x2 > box.x1;
        if (!right && !below) return;
        const shift = { x: right ? dx : 0, y: below ? dy : 0 };
        if (other.isParent()) other.children().shift(shift);
        else other.shift(shift);
      });
    });
  }

  /** What the links are drawn from: the hierarchy's plans and the dependencies of the decisions drawn. */
  setLinks(plans: PlanInfo[], dependencies: Dependency[]): void {
    this.plans = plans;
    this.dependencies = dependencies;
    this.relink();
  }

  private plans: PlanInfo[] = [];
  private dependencies: Dependency[] = [];

  /**
   * DEPENDS_ON and spawn links between what is drawn: an end inside a collapsed plan is drawn
   * from or to that plan, so a closed plan still shows what leads into and out of it.
   */
  private relink(): void {
    const wanted = new Map<string, cytoscape.ElementDefinition>();
    const end = (decisionId: string | null, planId: string | null): string | null => {
      if (decisionId && this.cy.getElementById(decisionNode(decisionId)).nonempty()) return decisionNode(decisionId);
      if (planId && this.cy.getElementById(planNode(planId)).nonempty()) return planNode(planId);
      return null;
    };
    for (const plan of this.plans) {
      if (!plan.parentPlanId) continue;
      const source = end(plan.spawnedById, plan.parentPlanId);
      const target = this.cy.getElementById(planNode(plan.id)).nonempty() ? planNode(plan.id) : null;
      if (!source || !target) continue;
      const id = `spawn:${source}->${target}`;
      wanted.set(id, { group: "edges", data: { id, source, target }, classes: "spawn" });
    }
    for (const { from, to } of this.dependencies) {
      // Drawn from the dependency to the dependent: influence flows left to right, as the tree does.
      const source = end(to.id, to.planId);
      const target = end(from.id, from.planId);
      if (!source || !target || source === target) continue;
      const id = `depends:${source}->${target}`;
      wanted.set(id, { group: "edges", data: { id, source, target }, classes: "depends" });
    }
    this.cy.batch(() => {
      this.cy.edges("edge.spawn, edge.depends").forEach((edge) => {
        if (!wanted.has(edge.id())) edge.remove();
      });
      for (const [id, definition] of wanted) if (this.cy.getElementById(id).empty()) this.cy.add(definition);
    });
  }

  select(decisionId: string | null): void {
    this.cy.$(":selected").unselect();
    if (!decisionId) return;
    const node = this.cy.getElementById(decisionNode(decisionId));
    if (node.nonempty()) {
      node.select();
      if (!this.cy.extent() || !node.boundingBox()) return;
      const view = this.cy.extent();
      const p = node.position();
      if (p.x < view.x1 || p.x > view.x2 || p.y < view.y1 || p.y > view.y2) this.cy.center(node);
    }
  }

  /** Marks a walk's decisions (and the collapsed plans it reaches) and dims the rest. */
  highlight(kind: Highlight | null, decisionIds: Set<string>, planIds: Set<string>): void {
    this.cy.batch(() => {
      this.cy.elements().removeClass("lit lit-impact dimmed");
      if (!kind) return;
      const mark = kind === "impact" ? "lit-impact" : "lit";
      const lit = this.cy.nodes().filter((node) => {
        const ref = String(node.data("ref"));
        if (node.hasClass("decision")) return decisionIds.has(ref);
        return node.hasClass("plan") && !node.isParent() && planIds.has(ref);
      });
      lit.addClass(mark);
      lit.edgesWith(lit).addClass(mark);
      this.cy.elements().not(lit).not(lit.edgesWith(lit)).not("node.plan:parent").addClass("dimmed");
    });
  }

  /** After a plan opened: the whole drawing while it is legible so, else the plan from its top left, at a legible zoom. */
  reveal(planId: string): void {
    const plan = this.cy.getElementById(planNode(planId));
    // Its decisions as laid out (just added, so none hidden) lie within what is shown while the plan is.
    const tree = this.trees.get(planId);
    this.legibleView(plan.nonempty() ? plan : this.cy.nodes().first(), undefined, "top-left", tree && this.shown(plan) ? tree : undefined);
  }

  /** Whether a plan is drawn (not hidden): its own display, which its decisions share; ``visible()`` would first work out its box. */
  private shown(plan: cytoscape.CollectionReturnValue): boolean {
    return plan.nonempty() && plan.style("display") !== "none" && plan.style("visibility") !== "hidden";
  }

  // ---- focus ---------------------------------------------------------------------------------------

  private focused: { decisionId: string; hops: number } | null = null;

  /**
   * Shows only what lies within ``hops`` steps up (what it comes from) and down (what comes from it)
   * of a decision, across plans: tree, dependency and spawn links; a spawn into an open plan reaches
   * that plan's root, and a plan's root is reached from the decision that spawned the plan. Null shows all.
   */
  focus(decisionId: string | null, hops: number): Set<string> {
    this.focused = decisionId ? { decisionId, hops } : null;
    return this.refocus();
  }

  /** The focus again after the drawing changed (a plan opened, another moment); the decision ids it shows. */
  refocus(): Set<string> {
    const shown = new Set<string>();
    this.cy.batch(() => {
      this.cy.elements().removeClass("outside-focus");
      const start = this.focused ? this.cy.getElementById(decisionNode(this.focused.decisionId)) : null;
      if (!this.focused || !start || start.empty()) return;
      let kept = start.union(start);
      for (const direction of ["up", "down"] as const) {
        let front: cytoscape.NodeCollection = start.union(start);
        for (let hop = 0; hop < this.focused.hops && front.nonempty(); hop += 1) {
          let next = this.cy.collection();
          front.forEach((node) => {
            next = next.union(this.step(node, direction));
          });
          next = next.difference(kept);
          kept = kept.union(next);
          front = next;
        }
      }
      const nodes = kept.union(kept.ancestors());
      nodes.forEach((n) => {
        if (n.hasClass("decision")) shown.add(String(n.data("ref")));
      });
      this.cy.elements().difference(nodes).difference(nodes.edgesWith(nodes)).addClass("outside-focus");
    });
    if (this.focused) this.legibleView(this.cy.getElementById(decisionNode(this.focused.decisionId)), this.cy.elements(":visible"), "centre");
    return shown;
  }

  private step(node: cytoscape.NodeSingular, direction: "up" | "down"): cytoscape.NodeCollection {
    const links = direction === "down" ? node.outgoers("edge") : node.incomers("edge");
    let reached = this.cy.collection();
    links.forEach((edge) => {
      const other = direction === "down" ? edge.target() : edge.source();
      // Into an open plan: its roots (decisions no tree edge leads to).
      if (other.isParent()) reached = reached.union(other.children("node.decision").filter((c) => c.incomers("edge.tree").empty()));
      else reached = reached.union(other);
    });
    if (direction === "up" && node.hasClass("decision") && node.incomers("edge.tree").empty()) {
      // A plan's root comes from the decision (or closed plan) that spawned its plan.
      reached = reached.union(node.parent().incomers("edge.spawn").sources());
    }
    return reached;
  }

  /** Where a decision (or a plan's card) is on the page (centred first when out of view): for the tests, which click it. */
  clientPosition(id: string): { x: number; y: number } | null {
    const decision = this.cy.getElementById(decisionNode(id));
    const node = decision.nonempty() ? decision : this.cy.getElementById(planNode(id));
    if (node.empty()) return null;
    const view = this.cy.extent();
    const p = node.position();
    if (p.x < view.x1 || p.x > view.x2 || p.y < view.y1 || p.y > view.y2) this.cy.center(node);
    const rendered = node.renderedPosition();
    const box = this.cy.container()?.getBoundingClientRect();
    return box ? { x: box.left + rendered.x, y: box.top + rendered.y } : null;
  }

  png(): Blob {
    return this.cy.png({ output: "blob", full: true, scale: 2, bg: "#ffffff" });
  }

  svg(): Blob {
    return new Blob([this.cy.svg({ full: true, scale: 1, bg: "#ffffff" })], { type: "image/svg+xml" });
  }

  /** What is drawn, for the tests and the benchmark: one record per node. */
  summary(): GraphNodeSummary[] {
    return this.cy.nodes().map((node) => ({
      id: String(node.data("ref")),
      kind: node.hasClass("plan") ? "plan" : node.hasClass("review") ? "review" : "decision",
      label: String(node.data(node.isParent() ? "openLabel" : "label") ?? ""),
      parent: node.parent().nonempty() ? String(node.parent().first().data("ref")) : null,
      classes: node.classes(),
      x: node.position("x"),
      y: node.position("y"),
      visible: node.visible(),
    }));
  }

  /** The labels in view and the size they are drawn at: for the tests. */
  legibility(): Legibility {
    const zoom = this.cy.zoom();
    const view = this.cy.extent();
    const labels: { id: string; px: number }[] = [];
    let hidden = 0;
    this.cy.nodes().forEach((node) => {
      if (!node.visible() || !String(node.style("label") ?? "")) return;
      const p = node.position();
      if (p.x < view.x1 || p.x > view.x2 || p.y < view.y1 || p.y > view.y2) return;
      const px = parseFloat(String(node.style("font-size"))) * zoom;
      if (px < LEGIBLE_PX) hidden += 1;
      else labels.push({ id: String(node.data("ref")), px });
    });
    return { zoom, labels, hidden };
  }
}
