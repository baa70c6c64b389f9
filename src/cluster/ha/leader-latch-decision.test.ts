import { describe, expect, it } from 'vitest';
import { latchPosition, mayLead, sequenceOf } from './leader-latch-decision.js';

describe('leader latch decisions', () => {
  it('orders by the sequence number, not by the name before it', () => {
    expect(sequenceOf('latch-0000000042')).toBe(42);
    expect(() => sequenceOf('latch-x')).toThrow(/10-digit/);
    const children = ['b-0000000007', 'a-0000000009', 'c-0000000003'];
    expect(latchPosition(children, 'c-0000000003')).toEqual({ kind: 'first' });
    expect(latchPosition(children, 'b-0000000007')).toEqual({ kind: 'behind', predecessor: 'c-0000000003' });
    expect(latchPosition(children, 'a-0000000009')).toEqual({ kind: 'behind', predecessor: 'b-0000000007' });
    expect(latchPosition(children, 'd-0000000001')).toEqual({ kind: 'gone' });
  });

  it('leads only while first and connected; suspended only when tolerated; never when lost', () => {
    expect(mayLead({ first: true, connection: 'connected', tolerateSuspended: false })).toBe(true);
    expect(mayLead({ first: false, connection: 'connected', tolerateSuspended: true })).toBe(false);
    expect(mayLead({ first: true, connection: 'suspended', tolerateSuspended: false })).toBe(false);
    expect(mayLead({ first: true, connection: 'suspended', tolerateSuspended: true })).toBe(true);
    expect(mayLead({ first: true, connection: 'lost', tolerateSuspended: true })).toBe(false);
  });
});
