/**
 * glibc malloc settings a TaskManager process starts with, unless the environment sets them.
 *
 * By default glibc serves allocations from 128 KB up (its threshold rises with use, to 32 MB
 * at most) with fresh mmap'd pages and gives freed memory back to the kernel, so a process
 * that keeps allocating and dropping network batches, socket reads and snapshot buffers
 * touches new pages all the time. On the virtual machines measured here a first touch costs
 * about 10 us per 4 KB page (2.5 ms per MB; see docs/architecture.md). A fixed mmap threshold
 * of 64 MB and a trim threshold of 256 MB keep freed memory in the process to be used again;
 * the price is that a TaskManager keeps up to 256 MB it freed (it is reused, not leaked).
 */
export const TASK_MANAGER_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: String(64 << 20),
  MALLOC_TRIM_THRESHOLD_: String(256 << 20),
};

/**
 * V8's young generation of a TaskManager: semi-spaces of 64 MB from the start (Node's default
 * grows them from 1 MB to 16 MB on 64-bit).
 * Records live briefly but not instantly: a batch waits in a channel's buffers for credit, a
 * window's accumulators change every record. With small semi-spaces a scavenge comes every few
 * milliseconds and copies, then promotes, whatever is in flight, which the old generation's
 * collector later walks again. Measured on `tcp-wordcount`: the main thread's GC share went
 * from 8% to 4% of the TaskManagers' CPU, and throughput rose 5-14% in three alternating runs
 * (32 MB gave less, 128 MB no more); see docs/architecture.md.
 *
 * The minimum is the maximum: left to grow and shrink, V8 gives back the pages of semi-spaces it
 * shrinks and faults them in again (zeroed by the kernel, ~10 us a page here) when they grow,
 * which took 4-6% of the TaskManagers' CPU on `tcp-wordcount`; fixed, they are touched once.
 */
export const TASK_MANAGER_SEMI_SPACE_MB = 64;

/**
 * The Node.js options of a TaskManager process: `configured` (env.java.opts.taskmanager), then
 * the young generation size above unless they set one.
 */
export function taskManagerNodeArgs(configured: string): string[] {
  const args = configured.split(/\s+/).filter((a) => a !== '');
  if (!args.some((a) => /^--(max|min)[-_]semi[-_]space[-_]size/.test(a))) {
    args.unshift(`--max-semi-space-size=${TASK_MANAGER_SEMI_SPACE_MB}`, `--min-semi-space-size=${TASK_MANAGER_SEMI_SPACE_MB}`);
  }
  return args;
}

/**
 * The environment variable that carries `cluster.secret` to `sluice jobmanager|taskmanager|
 * cluster` (over the configuration file, under `-D`): a process's environment is readable by
 * its user only, its command line by everyone on the machine (`ps`). The local cluster hands
 * the secret to its TaskManagers this way.
 */
export const CLUSTER_SECRET_ENV = 'SLUICE_CLUSTER_SECRET';

/** The environment of a TaskManager process: the parent's, with the malloc settings above where it has none. */
export function taskManagerEnvironment(parent: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...TASK_MANAGER_MALLOC_ENV, ...parent, ...extra };
}
