import type { InputChannel } from '../channel/channel.js';
import type { ChannelElement, ChannelElementHandlers, RecordBatch } from '../channel/stream-element.js';
import { InputGate } from './input-gate.js';
import type { StreamOperator } from './stream-operator.js';
import { StreamTask, type InputResult, type TaskDeployment } from './stream-task.js';
import { WatermarkValve } from './watermark-valve.js';

/**
 * A subtask with one or two logical inputs (a union is one input with many channels).
 * Reads batches record by record into the head operator; routes events to their handlers.
 */
export class InputStreamTask extends StreamTask {
  private readonly gates: InputGate[];
  private readonly valves: WatermarkValve[];
  private readonly head: StreamOperator;
  private batch: RecordBatch | null = null;
  private batchIndex = 0;
  private batchGate = 0;
  private nextGate = 0;
  private currentGate = 0;
  private readonly handlers: ChannelElementHandlers<void>;

  constructor(d: TaskDeployment, inputs: readonly (readonly InputChannel[])[]) {
    super(d);
    const head = this.chain.head;
    if (head === undefined) throw new Error(`${this.name}: no operator to receive input`);
    this.head = head;
    if (inputs.length < 1 || inputs.length > 2) throw new Error(`${this.name}: ${inputs.length} inputs (1 or 2 supported)`);
    this.gates = inputs.map((channels, i) => new InputGate(i, channels));
    for (const channels of inputs) for (const c of channels) c.onReadable(() => this.wake());
    const twoInputs = inputs.length === 2;
    this.valves = inputs.map(
      (channels, i) =>
        new WatermarkValve(
          channels.length,
          (wm) => (twoInputs ? (i === 0 ? head.processWatermark1(wm) : head.processWatermark2(wm)) : head.processWatermark(wm)),
          (idle) => head.processWatermarkStatus(idle),
        ),
    );
    this.handlers = {
      batch: (b) => {
        this.batch = b;
        this.batchIndex = 0;
        this.batchGate = this.currentGate;
      },
      watermark: (e) => this.valves[this.currentGate]!.inputWatermark(this.gates[this.currentGate]!.lastChannel, e.timestampMs),
      'watermark-status': (e) => this.valves[this.currentGate]!.inputStatus(this.gates[this.currentGate]!.lastChannel, e.idle),
      barrier: (e) => {
        throw new Error(`${this.name}: checkpoint barrier ${e.checkpointId} arrived but this runtime has no barrier handler`);
      },
      'cancel-checkpoint': () => {},
      'end-of-partition': () => {
        const gate = this.gates[this.currentGate]!;
        gate.markFinished(gate.lastChannel);
        this.valves[this.currentGate]!.channelFinished(gate.lastChannel);
      },
    };
  }

  override inputWatermarkMs(): number {
    return Math.min(...this.valves.map((v) => v.currentWatermarkMs));
  }

  private pollElement(): ChannelElement | undefined {
    const n = this.gates.length;
    for (let k = 0; k < n; k++) {
      const g = (this.nextGate + k) % n;
      const element = this.gates[g]!.poll();
      if (element !== undefined) {
        this.currentGate = g;
        this.nextGate = (g + 1) % n;
        return element;
      }
    }
    return undefined;
  }

  protected processInput(budgetRecords: number): InputResult {
    let processed = 0;
    const head = this.head;
    while (processed < budgetRecords) {
      const batch = this.batch;
      if (batch !== null) {
        const values = batch.values;
        const timestamps = batch.timestamps;
        const n = values.length;
        let i = this.batchIndex;
        if (this.batchGate === 0) {
          while (i < n) {
            head.processElement(values[i], timestamps[i]!);
            i++;
            if (this.availability.blocked || this.pendingAsync !== null) break;
          }
        } else {
          while (i < n) {
            head.processElement2(values[i], timestamps[i]!);
            i++;
            if (this.availability.blocked || this.pendingAsync !== null) break;
          }
        }
        processed += i - this.batchIndex;
        this.recordsIn += i - this.batchIndex;
        if (i < n) {
          this.batchIndex = i;
          return 'wait';
        }
        this.batch = null;
        if (this.availability.blocked || this.pendingAsync !== null) return 'wait';
        continue;
      }
      const element = this.pollElement();
      if (element === undefined) return this.gates.every((g) => g.isFinished) ? 'end' : 'wait';
      (this.handlers[element.kind] as (e: ChannelElement) => void)(element);
    }
    return 'more';
  }
}
