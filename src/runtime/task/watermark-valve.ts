import { MIN_WATERMARK } from '../channel/stream-element.js';

/**
 * Combines the watermarks of an input's channels, as Flink's StatusWatermarkValve: the
 * input's watermark is the minimum over the *aligned* channels, those that are active (not
 * idle), not finished, and whose watermark has reached the last output watermark. A
 * channel that comes back from idleness behind the output does not hold it back until it
 * catches up; watermarks that arrive on an idle channel are ignored. When the last active
 * channel goes idle, the largest watermark of the channels is flushed and the input is
 * idle. Finished channels no longer count at all.
 */
export class WatermarkValve {
  private readonly watermarks: number[];
  private readonly idle: boolean[];
  private readonly aligned: boolean[];
  private readonly finished: boolean[];
  private lastOutputMs = MIN_WATERMARK;
  private outputIdle = false;

  constructor(
    numChannels: number,
    private readonly emitWatermark: (watermarkMs: number) => void,
    private readonly emitStatus: (idle: boolean) => void,
  ) {
    this.watermarks = new Array<number>(numChannels).fill(MIN_WATERMARK);
    this.idle = new Array<boolean>(numChannels).fill(false);
    this.aligned = new Array<boolean>(numChannels).fill(true);
    this.finished = new Array<boolean>(numChannels).fill(false);
  }

  get currentWatermarkMs(): number {
    return this.lastOutputMs;
  }

  inputWatermark(channel: number, watermarkMs: number): void {
    if (this.finished[channel] || this.idle[channel]) return;
    if (!(watermarkMs > this.watermarks[channel]!)) return;
    this.watermarks[channel] = watermarkMs;
    if (!this.aligned[channel] && watermarkMs >= this.lastOutputMs) this.aligned[channel] = true;
    this.emitMinOfAligned();
  }

  inputStatus(channel: number, idle: boolean): void {
    if (this.finished[channel] || this.idle[channel] === idle) return;
    this.idle[channel] = idle;
    if (idle) {
      this.aligned[channel] = false;
      if (!this.anyActive()) {
        // nothing will advance the watermark any more: flush what the channels reached
        if (this.watermarks[channel] === this.lastOutputMs) this.emitMaxOfLive();
        this.setOutputIdle(true);
      } else {
        this.emitMinOfAligned();
      }
    } else {
      if (this.watermarks[channel]! >= this.lastOutputMs) this.aligned[channel] = true;
      this.setOutputIdle(false);
    }
  }

  channelFinished(channel: number): void {
    if (this.finished[channel]) return;
    this.finished[channel] = true;
    this.aligned[channel] = false;
    let live = 0;
    for (let i = 0; i < this.finished.length; i++) if (!this.finished[i]) live++;
    if (live === 0) return; // every channel finished: the end-of-input path takes over
    if (!this.anyActive()) this.setOutputIdle(true);
    else this.emitMinOfAligned();
  }

  private anyActive(): boolean {
    for (let i = 0; i < this.idle.length; i++) if (!this.finished[i] && !this.idle[i]) return true;
    return false;
  }

  private setOutputIdle(idle: boolean): void {
    if (this.outputIdle === idle) return;
    this.outputIdle = idle;
    this.emitStatus(idle);
  }

  private emitMinOfAligned(): void {
    let min = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.watermarks.length; i++) {
      if (this.aligned[i] && !this.finished[i] && !this.idle[i] && this.watermarks[i]! < min) min = this.watermarks[i]!;
    }
    if (min !== Number.POSITIVE_INFINITY && min > this.lastOutputMs) {
      this.lastOutputMs = min;
      this.emitWatermark(min);
    }
  }

  private emitMaxOfLive(): void {
    let max = MIN_WATERMARK;
    for (let i = 0; i < this.watermarks.length; i++) if (!this.finished[i] && this.watermarks[i]! > max) max = this.watermarks[i]!;
    if (max > this.lastOutputMs) {
      this.lastOutputMs = max;
      this.emitWatermark(max);
    }
  }
}
