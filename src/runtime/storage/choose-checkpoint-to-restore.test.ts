import { describe, expect, it } from 'vitest';
import { chooseCheckpointToRestore, describeFallbacks } from './choose-checkpoint-to-restore.js';

describe('chooseCheckpointToRestore', () => {
  it('takes the newest readable checkpoint and reports the newer unreadable ones', () => {
    const choice = chooseCheckpointToRestore([
      { checkpointId: 7, readable: true, pointer: '/c/chk-7' },
      { checkpointId: 9, readable: new Error('checkpoint 9: file /c/chk-9/_metadata is corrupt (checksum mismatch: expected 00000001, found 00000002)'), pointer: '/c/chk-9' },
      { checkpointId: 8, readable: false, pointer: '/c/chk-8' },
      { checkpointId: 3, readable: false, pointer: '/c/chk-3' },
    ]);
    expect(choice.chosen).toEqual({ checkpointId: 7, readable: true, pointer: '/c/chk-7' });
    expect(choice.skipped).toEqual([
      { checkpointId: 9, reason: 'checkpoint 9: file /c/chk-9/_metadata is corrupt (checksum mismatch: expected 00000001, found 00000002)' },
      { checkpointId: 8, reason: 'unreadable' },
    ]);
    expect(describeFallbacks(choice)).toEqual([
      'checkpoint 9 cannot be read (checkpoint 9: file /c/chk-9/_metadata is corrupt (checksum mismatch: expected 00000001, found 00000002)), falling back to checkpoint 7',
      'checkpoint 8 cannot be read (unreadable), falling back to checkpoint 7',
    ]);
  });

  it('takes the newest when it is readable, and nothing when no candidate is', () => {
    expect(chooseCheckpointToRestore([{ checkpointId: 1, readable: true }, { checkpointId: 2, readable: true }])).toEqual({
      chosen: { checkpointId: 2, readable: true },
      skipped: [],
    });
    const none = chooseCheckpointToRestore([{ checkpointId: 1, readable: new Error('gone') }]);
    expect(none).toEqual({ chosen: undefined, skipped: [{ checkpointId: 1, reason: 'gone' }] });
    expect(describeFallbacks(none)).toEqual(['checkpoint 1 cannot be read (gone), and no older checkpoint is readable']);
    expect(chooseCheckpointToRestore([])).toEqual({ chosen: undefined, skipped: [] });
  });

  it('rejects a checkpoint listed twice', () => {
    expect(() => chooseCheckpointToRestore([{ checkpointId: 4, readable: true }, { checkpointId: 4, readable: false }])).toThrow(/candidate twice/);
  });
});
