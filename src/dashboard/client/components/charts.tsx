/** Small inline-SVG charts: values over checkpoint ids. */

export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  /** Drawn in the accent colour (savepoints). */
  readonly highlight?: boolean;
  readonly label: string;
}

const W = 560;
const H = 200;
const PAD = { left: 64, right: 16, top: 16, bottom: 28 };

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function Axes({ max, minX, maxX, format }: { max: number; minX: number; maxX: number; format: (v: number) => string }) {
  const ticks = [0, max / 2, max];
  return (
    <g class="axes">
      {ticks.map((t) => {
        const y = PAD.top + (H - PAD.top - PAD.bottom) * (1 - t / max);
        return (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y} y2={y} class="grid" />
            <text x={PAD.left - 6} y={y + 4} text-anchor="end">
              {format(t)}
            </text>
          </g>
        );
      })}
      <text x={PAD.left} y={H - 8} text-anchor="start">
        #{minX}
      </text>
      <text x={W - PAD.right} y={H - 8} text-anchor="end">
        #{maxX}
      </text>
    </g>
  );
}

function scale(points: readonly ChartPoint[]) {
  const max = niceMax(Math.max(...points.map((p) => p.y)));
  const minX = Math.min(...points.map((p) => p.x));
  const maxX = Math.max(...points.map((p) => p.x));
  const sx = (x: number): number => PAD.left + (maxX === minX ? (W - PAD.left - PAD.right) / 2 : ((x - minX) / (maxX - minX)) * (W - PAD.left - PAD.right));
  const sy = (y: number): number => PAD.top + (H - PAD.top - PAD.bottom) * (1 - y / max);
  return { max, minX, maxX, sx, sy };
}

export function LineChart({ title, points, format, testId }: { title: string; points: readonly ChartPoint[]; format: (v: number) => string; testId?: string }) {
  if (points.length === 0) return <div class="chart empty">{title}: no completed checkpoint yet</div>;
  const { max, minX, maxX, sx, sy } = scale(points);
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
        <Axes max={max} minX={minX} maxX={maxX} format={format} />
        <path d={path} class="line" />
        {points.map((p) => (
          <circle key={p.x} cx={sx(p.x)} cy={sy(p.y)} r={p.highlight ? 4.5 : 2.5} class={p.highlight ? 'dot highlight' : 'dot'}>
            <title>{p.label}</title>
          </circle>
        ))}
      </svg>
    </figure>
  );
}

export function BarChart({ title, points, format, testId }: { title: string; points: readonly ChartPoint[]; format: (v: number) => string; testId?: string }) {
  if (points.length === 0) return <div class="chart empty">{title}: no completed checkpoint yet</div>;
  const { max, minX, maxX, sx, sy } = scale(points);
  const slot = (W - PAD.left - PAD.right) / Math.max(1, points.length);
  const bw = Math.max(2, Math.min(24, slot * 0.7));
  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
        <Axes max={max} minX={minX} maxX={maxX} format={format} />
        {points.map((p) => (
          <rect key={p.x} x={sx(p.x) - bw / 2} y={sy(p.y)} width={bw} height={Math.max(0, H - PAD.bottom - sy(p.y))} class={p.highlight ? 'bar highlight' : 'bar'}>
            <title>{p.label}</title>
          </rect>
        ))}
      </svg>
    </figure>
  );
}
