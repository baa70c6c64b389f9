import { describe, expect, it } from 'vitest';
import { ChangePosition } from './change-position.js';
import { formatLsn, parseLsn } from './lsn.js';

const L = (s: string): bigint => parseLsn(s);

/** Feeds transactions (commit LSN, end LSN, number of changes) and returns the emitted (commit, seq) pairs. */
function feed(p: ChangePosition, txns: readonly [string, string, number][]): string[] {
  const out: string[] = [];
  for (const [commit, end, n] of txns) {
    p.begin(L(commit));
    for (let i = 0; i < n; i++) {
      const seq = p.change();
      if (seq !== undefined) out.push(`${commit}#${seq}`);
    }
    p.commit(L(end));
  }
  return out;
}

describe('LSN', () => {
  it('parses and formats X/Y, refuses other text naming the setting', () => {
    expect(parseLsn('16/B374D848')).toBe(0x16_b374_d848n);
    expect(formatLsn(0x16_b374_d848n)).toBe('16/B374D848');
    expect(formatLsn(parseLsn('0/0'))).toBe('0/0');
    expect(() => parseLsn('16-B374', 'startup.lsn')).toThrow(/startup.lsn must be a PostgreSQL LSN like/);
  });
});

describe('ChangePosition (pure)', () => {
  const txns: [string, string, number][] = [
    ['0/100', '0/130', 2],
    ['0/200', '0/230', 3],
    ['0/300', '0/330', 1],
  ];

  it('a fresh position emits everything; resumeLsn is the last commit end', () => {
    const p = new ChangePosition({ slot: 's', resumeLsn: '0/50' });
    expect(feed(p, txns)).toEqual(['0/100#1', '0/100#2', '0/200#1', '0/200#2', '0/200#3', '0/300#1']);
    expect(p.snapshot('s')).toEqual({ slot: 's', resumeLsn: '0/330' });
  });

  it('a checkpoint inside a transaction: restored, the server resends it and its first changes are skipped', () => {
    const p = new ChangePosition({ slot: 's', resumeLsn: '0/50' });
    feed(p, [txns[0]!]);
    p.begin(L('0/200'));
    p.change();
    p.change();
    const snap = p.snapshot('s');
    expect(snap).toEqual({ slot: 's', resumeLsn: '0/130', partial: { commitLsn: '0/200', emitted: 2 } });
    expect(p.confirmableLsn).toBe(L('0/130'));
    // The server resends from the confirmed position (at most resumeLsn): transaction 0/100 again too.
    const restored = new ChangePosition(snap);
    expect(feed(restored, txns)).toEqual(['0/200#3', '0/300#1']);
    expect(restored.snapshot('s')).toEqual({ slot: 's', resumeLsn: '0/330' });
  });

  it('a checkpoint after the last change but before the commit skips the whole transaction', () => {
    const restored = new ChangePosition({ slot: 's', resumeLsn: '0/130', partial: { commitLsn: '0/200', emitted: 3 } });
    expect(feed(restored, txns.slice(1))).toEqual(['0/300#1']);
  });

  it('keepalive progress moves resumeLsn between transactions only', () => {
    const p = new ChangePosition({ slot: 's', resumeLsn: '0/50' });
    p.progress(L('0/90'));
    expect(p.snapshot('s').resumeLsn).toBe('0/90');
    p.begin(L('0/100'));
    p.change();
    p.progress(L('0/99'));
    expect(p.snapshot('s')).toEqual({ slot: 's', resumeLsn: '0/90', partial: { commitLsn: '0/100', emitted: 1 } });
    p.commit(L('0/130'));
    p.progress(L('0/120'));
    expect(p.snapshot('s').resumeLsn).toBe('0/130');
  });

  it('a restored partial transaction that the server does not send again is an error, not a silent loss', () => {
    const restored = new ChangePosition({ slot: 's', resumeLsn: '0/130', partial: { commitLsn: '0/200', emitted: 1 } });
    expect(() => feed(restored, [txns[2]!])).toThrow(/in the middle of the transaction committed at 0\/200.*lost/);
  });
});
