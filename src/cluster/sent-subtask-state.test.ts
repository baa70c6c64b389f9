import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SubtaskState } from '../runtime/checkpoint/subtask-state.js';
import type { KeyedStateSnapshot } from '../runtime/state/keyed-state-snapshot.js';
import { packKeyGroups, packStateNames } from '../runtime/state/packed-key-groups.js';
import { SpillFileWriter } from '../runtime/state/spill-file-writer.js';
import { SpilledKeyedStateSnapshot } from '../runtime/state/spilled-keyed-state-snapshot.js';
import { encode } from '../runtime/storage/checksummed-file.js';
import { receivedSubtaskState, sentSubtaskState, type SentSubtaskState } from './sent-subtask-state.js';
import { MsgpackMessageCodec } from './wire/connection.js';

const root = mkdtempSync(join(tmpdir(), 'sluice-sent-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const range = { startKeyGroup: 8, endKeyGroup: 11 };
const snapshot: KeyedStateSnapshot = {
  formatVersion: 1,
  maxParallelism: 128,
  keyGroupRange: range,
  states: [{ name: 'count', kind: 'value', namespaced: false, groups: new Map([[9, Uint8Array.of(0x81, 1, 2)], [11, Uint8Array.of(0x81, 3, 4)]]) }],
  timers: new Map([[8, Uint8Array.of(0x92, 0xc0, 0xc0)]]),
};

async function spilled(dir: string): Promise<SpilledKeyedStateSnapshot> {
  const w = await SpillFileWriter.create(dir, range, 128);
  for (let kg = 8; kg <= 11; kg++) await w.append(kg, packStateNames(snapshot.states), [snapshot.states[0]!.groups.get(kg)], snapshot.timers.get(kg));
  return w.finish();
}

const stateOf = (keyed: SubtaskState['operators'][number]['keyed']): SubtaskState => ({ operators: [{ operatorUid: 'count', keyed, operatorState: [] }], sourceSplits: undefined, inFlight: [] });

/** Through the control connection's codec, as the ack goes from a TaskManager to the JobManager. */
function overTheWire(sent: SentSubtaskState): SentSubtaskState {
  const codec = new MsgpackMessageCodec<SentSubtaskState, SentSubtaskState>();
  return codec.decode(codec.encodeFrame(sent).subarray(4));
}

describe('subtask state sent from a TaskManager to the JobManager', () => {
  it('a full snapshot spilled into the shared taskowned/ directory goes as its file; the JobManager writes that file, and the TaskManager no longer removes it', async () => {
    const taskOwned = mkdtempSync(join(root, 'taskowned-'));
    const s = await spilled(taskOwned);
    const sent = sentSubtaskState(stateOf(s), taskOwned);
    s.discard(); // handed over: the TaskManager's snapshot is used up and leaves the file alone
    expect(readdirSync(taskOwned)).toHaveLength(1);
    const received = receivedSubtaskState(overTheWire(sent), taskOwned);
    const keyed = received.operators[0]!.keyed;
    expect(keyed).toBeInstanceOf(SpilledKeyedStateSnapshot);
    const file = keyed as SpilledKeyedStateSnapshot;
    expect(file.path).toBe(s.path);
    expect(file.keyGroupRange).toEqual(range);
    expect(file.keyGroupOffsets).toEqual(packKeyGroups(snapshot).offsets);
    const target = join(root, 'state-file');
    await file.writeFile(target, '0123456789abcdef');
    expect(Buffer.compare(readFileSync(target), encode(packKeyGroups(snapshot).data, 'state'))).toBe(0);
    expect(readdirSync(taskOwned)).toEqual([]);
  });

  it('keyed state on the heap goes as it is; a reference is refused without a taskowned/ directory or with a name that is not a spill file', async () => {
    const heap = receivedSubtaskState(overTheWire(sentSubtaskState(stateOf(snapshot), undefined)), undefined);
    expect(heap.operators[0]!.keyed).toEqual(snapshot);

    const taskOwned = mkdtempSync(join(root, 'taskowned-'));
    const sent = overTheWire(sentSubtaskState(stateOf(await spilled(taskOwned)), taskOwned));
    expect(() => receivedSubtaskState(sent, undefined)).toThrow(/sent a spilled snapshot .* has no taskowned\/ directory/);
    const renamed = overTheWire(sent);
    (renamed.operators[0]!.keyed as { fileName: string }).fileName = '../_metadata';
    expect(() => receivedSubtaskState(renamed, taskOwned)).toThrow(/refusing a spilled snapshot named "..\/_metadata"/);

    const elsewhere = await spilled(mkdtempSync(join(root, 'local-')));
    expect(() => sentSubtaskState(stateOf(elsewhere), taskOwned)).toThrow(/is not in .*taskowned/);
    expect(existsSync(elsewhere.path)).toBe(true);
    elsewhere.discard();
  });
});
