import { unstorablePart } from '../checkpoint/unstorable-part.js';
import type { InputChannel } from '../channel/channel.js';
import type { ChannelElement, ChannelElementHandlers, RecordBatch } from '../channel/stream-element.js';
import { BarrierHandler } from '../checkpoint/barrier-handler.js';
import { InputGate } from './input-gate.js';
import type { StreamOperator } from './stream-operator.js';
import { INPUT_SLICE_RECORDS, StreamTask, type InputResult, type TaskDeployment } from './stream-task.js';
import { WatermarkValve } from './watermark-valve.js';

/**
 * A subtask with one or two logical inputs (a union is one input with many channels).
 * Reads batches record by record into the head operator; routes events to their handlers.
 */
export class InputStreamTask extends StreamTask {
  protected readonly sliceBudgetRecords = INPUT_SLICE_RECORDS;
  private readonly gates: InputGate[];
  private readonly valves: WatermarkValve[];
  private readonly head: StreamOperator;
  private batch: RecordBatch | null = null;
  private batchIndex = 0;
  private batchGate = 0;
  private nextGate = 0;
  private currentGate = 0;
  private readonly handlers: ChannelElementHandlers<void>;
  private readonly barrierHandler: BarrierHandler | undefined;
  /** First flat channel index of each input. */
  private readonly offsets: number[];
  /** Flat channel -> checkpoint whose in-flight data it is being captured for. */
  private readonly capturing = new Map<number, number>();
  private dataEndedReported = false;
  /** An unaligned barrier was put at the head of a channel: take it before the rest of the batch. */
  private priorityPending = false;
  /** The channel (gate, index) of the batch being processed. */
  private batchChannel = 0;
  /**
   * Per input: whether the key groups its batches carry are the head operator's (every edge
   * into the input is a keyBy whose key selector is the one the head keys that input by), so
   * the head is told each record's key group instead of hashing the key again.
   */
  private readonly keyGroupsUsable: readonly boolean[];

  constructor(d: TaskDeployment, inputs: readonly (readonly InputChannel[])[]) {
    super(d);
    const head = this.chain.head;
    if (head === undefined) throw new Error(`${this.name}: no operator to receive input`);
    this.head = head;
    if (inputs.length < 1 || inputs.length > 2) throw new Error(`${this.name}: ${inputs.length} inputs (1 or 2 supported)`);
    this.gates = inputs.map((channels, i) => new InputGate(i, channels));
    const node = d.vertex.nodes[0]!;
    this.keyGroupsUsable = inputs.map((_, i) => {
      const selector = i === 0 ? node.keySelector1 : node.keySelector2;
      const edges = d.vertex.inputs.filter((e) => e.streamEdge.typeNumber === i + 1);
      return selector !== undefined && edges.length > 0 && edges.every((e) => e.streamEdge.partitioning.kind === 'hash' && e.streamEdge.partitioning.keySelector === selector);
    });
    for (const channels of inputs) {
      for (const c of channels) {
        c.onReadable(() => this.wake());
        c.onPriorityEvent(() => {
          this.priorityPending = true;
          this.wake();
        });
      }
    }
    const twoInputs = inputs.length === 2;
    this.valves = inputs.map(
      (channels, i) =>
        new WatermarkValve(
          channels.length,
          (wm) => (twoInputs ? (i === 0 ? head.processWatermark1(wm) : head.processWatermark2(wm)) : head.processWatermark(wm)),
          (idle) => (twoInputs ? (i === 0 ? head.processWatermarkStatus1(idle) : head.processWatermarkStatus2(idle)) : head.processWatermarkStatus(idle)),
        ),
    );
    this.offsets = [];
    let total = 0;
    for (const channels of inputs) {
      this.offsets.push(total);
      total += channels.length;
    }
    const cp = d.checkpointing;
    this.barrierHandler =
      cp === undefined
        ? undefined
        : new BarrierHandler(cp.mode, {
            numChannels: total,
            blockChannel: (flat) => {
              const [g, c] = this.locate(flat);
              this.gates[g]!.setBlocked(c, true);
            },
            unblockAllChannels: () => {
              for (const g of this.gates) g.unblockAll();
              this.wake();
            },
            snapshot: (barrier, unaligned) => {
              this.performCheckpoint(barrier, unaligned, undefined);
              const b = this.batch;
              if (unaligned && b !== null && this.batchIndex < b.values.length) {
                // The rest of the batch being processed precedes the barrier on its channel
                // but is processed after the snapshot: it is in-flight data too.
                this.addInFlight(barrier.checkpointId, this.batchGate, this.batchChannel, [
                  { kind: 'batch', values: b.values.slice(this.batchIndex), timestamps: b.timestamps.slice(this.batchIndex) },
                ]);
              }
              const p = this.pendingSnapshots.get(barrier.checkpointId);
              const stats = this.barrierHandler?.lastAlignment;
              if (p !== undefined && stats !== undefined) p.alignmentDurationMs = stats.alignmentDurationMs;
            },
            startCapture: (id, flat) => this.capturing.set(flat, id),
            stopCapture: (_id, flat) => this.capturing.delete(flat),
            prioritizeBarrier: (flat, id) => {
              const [g, c] = this.locate(flat);
              const overtaken = this.gates[g]!.channels[c]!.prioritizeBarrier(id);
              if (overtaken === undefined) return false;
              this.addInFlight(id, g, c, overtaken);
              this.capturing.delete(flat);
              return true;
            },
            complete: (id) => {
              const p = this.pendingSnapshots.get(id);
              if (p === undefined) return;
              p.channelsComplete = true;
              this.maybeAcknowledge(p);
            },
            abort: (id, reason) => {
              this.dropPendingSnapshot(id);
              for (const [flat, cid] of this.capturing) if (cid === id) this.capturing.delete(flat);
              cp.responder.decline(this.d.vertex.id, this.d.subtaskIndex, id, 'CHECKPOINT_DECLINED_SUBSUMED', `${this.name}: ${reason}`);
            },
            schedule: (delayMs, fn) => this.processingTime.registerTimer(d.clock.nowMs() + delayMs, fn),
            nowMs: () => d.clock.nowMs(),
          });
    this.handlers = {
      batch: (b) => {
        this.batch = b;
        this.batchIndex = 0;
        this.batchGate = this.currentGate;
        this.batchChannel = this.gates[this.currentGate]!.lastChannel;
        if (this.capturing.size > 0) {
          const gate = this.gates[this.currentGate]!;
          const id = this.capturing.get(this.offsets[this.currentGate]! + gate.lastChannel);
          if (id !== undefined) this.addInFlight(id, this.currentGate, gate.lastChannel, [b]);
        }
      },
      watermark: (e) => this.valves[this.currentGate]!.inputWatermark(this.gates[this.currentGate]!.lastChannel, e.timestampMs),
      'watermark-status': (e) => this.valves[this.currentGate]!.inputStatus(this.gates[this.currentGate]!.lastChannel, e.idle),
      barrier: (e) => {
        const handler = this.barrierHandler;
        if (handler === undefined) throw new Error(`${this.name}: checkpoint barrier ${e.checkpointId} while checkpointing is off`);
        const g = this.currentGate;
        const c = this.gates[g]!.lastChannel;
        handler.onBarrier(this.offsets[g]! + c, e);
        const overtaken = this.gates[g]!.channels[c]!.takeOvertaken(e.checkpointId);
        if (overtaken.length > 0) this.addInFlight(e.checkpointId, g, c, overtaken);
      },
      'cancel-checkpoint': (e) => {
        const g = this.currentGate;
        this.barrierHandler?.onCancelMarker(this.offsets[g]! + this.gates[g]!.lastChannel, e.checkpointId);
      },
      'end-of-data': () => {
        const gate = this.gates[this.currentGate]!;
        gate.markDataEnded(gate.lastChannel);
      },
      'end-of-partition': (e) => {
        if (e.suspend) this.suspended = true;
        const gate = this.gates[this.currentGate]!;
        gate.markFinished(gate.lastChannel);
        // A channel that ended its data (its last watermark was the final one) no longer holds
        // the watermark back. One suspended by a stop without drain keeps its last watermark: the
        // others' must not fire windows (with part of their records) after the savepoint.
        if (!e.suspend) this.valves[this.currentGate]!.channelFinished(gate.lastChannel);
        this.barrierHandler?.onEndOfPartition(this.offsets[this.currentGate]! + gate.lastChannel);
      },
    };
  }

  private locate(flat: number): [number, number] {
    for (let g = this.offsets.length - 1; g >= 0; g--) if (flat >= this.offsets[g]!) return [g, flat - this.offsets[g]!];
    throw new Error(`channel ${flat} out of range`);
  }

  private addInFlight(checkpointId: number, input: number, channel: number, batches: readonly RecordBatch[]): void {
    const p = this.pendingSnapshots.get(checkpointId);
    if (p === undefined) return;
    for (const b of batches) {
      // An unaligned checkpoint stores these records: one that cannot be stored faithfully fails the checkpoint.
      for (let i = 0; i < b.values.length && p.inFlightError === undefined; i++) {
        const part = unstorablePart(b.values[i]);
        if (part !== undefined) {
          p.inFlightError =
            `a record in flight on input ${input} channel ${channel} cannot be stored with the unaligned checkpoint: ${part}. ` +
            'Records in flight must be data (plain objects, arrays, strings, numbers, Map, Set, Date, ...): create functions and symbols in the operator that uses them, or use aligned checkpoints';
        }
      }
      p.inFlight.push({ input, channel, values: b.values, timestamps: b.timestamps });
    }
  }

  protected override checkpointChannelsCompleteAtSnapshot(): boolean {
    return false;
  }

  protected override onCheckpointAborted(checkpointId: number, reason: string): void {
    this.barrierHandler?.abort(checkpointId, reason);
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

  /** Takes the unaligned barriers waiting at the head of channels, ahead of the current batch. */
  private takePriorityEvents(): void {
    this.priorityPending = false;
    for (let g = 0; g < this.gates.length; g++) {
      const gate = this.gates[g]!;
      for (let c = 0; c < gate.channels.length; c++) {
        const head = gate.channels[c]!.peek();
        if (head === undefined || head.kind !== 'barrier' || !head.options.unaligned) continue;
        if (gate.isBlocked(c)) continue;
        gate.channels[c]!.poll();
        gate.lastChannel = c;
        this.currentGate = g;
        this.handlers.barrier(head);
      }
    }
  }

  protected override whileInputPaused(): void {
    // An unaligned barrier overtakes the records an async operator does not take yet.
    if (this.priorityPending) this.takePriorityEvents();
  }

  protected processInput(budgetRecords: number): InputResult {
    if (this.priorityPending) this.takePriorityEvents();
    let processed = 0;
    const head = this.head;
    while (processed < budgetRecords) {
      const batch = this.batch;
      if (batch !== null) {
        const values = batch.values;
        const timestamps = batch.timestamps;
        const n = values.length;
        let i = this.batchIndex;
        const keyGroups = batch.keyGroups !== undefined && this.keyGroupsUsable[this.batchGate] === true ? batch.keyGroups : undefined;
        if (keyGroups !== undefined) {
          const second = this.batchGate === 1;
          while (i < n) {
            head.keyGroupHint = keyGroups[i]!;
            if (second) head.processElement2(values[i], timestamps[i]!);
            else head.processElement(values[i], timestamps[i]!);
            i++;
            if (this.availability.blocked || this.inputStopped || this.priorityPending) break;
          }
          // Not left for a record of another batch (one restored from in-flight data has none).
          head.keyGroupHint = -1;
        } else if (this.batchGate === 0) {
          while (i < n) {
            head.processElement(values[i], timestamps[i]!);
            i++;
            if (this.availability.blocked || this.inputStopped || this.priorityPending) break;
          }
        } else {
          while (i < n) {
            head.processElement2(values[i], timestamps[i]!);
            i++;
            if (this.availability.blocked || this.inputStopped || this.priorityPending) break;
          }
        }
        processed += i - this.batchIndex;
        this.recordsIn += i - this.batchIndex;
        if (i < n) {
          this.batchIndex = i;
          if (this.priorityPending) {
            this.takePriorityEvents();
            continue;
          }
          return 'wait';
        }
        this.batch = null;
        if (this.availability.blocked || this.inputStopped) return 'wait';
        continue;
      }
      const element = this.pollElement();
      if (element === undefined) {
        if (this.gates.every((g) => g.isFinished)) return 'end';
        if (!this.dataEndedReported && !this.suspended && this.gates.every((g) => g.isDataEnded)) {
          this.dataEndedReported = true;
          return 'end-of-data';
        }
        return 'wait';
      }
      (this.handlers[element.kind] as (e: ChannelElement) => void)(element);
      // A watermark whose timers stopped part-way: nothing else until they have fired.
      if (this.workUnfinished) return 'more';
      if (!this.dataEndedReported && !this.suspended && element.kind !== 'batch' && this.gates.every((g) => g.isDataEnded)) {
        this.dataEndedReported = true;
        return 'end-of-data';
      }
    }
    return 'more';
  }
}
