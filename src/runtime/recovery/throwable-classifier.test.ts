import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/configuration.js';
import { GraphError } from '../../graph/stream-graph.js';
import { deserializeError, serializeError } from '../../cluster/control-messages.js';
import { TaskFailure } from '../task/task-failure.js';
import { NonRecoverableError, nonRecoverable } from './non-recoverable-error.js';
import { classifyThrowable, findNonRecoverable } from './throwable-classifier.js';

/** Through msgpack-free JSON, as a TaskManager's message is a plain object on the wire. */
const overTheWire = (e: unknown, task?: string): Error => deserializeError(JSON.parse(JSON.stringify(serializeError(e, task))));

describe('classifyThrowable (Flink ThrowableClassifier)', () => {
  it('plain errors, thrown values and timeouts are recoverable', () => {
    expect(classifyThrowable(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe('RecoverableError');
    expect(classifyThrowable('a string')).toBe('RecoverableError');
    expect(classifyThrowable(undefined)).toBe('RecoverableError');
    expect(classifyThrowable({ throwableType: 'RecoverableError' })).toBe('RecoverableError');
  });

  it('a NonRecoverableError, nonRecoverable(e), ConfigError and GraphError are not', () => {
    expect(classifyThrowable(new NonRecoverableError('no'))).toBe('NonRecoverableError');
    expect(classifyThrowable(new ConfigError('bad key'))).toBe('NonRecoverableError');
    expect(classifyThrowable(new GraphError('forward edge between parallelisms'))).toBe('NonRecoverableError');
    const cause = new TypeError('bad credentials');
    const marked = nonRecoverable(cause);
    expect(marked.message).toBe('bad credentials');
    expect(marked.cause).toBe(cause);
    expect(classifyThrowable(marked)).toBe('NonRecoverableError');
    expect(nonRecoverable('plain string').message).toBe('plain string');
  });

  it('any class declaring throwableType = NonRecoverableError counts, at any depth of the cause chain', () => {
    class MyAuthError extends Error {
      readonly throwableType = 'NonRecoverableError';
    }
    const root = new MyAuthError('denied');
    const chain = new TaskFailure('sink (1/2)', "operator 'sink' failed: denied", { cause: new Error('wrapped', { cause: root }) });
    expect(findNonRecoverable(chain)).toBe(root);
    expect(classifyThrowable(chain)).toBe('NonRecoverableError');
  });

  it('a cyclic cause chain ends the search', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(classifyThrowable(a)).toBe('RecoverableError');
  });

  it('the classification survives the trip from a TaskManager (serializeError, deserializeError)', () => {
    const failure = new TaskFailure('pg-sink (1/1)', "operator 'pg-sink' in task pg-sink (1/1) failed: password authentication failed", {
      cause: new NonRecoverableError('password authentication failed', { cause: new Error('28P01') }),
    });
    const back = overTheWire(failure);
    expect(back).toBeInstanceOf(TaskFailure);
    expect(classifyThrowable(back)).toBe('NonRecoverableError');
    expect((back.cause as Error).name).toBe('NonRecoverableError');
    // A subclass with another name still carries it.
    class TopicMissingError extends NonRecoverableError {
      override name = 'TopicMissingError';
    }
    expect(classifyThrowable(overTheWire(new Error('deploy failed', { cause: new TopicMissingError('no topic') })))).toBe('NonRecoverableError');
    // A non-recoverable error reported under a task's name (not a TaskFailure itself).
    expect(classifyThrowable(overTheWire(new NonRecoverableError('no', { cause: new Error('why') }), 'map (1/1)'))).toBe('NonRecoverableError');
    // Deeper than the wire's cause depth: the marker is kept on the last link sent.
    let deep: Error = new NonRecoverableError('deep');
    for (let i = 0; i < 12; i++) deep = new Error(`level ${i}`, { cause: deep });
    expect(classifyThrowable(overTheWire(deep))).toBe('NonRecoverableError');
    // And a recoverable one stays recoverable.
    expect(classifyThrowable(overTheWire(new TaskFailure('map (1/1)', 'boom', { cause: new Error('boom') })))).toBe('RecoverableError');
  });
});
