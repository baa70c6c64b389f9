import type { JobGraph, JobVertex } from '../../graph/job-graph.js';
import type { StreamEdge } from '../../graph/stream-graph.js';
import type { InputChannel, OutputChannel } from '../channel/channel.js';
import { LocalChannel } from '../channel/local-channel.js';
import { isPointwise } from '../channel/partitioner.js';
import type { ChannelElement } from '../channel/stream-element.js';
import { subtaskKey } from '../checkpoint/state-persistence.js';
import type { SubtaskRestore } from '../checkpoint/subtask-state.js';
import type { Clock } from '../task/clock.js';
import { InputStreamTask } from '../task/input-stream-task.js';
import { SourceStreamTask } from '../task/source-stream-task.js';
import type { StreamTask, TaskCheckpointing, TaskDeployment } from '../task/stream-task.js';
import type { TaskScheduler } from '../task/task-scheduler.js';
import type { WatermarkReport } from '../watermark-alignment.js';

/**
 * One channel of the job graph: from subtask `producer` of the edge's source vertex to
 * subtask `consumer` of its target vertex. `id` numbers the channels in one fixed order, so
 * every process that builds the same graph gives a channel the same id.
 */
export interface ChannelSpec {
  readonly id: number;
  readonly edge: StreamEdge;
  readonly source: JobVertex;
  readonly target: JobVertex;
  readonly producer: number;
  readonly consumer: number;
  /** Logical input of the consumer (0 or 1) and the channel's index within it. */
  readonly input: number;
  readonly indexInInput: number;
  readonly capacityBuffers: number;
}

/** The input end a channel needs here: it takes the in-flight records of a restore first. */
export type RestorableInputChannel = InputChannel & { push(element: ChannelElement): void };

/** Where the two ends of channels that cross to another process come from (cluster runtime). */
export interface RemoteChannels {
  /** The producer is here, the consumer elsewhere. */
  output(spec: ChannelSpec): OutputChannel;
  /** The consumer is here, the producer elsewhere. */
  input(spec: ChannelSpec): RestorableInputChannel;
}

/** Whether producer subtask `producer` of `source` and consumer subtask `consumer` of `target` run in one process. */
export type SameProcess = (source: JobVertex, producer: number, target: JobVertex, consumer: number) => boolean;

const allInOneProcess: SameProcess = () => true;

/**
 * Every channel of the graph, in the fixed order that numbers them, with its capacity in
 * batches. A channel holds `buffersPerChannel` (exclusive) batches plus a share of its input
 * gate's `floatingBuffersPerGate`. As in Flink, where floating buffers serve the remote input
 * channels of a gate and a local channel reads from its producer's buffers, a channel that
 * crosses processes shares the floating buffers with the gate's other crossing channels only;
 * a channel within a process has its share over all channels of the gate. Crossing channels
 * need the room more: their credits come back across a connection, served between slices of
 * a busy single-threaded process.
 */
export function channelSpecs(
  graph: JobGraph,
  config: { buffersPerChannel: number; floatingBuffersPerGate: number },
  sameProcess: SameProcess = allInOneProcess,
): ChannelSpec[] {
  type Gate = { all: number; crossing: number };
  type Draft = Omit<ChannelSpec, 'capacityBuffers'> & { readonly crossing: boolean; readonly gate: Gate };
  const drafts: Draft[] = [];
  /** Channels and crossing channels of each consumer subtask's logical input. */
  const gates = new Map<string, Gate>();
  for (const v of graph.vertices) {
    // index within each (consumer, input): channels are appended in edge order, producer order
    const nextIndex = new Map<string, number>();
    for (const e of v.inputs) {
      const pointwise = isPointwise(e.streamEdge.partitioning);
      const t = e.streamEdge.typeNumber;
      for (let p = 0; p < e.source.parallelism; p++) {
        for (let c = 0; c < v.parallelism; c++) {
          if (pointwise && p !== c) continue;
          const k = `${c}/${t}`;
          const indexInInput = nextIndex.get(k) ?? 0;
          nextIndex.set(k, indexInInput + 1);
          const crossing = !sameProcess(e.source, p, v, c);
          const gateKey = `${v.id}/${k}`;
          let gate = gates.get(gateKey);
          if (gate === undefined) gates.set(gateKey, (gate = { all: 0, crossing: 0 }));
          gate.all++;
          if (crossing) gate.crossing++;
          drafts.push({ id: drafts.length, edge: e.streamEdge, source: e.source, target: v, producer: p, consumer: c, input: t - 1, indexInInput, crossing, gate });
        }
      }
    }
  }
  return drafts.map(({ crossing, gate, ...d }) => {
    const sharers = crossing ? gate.crossing : gate.all;
    return { ...d, capacityBuffers: config.buffersPerChannel + Math.ceil(config.floatingBuffersPerGate / sharers) };
  });
}

export interface WireTasksOptions {
  readonly graph: JobGraph;
  /** Whether a subtask runs in this process. */
  readonly isLocal: (vertex: JobVertex, subtaskIndex: number) => boolean;
  /** Needed when some channel crosses processes. */
  readonly remote?: RemoteChannels;
  readonly attemptNumber: number;
  readonly scheduler: TaskScheduler;
  readonly clock: Clock;
  readonly batchSizeRecords: number;
  readonly buffersPerChannel: number;
  readonly floatingBuffersPerGate: number;
  /** Where subtasks run relative to each other (default: all in this process). */
  readonly sameProcess?: SameProcess;
  readonly checkpointing: TaskCheckpointing | undefined;
  /** By subtaskKey(vertex id, subtask). */
  readonly restore: ReadonlyMap<string, SubtaskRestore> | undefined;
  /** Splits of each local source subtask, by subtaskKey. */
  readonly splits: ReadonlyMap<string, unknown[]>;
  /** Sends a source subtask's split request to its enumerator (on-request sources). */
  readonly requestSplit?: (vertexId: number, subtaskIndex: number) => void;
  /** Sends an aligned source subtask's watermark report to the JobManager. */
  readonly reportWatermark?: (vertexId: number, subtaskIndex: number, report: WatermarkReport) => void;
}

/**
 * Creates the tasks of the subtasks that run here and the channels between them: in-memory
 * channels where both ends are here, remote ends otherwise. In-flight records of an
 * unaligned checkpoint are put into the input channels first, to be replayed before new input.
 */
export function wireTasks(o: WireTasksOptions): { tasks: StreamTask[]; sourceTasks: SourceStreamTask[] } {
  const specs = channelSpecs(o.graph, { buffersPerChannel: o.buffersPerChannel, floatingBuffersPerGate: o.floatingBuffersPerGate }, o.sameProcess);
  const outputs = new Map<string, Map<StreamEdge, OutputChannel[]>>();
  const inputs = new Map<string, RestorableInputChannel[][]>();
  for (const v of o.graph.vertices) {
    const numInputs = v.inputs.some((e) => e.streamEdge.typeNumber === 2) ? 2 : v.inputs.length > 0 ? 1 : 0;
    for (let i = 0; i < v.parallelism; i++) {
      if (!o.isLocal(v, i)) continue;
      outputs.set(subtaskKey(v.id, i), new Map(v.outputs.map((e) => [e.streamEdge, []])));
      inputs.set(subtaskKey(v.id, i), Array.from({ length: numInputs }, () => []));
    }
  }
  for (const s of specs) {
    const producerHere = o.isLocal(s.source, s.producer);
    const consumerHere = o.isLocal(s.target, s.consumer);
    if (!producerHere && !consumerHere) continue;
    let out: OutputChannel | undefined;
    let inp: RestorableInputChannel | undefined;
    if (producerHere && consumerHere) {
      const ch = new LocalChannel(s.capacityBuffers);
      out = ch;
      inp = ch;
    } else {
      if (o.remote === undefined) throw new Error(`channel ${s.id} (${s.source.name} -> ${s.target.name}) crosses processes, but no network is set up`);
      if (producerHere) out = o.remote.output(s);
      else inp = o.remote.input(s);
    }
    if (out !== undefined) outputs.get(subtaskKey(s.source.id, s.producer))!.get(s.edge)!.push(out);
    if (inp !== undefined) {
      const list = inputs.get(subtaskKey(s.target.id, s.consumer))![s.input]!;
      if (list.length !== s.indexInInput) throw new Error(`channel ${s.id}: index ${s.indexInInput} in input ${s.input} of ${s.target.name}#${s.consumer}, expected ${list.length}`);
      list.push(inp);
    }
  }

  const tasks: StreamTask[] = [];
  const sourceTasks: SourceStreamTask[] = [];
  for (const v of o.graph.vertices) {
    const head = v.nodes[0]!;
    for (let i = 0; i < v.parallelism; i++) {
      if (!o.isLocal(v, i)) continue;
      const key = subtaskKey(v.id, i);
      const subtaskRestore = o.restore?.get(key);
      const d: TaskDeployment = {
        vertex: v,
        subtaskIndex: i,
        attemptNumber: o.attemptNumber,
        outputs: outputs.get(key)!,
        scheduler: o.scheduler,
        clock: o.clock,
        batchSizeRecords: o.batchSizeRecords,
        checkpointing: o.checkpointing,
        restore: subtaskRestore,
      };
      if (head.source !== undefined) {
        const request = o.requestSplit;
        const report = o.reportWatermark;
        const t = new SourceStreamTask(d, head.source, o.splits.get(key) ?? [], {
          ...(request === undefined ? {} : { requestSplit: () => request(v.id, i) }),
          ...(report === undefined ? {} : { reportWatermark: (r: WatermarkReport) => report(v.id, i, r) }),
        });
        sourceTasks.push(t);
        tasks.push(t);
      } else {
        const ins = inputs.get(key)!;
        for (const b of subtaskRestore?.inFlight ?? []) {
          ins[b.input]![b.channel]!.push({ kind: 'batch', values: [...b.values], timestamps: [...b.timestamps] });
        }
        tasks.push(new InputStreamTask(d, ins));
      }
    }
  }
  return { tasks, sourceTasks };
}
