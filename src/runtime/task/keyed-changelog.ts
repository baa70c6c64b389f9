import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { snapshotBytes, type KeyedStateSnapshot } from '../state/keyed-state-snapshot.js';

/** state.backend.changelog.* as a task uses them. */
export interface ChangelogOptions {
  /** state.changelog.dstl.dfs.batch.persist-delay: how often the changes are sent to the log. */
  readonly persistDelayMs: number;
  /** state.backend.changelog.periodic-materialize.interval. */
  readonly materializeIntervalMs: number;
}

/**
 * The state changelog of one keyed operator subtask (Flink's changelog state backend): every
 * `persistDelayMs` the entries changed since the last segment are captured and appended to
 * the operator subtask's log, which the JobManager keeps durable in checkpoint storage; a
 * checkpoint then only adds the tail since the last segment. A materialization (a full
 * snapshot, the first segment too) restarts the log: periodically, and as soon as the log
 * has grown larger than the state, so a restore reads at most about twice the state.
 *
 * Captures are synchronous (copy on access), their serialization asynchronous; appends go
 * out strictly in order, and a checkpoint's tail goes out after every earlier segment.
 */
export class KeyedChangelog {
  private position = 0;
  private sending: Promise<void> = Promise.resolve();
  private materializedBytes = 0;
  private loggedBytes = 0;
  private segmentsSinceMaterialization = 0;
  private materializeRequested = true;

  constructor(
    private readonly backend: KeyedStateBackend,
    /** Appends a segment (or a materialization) at `position` to the log at the JobManager. */
    private readonly append: (position: number, snapshot: KeyedStateSnapshot) => void,
    /** A segment that could not be captured leaves a hole in the log: the task must fail. */
    private readonly fail: (error: unknown) => void,
  ) {}

  /** Captures still being serialized. */
  private serializing = 0;

  /**
   * The periodic segment: skipped while an earlier capture is still being serialized (a large
   * materialization), whose completion would otherwise be forced onto this thread at once;
   * the changes wait for the next segment.
   */
  persistIfIdle(): void {
    if (this.serializing === 0) void this.persist();
  }

  /** The next segment will be a materialization. */
  requestMaterialization(): void {
    this.materializeRequested = true;
  }

  /**
   * Captures the changes since the last segment now and appends them in the background, after
   * every earlier segment. Returns a promise of the position, resolved once appended.
   */
  persist(): Promise<number> {
    const tooLong = this.loggedBytes > this.materializedBytes || this.segmentsSinceMaterialization >= MAX_SEGMENTS;
    const materialize = this.materializeRequested || tooLong;
    this.materializeRequested = false;
    const position = ++this.position;
    const finish = this.backend.snapshot({ checkpointId: position, incremental: false, changelog: materialize ? 'materialize' : 'segment' });
    const previous = this.sending;
    this.serializing++;
    const appended = (async () => {
      let s: KeyedStateSnapshot;
      try {
        s = await finish();
      } finally {
        this.serializing--;
      }
      await previous;
      const bytes = snapshotBytes(s);
      if (s.baseCheckpointId === undefined) {
        this.materializedBytes = bytes;
        this.loggedBytes = 0;
        this.segmentsSinceMaterialization = 0;
      } else {
        // An empty segment changes nothing: not sent (the next one starts from this position).
        if (bytes === 0) return position;
        this.loggedBytes += bytes;
        this.segmentsSinceMaterialization++;
      }
      this.append(position, s);
      return position;
    })();
    this.sending = appended.then(
      () => {},
      (e: unknown) => {
        this.fail(e);
        throw e;
      },
    );
    this.sending.catch(() => {});
    appended.catch(() => {}); // reported through `fail`; a periodic segment's caller does not wait for it
    return appended;
  }
}

/** Segments of the log on one materialization before the next one is taken. */
const MAX_SEGMENTS = 256;
