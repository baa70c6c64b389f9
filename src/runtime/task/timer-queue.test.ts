import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { decodeTimerDelta, forEachEncodedTimer, TimerQueue } from './timer-queue.js';
import type { KeyType } from '../state/key-group.js';

/** The reference: a set of "t|key|ns" strings; fired in timestamp order. */
class ModelQueue {
  readonly timers = new Set<string>();
  add(t: number, k: KeyType, ns: number): boolean {
    const id = `${t}|${typeof k}:${k}|${ns}`;
    if (this.timers.has(id)) return false;
    this.timers.add(id);
    return true;
  }
  delete(t: number, k: KeyType, ns: number): boolean {
    return this.timers.delete(`${t}|${typeof k}:${k}|${ns}`);
  }
}

describe('timer queue', () => {
  it('matches a reference under random adds (mostly repeats), deletes and firing, also while firing', () => {
    const seed = 8675309;
    const random = seededRandom(seed);
    const q = new TimerQueue(8, (k) => (typeof k === 'number' ? k % 8 : String(k).length % 8));
    const model = new ModelQueue();
    let now = 0;
    const key = (): number | string => (random() < 0.8 ? Math.floor(random() * 40) : `k${Math.floor(random() * 10)}`);
    for (let step = 0; step < 20_000; step++) {
      const r = random();
      if (r < 0.75) {
        const t = now + Math.floor(random() * 60) - 10; // some in the past: they fire next time
        const k = key();
        const ns = Math.floor(random() * 4) * 10;
        expect(q.add(t, k, ns), `seed ${seed} step ${step}`).toBe(model.add(t, k, ns));
      } else if (r < 0.9) {
        const t = now + Math.floor(random() * 60) - 10; // some in the past: they fire next time
        const k = key();
        const ns = Math.floor(random() * 4) * 10;
        expect(q.delete(t, k, ns), `seed ${seed} step ${step}`).toBe(model.delete(t, k, ns));
      } else {
        now += Math.floor(random() * 20);
        let lastT = -Infinity;
        q.fireUpTo(now, (t, k, ns) => {
          expect(t, `seed ${seed} step ${step}: fired in timestamp order`).toBeGreaterThanOrEqual(lastT);
          lastT = t;
          expect(model.delete(t, k, ns), `seed ${seed} step ${step}: fired a live timer`).toBe(true);
          // Re-registering what fired, and registering for later, while firing.
          if (random() < 0.1) {
            const later = t + 1 + Math.floor(random() * 5);
            expect(q.add(later, k, ns), `seed ${seed} step ${step}`).toBe(model.add(later, k, ns));
          }
        });
        for (const id of model.timers) expect(Number(id.split('|')[0]) > now, `seed ${seed} step ${step}: ${id} is due`).toBe(true);
      }
      expect(q.size, `seed ${seed} step ${step}`).toBe(model.timers.size);
    }
  });

  it('fired in parts (stopped at random, adds and deletes between the parts) fires what it would in one go, in the same order', () => {
    const seed = 20261201;
    const random = seededRandom(seed);
    const groupOf = (k: KeyType): number => (typeof k === 'number' ? k % 8 : String(k).length % 8);
    const whole = new TimerQueue(8, groupOf);
    const parts = new TimerQueue(8, groupOf);
    const model = new ModelQueue();
    const key = (): number | string => (random() < 0.8 ? Math.floor(random() * 400) : `k${Math.floor(random() * 10)}`);
    for (let i = 0; i < 5_000; i++) {
      const t = Math.floor(random() * 50);
      const k = key();
      whole.add(t, k, 1);
      parts.add(t, k, 1);
      model.add(t, k, 1);
    }
    // Without changes between the parts: the same sequence.
    const inOneGo: string[] = [];
    expect(whole.fireUpTo(30, (t, k, ns) => inOneGo.push(`${t}|${k}|${ns}`))).toBe(true);
    const inParts: string[] = [];
    let calls = 0;
    for (let done = false; !done; calls++) done = parts.fireUpTo(30, (t, k, ns) => inParts.push(`${t}|${k}|${ns}`), () => random() < 0.2);
    expect(calls, `seed ${seed}: firing stopped part-way`).toBeGreaterThan(10);
    expect(inParts, `seed ${seed}`).toEqual(inOneGo);
    expect(parts.size).toBe(whole.size);
    // With adds (some due already) and deletes between the parts: every timer that fires is live (fires once), every due one fires.
    for (const id of inOneGo) model.timers.delete(id.replace(/\|(\d+)\|/, (_m, k) => `|number:${k}|`).replace(/\|(k\d+)\|/, '|string:$1|'));
    expect(parts.size).toBe(model.timers.size);
    for (let done = false, part = 0; !done; part++) {
      done = parts.fireUpTo(45, (t, k, ns) => {
        const id = `${t}|${typeof k}:${k}|${ns}`;
        expect(model.delete(t, k, ns), `seed ${seed} part ${part}: ${id} was live`).toBe(true);
      }, () => random() < 0.3);
      for (let i = 0; part < 40 && i < 20; i++) {
        const t = Math.floor(random() * 60);
        const k = key();
        if (random() < 0.7) expect(parts.add(t, k, 2), `seed ${seed} part ${part}`).toBe(model.add(t, k, 2));
        else expect(parts.delete(t, k, 1), `seed ${seed} part ${part}`).toBe(model.delete(t, k, 1));
      }
    }
    // Timers added after the last part may be due (they fire now); nothing else is left due.
    expect(parts.fireUpTo(45, (t, k, ns) => expect(model.delete(t, k, ns), `seed ${seed}`).toBe(true))).toBe(true);
    for (const id of model.timers) expect(Number(id.split('|')[0]) > 45, `seed ${seed}: ${id} is due`).toBe(true);
    expect(parts.size).toBe(model.timers.size);
  });

  it('packs each key group, whole and as a delta of changed keys, to exactly its timers (number and other keys)', () => {
    const seed = 4242;
    const random = seededRandom(seed);
    const groupOf = (k: KeyType): number => (typeof k === 'number' ? Math.abs(Math.trunc(k)) % 4 : String(k).length % 4);
    const q = new TimerQueue(4, groupOf);
    const id = (t: number, k: KeyType, ns: number): string => `${t}|${typeof k}:${k}|${ns}`;
    const model = new Map<string, [number, KeyType, number]>();
    for (let step = 0; step < 5000; step++) {
      const t = Math.floor(random() * 30) * 100;
      const k = random() < 0.85 ? Math.floor(random() * 300) + (random() < 0.1 ? 0.5 : 0) : `key-${Math.floor(random() * 20)}`;
      const ns = Math.floor(random() * 3);
      if (random() < 0.8) {
        q.add(t, k, ns);
        model.set(id(t, k, ns), [t, k, ns]);
      } else {
        q.delete(t, k, ns);
        model.delete(id(t, k, ns));
      }
    }
    const restored = new TimerQueue(4, groupOf);
    for (let g = 0; g < 4; g++) {
      const inGroup = [...model.values()].filter(([, k]) => groupOf(k) === g);
      const bytes = q.encodeGroup(g);
      const decoded: string[] = [];
      if (bytes !== undefined) forEachEncodedTimer(bytes, (t, k, ns) => decoded.push(id(t, k, ns)));
      expect(decoded.sort(), `seed ${seed} group ${g}`).toEqual(inGroup.map((x) => id(...x)).sort());
      if (bytes !== undefined) restored.addEncodedGroup(bytes);
      // A delta of some keys holds exactly their timers.
      const changed = new Set<KeyType>([7, 8, 9.5, 'key-3', 'key-11', 250].filter((k) => groupOf(k) === g));
      const delta = q.encodeGroupDelta(g, changed);
      if (changed.size === 0) continue;
      const d = decodeTimerDelta(delta!);
      expect(new Set(Array.from(d.replacedKeys)), `seed ${seed} group ${g}`).toEqual(changed);
      const inDelta: string[] = [];
      d.forEach((t, k, ns) => inDelta.push(id(t, k, ns)));
      expect(inDelta.sort(), `seed ${seed} group ${g}`).toEqual(inGroup.filter(([, k]) => changed.has(k)).map((x) => id(...x)).sort());
    }
    expect([...restored.entries()].map((x) => id(...x)).sort(), `seed ${seed}`).toEqual([...model.keys()].sort());
    expect(restored.size).toBe(model.size);
  });
});
