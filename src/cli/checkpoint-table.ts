import type { CheckpointStatsEntry } from '../runtime/checkpoint/checkpoint-stats.js';

function bytes(n: number): string {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** A job's checkpoint history as a text table, newest first. */
export function checkpointTable(entries: readonly CheckpointStatsEntry[]): string {
  const rows = [['id', 'status', 'type', 'triggered', 'duration', 'state size', 'alignment max', 'in-flight records', 'acks', 'failure']];
  for (const e of entries) {
    rows.push([
      String(e.id),
      e.status,
      e.checkpointType,
      new Date(e.triggerTimestampMs).toISOString().slice(11, 23),
      e.endToEndDurationMs === undefined ? '-' : `${e.endToEndDurationMs} ms`,
      bytes(e.stateSizeBytes),
      `${e.alignmentDurationMsMax} ms`,
      String(e.persistedInFlightRecords),
      `${e.numAcknowledgedSubtasks}/${e.numSubtasks}`,
      e.failureMessage ?? '',
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}
