import type { JobGraph } from '../graph/job-graph.js';

interface VertexPrint {
  readonly id: number;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly operators: readonly string[];
  readonly inputs: readonly string[];
  /** A source vertex's split assignment: the JobManager's enumerators must match the readers. */
  readonly splits?: 'static' | 'on-request';
}

/**
 * What must be the same in the job graph a TaskManager builds and the JobManager's: vertices,
 * their operators (name and uid), parallelism and edges. A job whose module builds a
 * different graph on another process (a random parallelism, a date in a name) cannot run there.
 */
export function graphFingerprint(g: JobGraph): string {
  const vertices: VertexPrint[] = g.vertices.map((v) => ({
    id: v.id,
    name: v.name,
    parallelism: v.parallelism,
    maxParallelism: v.maxParallelism,
    operators: v.nodes.map((n) => `${n.name} (uid ${n.operatorUid})`),
    inputs: v.inputs.map((e) => `${e.source.id}:${e.streamEdge.partitioning.kind}:${e.streamEdge.typeNumber}`),
    ...(v.nodes[0]!.source === undefined ? {} : { splits: v.nodes[0]!.source.splitAssignment ?? 'static' }),
  }));
  return JSON.stringify(vertices);
}

/** Undefined when equal; otherwise what differs, naming the operator. */
export function describeGraphDifference(expected: string, actual: string): string | undefined {
  if (expected === actual) return undefined;
  const a = JSON.parse(expected) as VertexPrint[];
  const b = JSON.parse(actual) as VertexPrint[];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return `this process built an extra vertex '${y!.name}'`;
    if (y === undefined) return `this process lacks the vertex '${x.name}'`;
    const ops = Math.max(x.operators.length, y.operators.length);
    for (let k = 0; k < ops; k++) {
      if (x.operators[k] !== y.operators[k]) return `operator ${k + 1} of vertex '${x.name}' is '${y.operators[k] ?? '(none)'}' here but '${x.operators[k] ?? '(none)'}' on the JobManager`;
    }
    if (x.parallelism !== y.parallelism) return `vertex '${x.name}' has parallelism ${y.parallelism} here but ${x.parallelism} on the JobManager`;
    if (x.maxParallelism !== y.maxParallelism) return `vertex '${x.name}' has max parallelism ${y.maxParallelism} here but ${x.maxParallelism} on the JobManager`;
    if (JSON.stringify(x.inputs) !== JSON.stringify(y.inputs)) return `vertex '${x.name}' has inputs ${y.inputs.join(', ')} here but ${x.inputs.join(', ')} on the JobManager`;
    if (x.splits !== y.splits) return `source '${x.name}' assigns its splits ${y.splits ?? '(none)'} here but ${x.splits ?? '(none)'} on the JobManager`;
    if (x.name !== y.name) return `vertex ${i} is '${y.name}' here but '${x.name}' on the JobManager`;
  }
  return 'the job graphs differ';
}
