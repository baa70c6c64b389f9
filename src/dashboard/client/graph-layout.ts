/** Lays out a job's vertices left to right by depth (sources first); edges as curves. */

export interface LayoutInput {
  readonly id: string;
  readonly inputs: readonly { readonly id: string; readonly ship_strategy: string }[];
}

export interface NodeBox {
  readonly id: string;
  readonly x: number;
  readonly y: number;
}

export interface EdgePath {
  readonly from: string;
  readonly to: string;
  readonly d: string;
  readonly label: string;
  readonly labelX: number;
  readonly labelY: number;
}

export const NODE_W = 250;
export const NODE_H = 112;
const GAP_X = 110;
const GAP_Y = 36;
const MARGIN = 20;

export function layoutGraph(nodes: readonly LayoutInput[]): { boxes: NodeBox[]; edges: EdgePath[]; width: number; height: number } {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0; // not a DAG: never loop
    seen.add(id);
    const n = byId.get(id);
    const d = n === undefined || n.inputs.length === 0 ? 0 : 1 + Math.max(...n.inputs.map((i) => depthOf(i.id, seen)));
    depth.set(id, d);
    return d;
  };
  const columns: string[][] = [];
  for (const n of nodes) {
    const d = depthOf(n.id, new Set());
    (columns[d] ??= []).push(n.id);
  }
  const rows = Math.max(1, ...columns.map((c) => c?.length ?? 0));
  const height = MARGIN * 2 + rows * NODE_H + (rows - 1) * GAP_Y;
  const boxes: NodeBox[] = [];
  const pos = new Map<string, NodeBox>();
  columns.forEach((col, d) => {
    const colHeight = col.length * NODE_H + (col.length - 1) * GAP_Y;
    const top = (height - colHeight) / 2;
    col.forEach((id, i) => {
      const b = { id, x: MARGIN + d * (NODE_W + GAP_X), y: top + i * (NODE_H + GAP_Y) };
      boxes.push(b);
      pos.set(id, b);
    });
  });
  const edges: EdgePath[] = [];
  for (const n of nodes) {
    const to = pos.get(n.id)!;
    for (const input of n.inputs) {
      const from = pos.get(input.id);
      if (from === undefined) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const mx = (x1 + x2) / 2;
      edges.push({ from: input.id, to: n.id, d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 6},${y2}`, label: input.ship_strategy, labelX: mx, labelY: (y1 + y2) / 2 - 6 });
    }
  }
  const width = MARGIN * 2 + columns.length * NODE_W + (columns.length - 1) * GAP_X;
  return { boxes, edges, width, height };
}
