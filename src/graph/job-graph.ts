import type { StreamEdge, StreamGraph, StreamNode } from './stream-graph.js';

/** A chain of operators that runs in one subtask; its edges to other vertices cross channels. */
export interface JobVertex {
  readonly id: number;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /** Head first; every node after the head has exactly one (chained) input. */
  readonly nodes: readonly StreamNode[];
  readonly inputs: JobEdge[];
  readonly outputs: JobEdge[];
}

export interface JobEdge {
  readonly id: number;
  readonly source: JobVertex;
  readonly target: JobVertex;
  readonly streamEdge: StreamEdge;
}

export interface JobGraph {
  readonly jobName: string;
  readonly vertices: readonly JobVertex[];
  readonly edges: readonly JobEdge[];
}

/** Flink's chaining rule: a forward edge between equal parallelism into a single-input operator. */
export function isChainable(edge: StreamEdge, chainingEnabled: boolean): boolean {
  return (
    chainingEnabled &&
    edge.partitioning.kind === 'forward' &&
    edge.target.inEdges.length === 1 &&
    edge.source.parallelism === edge.target.parallelism &&
    edge.target.chaining === 'always' &&
    edge.source.chaining !== 'never' &&
    edge.target.source === undefined
  );
}

export function buildJobGraph(graph: StreamGraph, chainingEnabled = true): JobGraph {
  const headOf = new Map<StreamNode, StreamNode>();
  const findHead = (n: StreamNode): StreamNode => {
    const known = headOf.get(n);
    if (known !== undefined) return known;
    const only = n.inEdges.length === 1 ? n.inEdges[0]! : undefined;
    const head = only !== undefined && isChainable(only, chainingEnabled) ? findHead(only.source) : n;
    headOf.set(n, head);
    return head;
  };
  const chains = new Map<StreamNode, StreamNode[]>();
  for (const n of graph.nodes) {
    const head = findHead(n);
    let chain = chains.get(head);
    if (chain === undefined) {
      chain = [];
      chains.set(head, chain);
    }
    chain.push(n);
  }
  const vertices: JobVertex[] = [];
  const vertexOf = new Map<StreamNode, JobVertex>();
  for (const [head, nodes] of chains) {
    const v: JobVertex = {
      id: vertices.length,
      name: nodes.map((n) => n.name).join(' -> '),
      parallelism: head.parallelism,
      maxParallelism: head.maxParallelism,
      nodes,
      inputs: [],
      outputs: [],
    };
    vertices.push(v);
    for (const n of nodes) vertexOf.set(n, v);
  }
  const edges: JobEdge[] = [];
  for (const n of graph.nodes) {
    for (const e of n.outEdges) {
      const source = vertexOf.get(e.source)!;
      const target = vertexOf.get(e.target)!;
      if (source === target) continue; // chained
      const je: JobEdge = { id: edges.length, source, target, streamEdge: e };
      edges.push(je);
      source.outputs.push(je);
      target.inputs.push(je);
    }
  }
  return { jobName: graph.jobName, vertices, edges };
}
