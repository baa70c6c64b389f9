import { layoutGraph, NODE_H, NODE_W } from '../graph-layout';
import { percent, rate } from '../format';
import type { BackPressureLevel, PlanNode, VertexInfo } from '../types';

export interface VertexLive {
  readonly inRate: number | undefined;
  readonly outRate: number | undefined;
  readonly level: BackPressureLevel | undefined;
  readonly ratio: number | undefined;
  /** Highest share of time a subtask of the vertex was busy (neither idle nor back-pressured). */
  readonly busy: number | undefined;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Two lines of a chain's name ("a -> b -> c"), cut to fit the box. */
function nameLines(name: string): string[] {
  const parts = name.split(' -> ');
  if (parts.length === 1) return [truncate(name, 34)];
  const half = Math.ceil(parts.length / 2);
  return [truncate(parts.slice(0, half).join(' → '), 34), truncate(`→ ${parts.slice(half).join(' → ')}`, 34)];
}

/** The job graph as SVG: a box per vertex with parallelism, records/s in and out, back pressure. */
export function JobGraph(props: { nodes: readonly PlanNode[]; vertices: readonly VertexInfo[]; live: ReadonlyMap<string, VertexLive>; selected: string | undefined; onSelect: (id: string) => void }) {
  const { boxes, edges, width, height } = layoutGraph(props.nodes);
  const vertexById = new Map(props.vertices.map((v) => [v.id, v]));
  return (
    <div class="graph-wrap">
      <svg class="job-graph" viewBox={`0 0 ${width} ${height}`} width={width} height={height} data-testid="job-graph">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
          </marker>
        </defs>
        {edges.map((e) => (
          <g class="edge" key={`${e.from}-${e.to}`}>
            <path d={e.d} marker-end="url(#arrow)" />
            <text x={e.labelX} y={e.labelY} text-anchor="middle">
              {e.label}
            </text>
          </g>
        ))}
        {boxes.map((b) => {
          const v = vertexById.get(b.id);
          const node = props.nodes.find((n) => n.id === b.id)!;
          const live = props.live.get(b.id);
          // No live figures (a vertex not running): a grey strip, not a green one.
          const level = live?.level ?? 'none';
          const name = v?.name ?? node.description;
          const lines = nameLines(name);
          return (
            <g
              key={b.id}
              class={`vertex bp-${level}${props.selected === b.id ? ' selected' : ''}`}
              data-vertex-id={b.id}
              transform={`translate(${b.x},${b.y})`}
              onClick={() => props.onSelect(b.id)}
            >
              <title>{name}</title>
              <rect width={NODE_W} height={NODE_H} rx="8" class="box" />
              <rect width="8" height={NODE_H} rx="4" class="bp-strip" />
              {lines.map((l, i) => (
                <text x="18" y={22 + i * 16} class="name" key={i}>
                  {l}
                </text>
              ))}
              <text x="18" y={60} class="meta">
                Parallelism {node.parallelism} · {v?.status ?? ''}
              </text>
              <text x="18" y={78} class="meta" data-testid="vertex-rates">
                In {rate(live?.inRate)} · Out {rate(live?.outRate)}
              </text>
              <text x="18" y={98} class="meta bp-text">
                Busy {live?.busy === undefined ? '-' : percent(live.busy)} · Backpressure {live?.level === undefined ? '-' : `${live.level.toUpperCase()} (${percent(live.ratio ?? 0)})`}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
