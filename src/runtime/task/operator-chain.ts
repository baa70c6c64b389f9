import type { JobVertex } from '../../graph/job-graph.js';
import { describeThrown } from '../../util/thrown.js';
import type { StreamEdge, StreamNode } from '../../graph/stream-graph.js';
import type { RecordWriter } from '../channel/record-writer.js';
import { keyGroupRangeForOperator } from '../state/key-group.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { createKeyedStateBackend } from '../state/state-backend-factory.js';
import { OperatorStateBackend } from '../state/operator-state-backend.js';
import type { OperatorRuntime } from './operator-runtime.js';
import { OperatorOutput, WriterSink, fanOut, type RecordSink } from './output.js';
import type { ProcessingTimeService } from './processing-time-service.js';
import type { SubtaskRestore } from '../checkpoint/subtask-state.js';
import { blame, ChainedInput, type StreamOperator } from './stream-operator.js';

export interface ChainEnvironment {
  readonly subtaskIndex: number;
  readonly attemptNumber: number;
  readonly processingTime: ProcessingTimeService;
  readonly writerFor: (edge: StreamEdge) => RecordWriter;
  readonly waitFor: (promise: Promise<void>) => void;
  readonly pauseInput: (promise: Promise<void>) => void;
  readonly enqueueMail: (mail: () => void) => void;
  /** See OperatorRuntime: given by subtasks that take input from channels. */
  readonly shouldYield?: (() => boolean) | undefined;
  readonly defer?: ((rest: () => boolean) => void) | undefined;
  readonly restore: SubtaskRestore | undefined;
  readonly checkpointing: boolean;
  /** Checkpoints snapshot keyed state whole (neither incremental nor changelog). */
  readonly fullSnapshots?: boolean;
  readonly checkpointTimeoutMs?: number | undefined;
  readonly restartDelayMsMax?: number | undefined;
}

export interface ChainedOperator {
  readonly node: StreamNode;
  readonly operator: StreamOperator;
  readonly operatorState: OperatorStateBackend;
  readonly keyedBackend: KeyedStateBackend | undefined;
}

/**
 * The operators of one subtask, wired: each emits into the next chained operator directly
 * (a method call) or into record writers for edges that leave the subtask.
 */
export class OperatorChain {
  /** Head first; the source node of a source vertex has no operator and is not listed. */
  readonly operators: readonly ChainedOperator[];
  /** Where a source subtask emits (the source node's output). */
  readonly sourceOutput: OperatorOutput<unknown> | undefined;

  constructor(vertex: JobVertex, env: ChainEnvironment) {
    const inChain = new Set(vertex.nodes);
    const built = new Map<StreamNode, ChainedOperator>();
    let sourceOutput: OperatorOutput<unknown> | undefined;
    for (let i = vertex.nodes.length - 1; i >= 0; i--) {
      const node = vertex.nodes[i]!;
      const main: RecordSink[] = [];
      const sides = new Map<string, RecordSink[]>();
      for (const e of node.outEdges) {
        const sink = inChain.has(e.target) ? new ChainedInput(built.get(e.target)!.operator) : new WriterSink(env.writerFor(e));
        if (e.sideOutputTag === undefined) main.push(sink);
        else {
          const list = sides.get(e.sideOutputTag) ?? [];
          list.push(sink);
          sides.set(e.sideOutputTag, list);
        }
      }
      const output = new OperatorOutput<unknown>(fanOut(main), new Map([...sides].map(([tag, list]) => [tag, fanOut(list)])));
      if (node.source !== undefined) {
        if (i !== 0) throw new Error(`source '${node.name}' must head its chain`);
        sourceOutput = output;
        continue;
      }
      const operator = node.operator!();
      const operatorState = new OperatorStateBackend();
      const keyedBackend =
        node.keySelector1 === undefined
          ? undefined
          : createKeyedStateBackend(
              node.stateBackend,
              keyGroupRangeForOperator(node.maxParallelism, node.parallelism, env.subtaskIndex),
              node.maxParallelism,
              () => env.processingTime.nowMs(),
              env.fullSnapshots === true,
            );
      const restored = env.restore?.operators.get(node.operatorUid);
      if (restored !== undefined) {
        operatorState.restore(restored.operatorState);
        if (restored.keyed.length > 0) {
          if (keyedBackend === undefined) throw new Error(`operator '${node.name}' (uid ${node.operatorUid}) has keyed state in the snapshot but is not on a keyed stream now`);
          keyedBackend.restore(restored.keyed);
        }
      }
      const runtime: OperatorRuntime = {
        name: node.name,
        uid: node.operatorUid,
        subtaskIndex: env.subtaskIndex,
        parallelism: node.parallelism,
        maxParallelism: node.maxParallelism,
        attemptNumber: env.attemptNumber,
        restoredCheckpointId: env.restore?.checkpointId,
        checkpointing: env.checkpointing,
        checkpointTimeoutMs: env.checkpointTimeoutMs,
        restartDelayMsMax: env.restartDelayMsMax,
        processingTime: env.processingTime,
        operatorState,
        keyedBackend,
        keySelector1: node.keySelector1,
        keySelector2: node.keySelector2,
        waitFor: env.waitFor,
        pauseInput: env.pauseInput,
        enqueueMail: env.enqueueMail,
        shouldYield: env.shouldYield,
        defer: env.defer,
      };
      operator.setup(runtime, output);
      built.set(node, { node, operator, operatorState, keyedBackend });
    }
    this.sourceOutput = sourceOutput;
    this.operators = vertex.nodes.filter((n) => built.has(n)).map((n) => built.get(n)!);
  }

  get head(): StreamOperator | undefined {
    return this.operators[0]?.operator;
  }

  /** Opens tail first, so every operator's downstream is ready before it emits. */
  async open(): Promise<void> {
    for (let i = this.operators.length - 1; i >= 0; i--) {
      const c = this.operators[i]!;
      try {
        await c.operator.open();
      } catch (e) {
        throw blame(new Error(`operator '${c.node.name}' failed to open: ${describeThrown(e)}`, { cause: e }), c.operator);
      }
    }
  }

  /** End of input: finishes head first, so what an operator flushes reaches the next one. */
  async finish(): Promise<void> {
    for (const c of this.operators) {
      try {
        await c.operator.finish();
      } catch (e) {
        throw blame(e, c.operator);
      }
    }
  }

  async close(): Promise<void> {
    let first: unknown;
    for (const c of this.operators) {
      try {
        await c.operator.close();
      } catch (e) {
        first ??= blame(e, c.operator);
      }
      c.keyedBackend?.dispose();
    }
    if (first !== undefined) throw first;
  }
}
