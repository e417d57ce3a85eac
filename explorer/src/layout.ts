// A plan's decision tree laid out left to right in linear time: a decision's rank is its depth,
// leaves take successive rows and a parent sits midway between its first and last child.

/** One node of the tree: ``parent`` is null (or a node not in the list) for a root. */
export interface TreeItem {
  id: string;
  parent: string | null;
}

export interface Spacing {
  /** From one rank's centres to the next's. */
  rank: number;
  /** From one row's centres to the next's. */
  row: number;
}

export interface Point {
  x: number;
  y: number;
}

/**
 * Centres for ``items`` with the first root's first leaf at (0, 0). Siblings, and roots, keep the
 * order ``compare`` gives them (by id unless told), so the same tree is always drawn the same way.
 * Each node and edge is visited once, without recursion: a chain of any length lays out; an item
 * that closes a cycle is drawn as a root.
 *
 * ```ts
 * treePositions([{ id: "a", parent: null }, { id: "b", parent: "a" }, { id: "c", parent: "a" }], { rank: 10, row: 2 });
 * // a: (0, 1), b: (10, 0), c: (10, 2)
 * ```
 */
export function treePositions(
  items: readonly TreeItem[],
  spacing: Spacing,
  compare: (a: TreeItem, b: TreeItem) => number = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
): Map<string, Point> {
  const known = new Set(items.map((item) => item.id));
  const children = new Map<string, TreeItem[]>();
  const roots: TreeItem[] = [];
  for (const item of items) {
    if (item.parent !== null && item.parent !== item.id && known.has(item.parent)) {
      const siblings = children.get(item.parent);
      if (siblings) siblings.push(item);
      else children.set(item.parent, [item]);
    } else {
      roots.push(item);
    }
  }
  for (const siblings of children.values()) siblings.sort(compare);
  roots.sort(compare);

  const placed = new Map<string, Point>();
  let nextRow = 0;
  const walk = (root: TreeItem): void => {
    // Depth first with an explicit stack: a node is placed after its children (post-order).
    const stack: { item: TreeItem; depth: number; next: number }[] = [{ item: root, depth: 0, next: 0 }];
    const onStack = new Set([root.id]);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const below = (children.get(top.item.id) ?? []).filter((c) => !placed.has(c.id) && !onStack.has(c.id));
      if (top.next === 0 && below.length) {
        top.next = 1;
        for (let i = below.length - 1; i >= 0; i -= 1) {
          // Pushed in reverse, so the first child is taken first.
          stack.push({ item: below[i], depth: top.depth + 1, next: 0 });
          onStack.add(below[i].id);
        }
        continue;
      }
      stack.pop();
      onStack.delete(top.item.id);
      if (placed.has(top.item.id)) continue;
      const rows = (children.get(top.item.id) ?? []).map((c) => placed.get(c.id)?.y).filter((y): y is number => y !== undefined);
      const y = rows.length ? (Math.min(...rows) + Math.max(...rows)) / 2 : nextRow++ * spacing.row;
      placed.set(top.item.id, { x: top.depth * spacing.rank, y });
    }
  };
  for (const root of roots) walk(root);
  // What only a cycle can reach: each the root of what hangs below it.
  for (const item of items) if (!placed.has(item.id)) walk(item);
  return placed;
}
