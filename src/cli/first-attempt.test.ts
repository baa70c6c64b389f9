import { describe, expect, it } from 'vitest';
import { firstAttemptOutcome, reportFirstAttempt, stillStarting } from './first-attempt.js';

const tasks = (running: number, finished: number, total: number) => ({ running, finished, total });

describe('what sluice run --detached waits for: the first attempt running, or failing', () => {
  it('waits while the job is deployed and its tasks start', () => {
    expect(firstAttemptOutcome({ status: 'INITIALIZING', numRestarts: 0 })).toEqual({ kind: 'waiting' });
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 0, tasks: tasks(0, 0, 0) })).toEqual({ kind: 'waiting' });
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 0, tasks: tasks(3, 0, 4) })).toEqual({ kind: 'waiting' });
    // An older JobManager without task counts: never taken for running.
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 0 })).toEqual({ kind: 'waiting' });
  });

  it('running once every task runs or has finished', () => {
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 0, tasks: tasks(4, 0, 4) })).toEqual({ kind: 'running', tasks: 4 });
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 0, tasks: tasks(1, 3, 4) })).toEqual({ kind: 'running', tasks: 4 });
  });

  it('a failure: failed for good when the job failed, restarting otherwise (also once the next attempt runs)', () => {
    expect(firstAttemptOutcome({ status: 'FAILED', numRestarts: 0, failure: 'password authentication failed' })).toEqual({ kind: 'failed', cause: 'password authentication failed' });
    expect(firstAttemptOutcome({ status: 'RESTARTING', numRestarts: 0, failure: 'connect ECONNREFUSED' })).toEqual({ kind: 'restarting', cause: 'connect ECONNREFUSED' });
    expect(firstAttemptOutcome({ status: 'RUNNING', numRestarts: 1, failure: 'connect ECONNREFUSED', tasks: tasks(2, 0, 2) })).toEqual({ kind: 'restarting', cause: 'connect ECONNREFUSED' });
  });

  it('waiting for slots: said at once (it may take long), not a failure', () => {
    const r = { status: 'RUNNING', numRestarts: 0, tasks: tasks(0, 0, 0), 'waiting-for-slots': { required: 2, available: 0 } };
    expect(firstAttemptOutcome(r)).toEqual({ kind: 'waiting-for-slots', required: 2, available: 0 });
    expect(reportFirstAttempt('j1', { kind: 'waiting-for-slots', required: 2, available: 0 }, '')).toEqual({
      text: 'Job j1 waits for 2 slots (0 free): it starts when TaskManagers with free slots join (sluice taskmanager, or sluice cluster start --taskmanagers N); follow it with: sluice info j1',
      exitCode: 0,
    });
    // A failure first (the slots of a restart): the failure is what counts.
    expect(firstAttemptOutcome({ ...r, failure: 'TaskManager tm-1 was lost' }).kind).toBe('restarting');
  });

  it('the job ended already', () => {
    expect(firstAttemptOutcome({ status: 'FINISHED', numRestarts: 0 })).toEqual({ kind: 'ended', status: 'FINISHED' });
    expect(firstAttemptOutcome({ status: 'CANCELED', numRestarts: 0 })).toEqual({ kind: 'ended', status: 'CANCELED' });
  });

  it('without --jobmanager, the follow-up commands use the default address too', () => {
    expect(reportFirstAttempt('j1', { kind: 'restarting', cause: 'boom' }, '').text).toMatch(/follow it with: sluice info j1\nor cancel it: sluice cancel j1$/);
  });

  it('says what happened and how to follow or cancel the job; a failure exits non-zero', () => {
    const target = '--jobmanager 127.0.0.1:8081';
    expect(reportFirstAttempt('j1', { kind: 'running', tasks: 4 }, target)).toEqual({ text: 'Job j1 is running (4 tasks)', exitCode: 0 });
    expect(reportFirstAttempt('j1', { kind: 'failed', cause: 'boom' }, target)).toEqual({ text: 'Job j1 failed: boom', exitCode: 1 });
    const restarting = reportFirstAttempt('j1', { kind: 'restarting', cause: 'boom' }, target);
    expect(restarting.exitCode).toBe(1);
    expect(restarting.text).toBe(
      'Job j1 failed in its first attempt: boom\n' +
        'It restarts as its restart strategy allows; follow it with: sluice info --jobmanager 127.0.0.1:8081 j1\n' +
        'or cancel it: sluice cancel --jobmanager 127.0.0.1:8081 j1',
    );
    expect(stillStarting('j1', { status: 'RUNNING', numRestarts: 0, tasks: tasks(1, 0, 4) }, 30_400, target)).toBe(
      'Job j1 is not running yet after 30 s (running, 1 of 4 tasks running); follow it with: sluice info --jobmanager 127.0.0.1:8081 j1',
    );
  });
});
