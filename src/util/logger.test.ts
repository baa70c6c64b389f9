import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging, processLogger, resetLogging, taskNameFields, toLogger } from './logger.js';

/** The lines the process log wrote, as written. */
function capture(level: 'debug' | 'info' | 'warn' | 'error', format: 'plain' | 'json'): string[] {
  const lines: string[] = [];
  configureLogging({ level, format }, { write: (s) => void lines.push(s) });
  return lines;
}

afterEach(() => resetLogging());

describe('the process log', () => {
  it('plain: one `[component] LEVEL message` line per call; a TaskManager names itself', () => {
    const lines = capture('info', 'plain');
    processLogger('sluice').with({ jobId: 'j1' }).warn('job j1: boom; restarting in 10 ms');
    processLogger('taskmanager', { taskManager: 'tm-0' }).info('registered at the JobManager with 1 slot(s)');
    processLogger('jobmanager').error('job j1 failed: boom', { jobId: 'j1', err: new Error('boom') });
    expect(lines).toEqual([
      '[sluice] WARN job j1: boom; restarting in 10 ms\n',
      '[taskmanager tm-0] INFO registered at the JobManager with 1 slot(s)\n',
      '[jobmanager] ERROR job j1 failed: boom\n',
    ]);
  });

  it('json: one object per line with time, level, message, component and the fields of the logger and the call', () => {
    const lines = capture('info', 'json');
    processLogger('sluice').with({ jobId: 'j1' }).warn('job j1: boom', { vertex: 'numbers -> map', subtask: 1, err: new Error('boom') });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', message: 'job j1: boom', component: 'sluice', jobId: 'j1', vertex: 'numbers -> map', subtask: 1, pid: process.pid });
    expect(Number.isNaN(Date.parse(line.time as string))).toBe(false);
    expect(line.err).toMatchObject({ type: 'Error', message: 'boom' });
    expect((line.err as { stack: string }).stack).toMatch(/logger\.test\.ts/);
  });

  it.each(['plain', 'json'] as const)('%s: the level drops the lines below it', (format) => {
    const lines = capture('warn', format);
    const log = processLogger('jobmanager');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toMatch(/\bi\b|\bd\b/);
    configureLogging({ level: 'debug' });
    log.debug('now shown');
    expect(lines.at(-1)).toMatch(/now shown/);
  });

  it('a logger made before configureLogging follows the settings in force at each call', () => {
    const log = processLogger('cluster');
    const lines = capture('error', 'plain');
    log.warn('hidden');
    log.error('shown');
    expect(lines).toEqual(['[cluster] ERROR shown\n']);
  });

  it('a function target gets every message whatever its level (tests collect or silence lines so)', () => {
    const lines = capture('error', 'plain');
    const got: string[] = [];
    const log = toLogger((m) => got.push(m), 'sluice').with({ jobId: 'j' });
    log.debug('a');
    log.warn('b');
    expect(got).toEqual(['a', 'b']);
    expect(lines).toEqual([]);
  });

  it('taskNameFields: a task named as Flink names it gives its vertex and 0-based subtask', () => {
    expect(taskNameFields('numbers -> map (2/4)')).toEqual({ vertex: 'numbers -> map', subtask: 1 });
    expect(taskNameFields('odd name')).toEqual({ vertex: 'odd name' });
    expect(taskNameFields(undefined)).toEqual({});
  });
});
