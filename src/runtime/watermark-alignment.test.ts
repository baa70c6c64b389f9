import { describe, expect, it } from 'vitest';
import { MAX_WATERMARK, MIN_WATERMARK } from './channel/stream-element.js';
import { WatermarkAlignmentCoordinator } from './watermark-alignment.js';

describe('WatermarkAlignmentCoordinator', () => {
  it('answers the least watermark of the group plus the drift; groups are apart', () => {
    const c = new WatermarkAlignmentCoordinator();
    expect(c.report('1/0', { group: 'g', watermarkMs: 50_000, maxAllowedDriftMs: 1_000 })).toBe(51_000);
    expect(c.report('1/1', { group: 'g', watermarkMs: 10_000, maxAllowedDriftMs: 1_000 })).toBe(11_000);
    expect(c.report('1/0', { group: 'g', watermarkMs: 50_000, maxAllowedDriftMs: 1_000 })).toBe(11_000);
    expect(c.report('2/0', { group: 'other', watermarkMs: 99_000, maxAllowedDriftMs: 0 })).toBe(99_000);
    // The slow one catches up: the limit moves with it.
    expect(c.report('1/1', { group: 'g', watermarkMs: 45_000, maxAllowedDriftMs: 1_000 })).toBe(46_000);
  });

  it('a subtask without a watermark yet holds the group at the start; an idle or finished one (MAX) holds nobody', () => {
    const c = new WatermarkAlignmentCoordinator();
    c.report('1/0', { group: 'g', watermarkMs: 5_000, maxAllowedDriftMs: 100 });
    expect(c.report('1/1', { group: 'g', watermarkMs: MIN_WATERMARK, maxAllowedDriftMs: 100 })).toBe(MIN_WATERMARK + 100);
    expect(c.report('1/1', { group: 'g', watermarkMs: MAX_WATERMARK, maxAllowedDriftMs: 100 })).toBe(5_100);
    expect(c.report('1/0', { group: 'g', watermarkMs: MAX_WATERMARK, maxAllowedDriftMs: 100 })).toBe(MAX_WATERMARK);
  });
});
