// The view a link reopens: which hierarchy, which plans open, which decision, which moment, which comparison; kept in the URL.

export interface SharedView {
  plan: string | null;
  open: string[];
  decision: string | null;
  asOf: string | null;
  /** A correction shown beside its replay (its correction decision's id). */
  compare: string | null;
}

export function readView(search: string = location.search): SharedView {
  const params = new URLSearchParams(search);
  const open = params.get("open");
  return {
    plan: params.get("plan"),
    open: open ? open.split(",").filter(Boolean) : [],
    decision: params.get("decision"),
    asOf: params.get("asOf"),
    compare: params.get("compare"),
  };
}

export function writeView(view: SharedView): void {
  const params = new URLSearchParams();
  if (view.plan) params.set("plan", view.plan);
  if (view.open.length) params.set("open", view.open.join(","));
  if (view.decision) params.set("decision", view.decision);
  if (view.asOf) params.set("asOf", view.asOf);
  if (view.compare) params.set("compare", view.compare);
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ""}`;
  if (url !== `${location.pathname}${location.search}`) history.replaceState(null, "", url);
}
