import type { KeySelector } from '../api/functions.js';
import type { Source } from '../api/source.js';
import type { SourceWatermarksSpec } from '../runtime/task/source-watermarks.js';
import type { Partitioning } from '../runtime/channel/partitioner.js';
import { checkParallelism, computeDefaultMaxParallelism, type KeyType } from '../runtime/state/key-group.js';
import type { StateBackendSpec } from '../runtime/state/state-backend-factory.js';
import type { StreamOperator } from '../runtime/task/stream-operator.js';
import { isPhysical, type PhysicalTransformation, type Transformation } from './transformation.js';

/** A physical operator of the job with its resolved settings. */
export interface StreamNode {
  readonly id: number;
  readonly name: string;
  /** Stable id for state: the uid, or one derived from the position in the graph. */
  readonly operatorUid: string;
  readonly hasUserUid: boolean;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly chaining: 'always' | 'head' | 'never';
  readonly source: Source<unknown, unknown> | undefined;
  /** Watermarks the source generates itself (fromSource with a WatermarkStrategy), per split. */
  readonly sourceWatermarks?: SourceWatermarksSpec | undefined;
  readonly operator: (() => StreamOperator) | undefined;
  readonly keySelector1: KeySelector<unknown, KeyType> | undefined;
  readonly keySelector2: KeySelector<unknown, KeyType> | undefined;
  /** The keyed state backend of a keyed operator (`state.backend.type`); undefined = hashmap. */
  readonly stateBackend?: StateBackendSpec | undefined;
  readonly inEdges: StreamEdge[];
  readonly outEdges: StreamEdge[];
}

export interface StreamEdge {
  readonly source: StreamNode;
  readonly target: StreamNode;
  /** 1 or 2: which input of a two-input operator. */
  readonly typeNumber: 1 | 2;
  readonly partitioning: Partitioning;
  /** Set when the edge carries a side output of the source operator. */
  readonly sideOutputTag: string | undefined;
}

export interface StreamGraph {
  readonly jobName: string;
  readonly nodes: readonly StreamNode[];
}

export interface StreamGraphDefaults {
  readonly parallelism: number;
  readonly maxParallelism: number | undefined;
  readonly stateBackend?: StateBackendSpec | undefined;
}

interface Resolved {
  readonly node: StreamNode;
  readonly partitioning: Partitioning | undefined;
  readonly sideOutputTag: string | undefined;
}

export class GraphError extends Error {
  override readonly name = 'GraphError';
  /** The job's code built a graph that cannot run: a restart builds the same one (runtime/recovery/non-recoverable-error.ts). */
  readonly throwableType = 'NonRecoverableError';
}

/** Turns the transformations into operators and edges; virtual transformations become edge properties. */
export function buildStreamGraph(jobName: string, transformations: readonly Transformation[], defaults: StreamGraphDefaults): StreamGraph {
  const nodes = new Map<number, StreamNode>();
  const uids = new Map<string, string>();

  const nodeOf = (t: PhysicalTransformation): StreamNode => {
    const existing = nodes.get(t.id);
    if (existing !== undefined) return existing;
    const parallelism = t.parallelism ?? defaults.parallelism;
    const maxParallelism = t.maxParallelism ?? defaults.maxParallelism ?? computeDefaultMaxParallelism(parallelism);
    try {
      checkParallelism(parallelism, maxParallelism);
    } catch (e) {
      throw new GraphError(`operator '${t.name}': ${(e as Error).message}`);
    }
    const operatorUid = t.uid ?? `auto-${t.id}-${t.name}`;
    if (t.uid !== undefined) {
      const other = uids.get(t.uid);
      if (other !== undefined) throw new GraphError(`uid '${t.uid}' is used by both '${other}' and '${t.name}': uids must be unique in a job`);
      uids.set(t.uid, t.name);
    }
    const node: StreamNode = {
      id: t.id,
      name: t.name,
      operatorUid,
      hasUserUid: t.uid !== undefined,
      parallelism,
      maxParallelism,
      chaining: t.chaining,
      source: t.kind === 'source' ? t.source : undefined,
      sourceWatermarks: t.kind === 'source' ? t.watermarks : undefined,
      operator: t.kind === 'source' ? undefined : t.operator,
      keySelector1: t.kind === 'one-input' ? t.keySelector : t.kind === 'two-input' ? t.keySelector1 : undefined,
      keySelector2: t.kind === 'two-input' ? t.keySelector2 : undefined,
      stateBackend: defaults.stateBackend,
      inEdges: [],
      outEdges: [],
    };
    nodes.set(t.id, node);
    if (t.kind === 'one-input') connect(t.input, node, 1);
    if (t.kind === 'two-input') {
      connect(t.input1, node, 1);
      connect(t.input2, node, 2);
    }
    return node;
  };

  const resolve = (t: Transformation): Resolved[] => {
    if (isPhysical(t)) return [{ node: nodeOf(t), partitioning: undefined, sideOutputTag: undefined }];
    switch (t.kind) {
      case 'union':
        return t.inputs.flatMap(resolve);
      case 'partition':
        return resolve(t.input).map((r) => ({ ...r, partitioning: t.partitioning }));
      case 'side-output':
        return resolve(t.input).map((r) => ({ ...r, sideOutputTag: t.tag.id }));
    }
  };

  const connect = (input: Transformation, target: StreamNode, typeNumber: 1 | 2): void => {
    for (const r of resolve(input)) {
      let partitioning = r.partitioning;
      if (partitioning === undefined) {
        partitioning = r.node.parallelism === target.parallelism ? { kind: 'forward' } : { kind: 'rebalance' };
      }
      if (partitioning.kind === 'forward' && r.node.parallelism !== target.parallelism) {
        throw new GraphError(
          `forward partitioning from '${r.node.name}' (parallelism ${r.node.parallelism}) to '${target.name}' ` +
            `(parallelism ${target.parallelism}) would change the parallelism: use rebalance(), or give both the same parallelism`,
        );
      }
      const edge: StreamEdge = { source: r.node, target, typeNumber, partitioning, sideOutputTag: r.sideOutputTag };
      r.node.outEdges.push(edge);
      target.inEdges.push(edge);
    }
  };

  for (const t of transformations) if (isPhysical(t)) nodeOf(t);
  if (nodes.size === 0) throw new GraphError('the job defines no operators: add a source with env.fromSource(...) and a sink with sinkTo(...)');
  const sorted = [...nodes.values()].sort((a, b) => a.id - b.id);
  return { jobName, nodes: sorted };
}
