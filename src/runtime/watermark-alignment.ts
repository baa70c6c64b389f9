import { MAX_WATERMARK } from './channel/stream-element.js';

/** What a source subtask of an aligned group reports every update interval. */
export interface WatermarkReport {
  readonly group: string;
  /** Its last emitted watermark; MAX_WATERMARK when it is idle or its data ended (it holds nobody back). */
  readonly watermarkMs: number;
  readonly maxAllowedDriftMs: number;
}

/**
 * The JobManager's side of watermark alignment (Flink's SourceCoordinator with its watermark
 * alignment, FLIP-182): the watermark each source subtask of a group reported last, and what
 * the group's subtasks may reach. One per attempt: a restarted job aligns anew.
 */
export class WatermarkAlignmentCoordinator {
  private readonly groups = new Map<string, Map<string, number>>();

  /**
   * A subtask's report; the answer is the watermark it may reach: the least reported in its
   * group plus its drift (MAX_WATERMARK when every subtask of the group is idle or done).
   */
  report(subtask: string, r: WatermarkReport): number {
    let group = this.groups.get(r.group);
    if (group === undefined) this.groups.set(r.group, (group = new Map()));
    group.set(subtask, r.watermarkMs);
    let least = MAX_WATERMARK;
    for (const w of group.values()) if (w < least) least = w;
    return least >= MAX_WATERMARK - r.maxAllowedDriftMs ? MAX_WATERMARK : least + r.maxAllowedDriftMs;
  }
}
