import { MAX_WATERMARK, MIN_WATERMARK } from '../channel/stream-element.js';

/**
 * Combines the watermarks of an input's channels: the input's watermark is the minimum
 * over channels that are active (not idle) and not finished. When every live channel is
 * idle, the input is idle. Finished channels no longer hold the watermark back.
 */
export class WatermarkValve {
  private readonly watermarks: number[];
  private readonly idle: boolean[];
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
    this.finished = new Array<boolean>(numChannels).fill(false);
  }

  get currentWatermarkMs(): number {
    return this.lastOutputMs;
  }

  inputWatermark(channel: number, watermarkMs: number): void {
    if (this.finished[channel]) return;
    if (watermarkMs > this.watermarks[channel]!) this.watermarks[channel] = watermarkMs;
    if (this.idle[channel]) return;
    this.recompute();
  }

  inputStatus(channel: number, idle: boolean): void {
    if (this.finished[channel] || this.idle[channel] === idle) return;
    this.idle[channel] = idle;
    this.recompute();
  }

  channelFinished(channel: number): void {
    if (this.finished[channel]) return;
    this.finished[channel] = true;
    this.recompute();
  }

  private recompute(): void {
    let min = MAX_WATERMARK;
    let live = 0;
    let active = 0;
    for (let i = 0; i < this.watermarks.length; i++) {
      if (this.finished[i]) continue;
      live++;
      if (this.idle[i]) continue;
      active++;
      if (this.watermarks[i]! < min) min = this.watermarks[i]!;
    }
    if (live > 0 && active === 0) {
      if (!this.outputIdle) {
        this.outputIdle = true;
        this.emitStatus(true);
      }
      return;
    }
    if (this.outputIdle) {
      this.outputIdle = false;
      this.emitStatus(false);
    }
    if (live === 0) return; // every channel finished: the end-of-input path takes over
    if (min > this.lastOutputMs) {
      this.lastOutputMs = min;
      this.emitWatermark(min);
    }
  }
}
