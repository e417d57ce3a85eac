// cytoscape-svg ships no types; the method it adds to a graph is declared beside its use (graph.ts).
declare module "cytoscape-svg" {
  import type { Ext } from "cytoscape";
  const extension: Ext;
  export default extension;
}
