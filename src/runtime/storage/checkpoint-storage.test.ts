import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointStorageConformance, type StorageFixture } from './checkpoint-storage.conformance.js';
import type { CheckpointRef } from './checkpoint-storage.js';
import { FilesystemCheckpointStorage } from './filesystem-checkpoint-storage.js';
import { MemoryCheckpointStorage, memoryCheckpointPointer } from './memory-checkpoint-storage.js';
import type { FileStateHandle } from './snapshot-format.js';

function flip(bytes: Uint8Array, offset: number): void {
  const i = offset < 0 ? bytes.length + offset : offset;
  bytes[i] = bytes[i]! ^ 0xff;
}

async function damageFile(path: string, offset: number): Promise<void> {
  const bytes = await readFile(path);
  flip(bytes, offset);
  await writeFile(path, bytes);
}

checkpointStorageConformance({
  name: 'memory (jobmanager)',
  storesStateInFiles: false,
  async setUp({ jobId }): Promise<StorageFixture> {
    const store = new Map<number, Uint8Array>();
    return {
      storage: new MemoryCheckpointStorage({ jobId, store }),
      reopen: async () => new MemoryCheckpointStorage({ jobId, store }),
      metadataFile: (id) => memoryCheckpointPointer(jobId, id),
      async damageMetadata(id, offset) {
        flip(store.get(id)!, offset);
      },
      async truncateMetadata(id, lengthBytes) {
        store.set(id, store.get(id)!.subarray(0, lengthBytes));
      },
      async tearDown() {},
    };
  },
});

checkpointStorageConformance({
  name: 'filesystem',
  storesStateInFiles: true,
  async setUp({ jobId, dataInlineThresholdBytes }): Promise<StorageFixture> {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-checkpoints-'));
    const open = (): Promise<FilesystemCheckpointStorage> => FilesystemCheckpointStorage.open({ checkpointsDir: dir, jobId, dataInlineThresholdBytes });
    const metadataFile = (id: number): string => join(dir, jobId, `chk-${id}`, '_metadata');
    const stateFile = (h: FileStateHandle, c: CheckpointRef): string => join(c.pointer, h.path);
    return {
      storage: await open(),
      reopen: open,
      metadataFile,
      damageMetadata: (id, offset) => damageFile(metadataFile(id), offset),
      truncateMetadata: (id, lengthBytes) => truncate(metadataFile(id), lengthBytes),
      async damageStateFile(h, c, offset) {
        await damageFile(stateFile(h, c), offset);
        return stateFile(h, c);
      },
      async truncateStateFile(h, c, lengthBytes) {
        await truncate(stateFile(h, c), lengthBytes);
        return stateFile(h, c);
      },
      tearDown: () => rm(dir, { recursive: true, force: true }),
    };
  },
});
