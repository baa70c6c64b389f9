import { describe, expect, it } from 'vitest';
import { classifyThrowable } from '../../runtime/recovery/throwable-classifier.js';
import { connectionFailure, connectionSources, environmentNote, isPermanentPgError, pgFailure } from './pg-failures.js';

/** A server error as pg makes it: a message and a SQLSTATE in `code`. */
const serverError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe('which PostgreSQL failures a restart cannot fix', () => {
  it.each([
    ['28P01', 'password authentication failed for user "x"'],
    ['28000', 'role "x" does not exist'],
    ['3D000', 'database "x" does not exist'],
    ['42P01', 'relation "t" does not exist'],
    ['42501', 'permission denied for table t'],
    ['42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification'],
    ['55000', 'prepared transactions are disabled'],
  ])('SQLSTATE %s (%s) is permanent', (code, message) => {
    expect(isPermanentPgError(serverError(code, message))).toBe(true);
    expect(classifyThrowable(pgFailure('sink: writing failed', serverError(code, message)))).toBe('NonRecoverableError');
  });

  it.each([
    ['08006', 'connection failure'],
    ['53300', 'sorry, too many clients already'],
    ['57P01', 'terminating connection due to administrator command'],
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
    ['55000', 'prepared transaction with identifier "x" is busy'],
  ])('SQLSTATE %s (%s) is transient', (code, message) => {
    expect(isPermanentPgError(serverError(code, message))).toBe(false);
    expect(classifyThrowable(pgFailure('sink: writing failed', serverError(code, message)))).toBe('RecoverableError');
  });

  it("pg's own errors: no password for a server that asks for one, no TLS, are permanent; a refused or timed-out connection is not", () => {
    expect(isPermanentPgError(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'))).toBe(true);
    expect(isPermanentPgError(new Error('The server does not support SSL connections'))).toBe(true);
    expect(isPermanentPgError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isPermanentPgError(new Error('Connection terminated due to connection timeout'))).toBe(false);
  });
});

describe('what a refused connection says about whose environment it read', () => {
  it('each part: the options (connection string first), a PG* variable, or the default', () => {
    const options = "the sink's connection options";
    expect(connectionSources({ host: 'h', port: 5433, user: 'u', password: 'p', database: 'd' }, {})).toEqual({
      host: options,
      port: options,
      user: options,
      password: options,
      database: options,
    });
    expect(connectionSources({ connectionString: 'postgresql://u:p@h/d' }, { PGUSER: 'x', PGPASSWORD: 'y' })).toMatchObject({ host: options, user: options, password: options, port: 'the default (5432)' });
    expect(connectionSources({}, { PGHOST: 'db', PGPORT: '6432', PGUSER: 'x', PGPASSWORD: 'y', PGDATABASE: 'z' })).toEqual({
      host: 'PGHOST',
      port: 'PGPORT',
      user: 'PGUSER',
      password: 'PGPASSWORD',
      database: 'PGDATABASE',
    });
    expect(connectionSources({ connectionString: 'postgresql://h/d' }, { USER: 'alice' })).toEqual({
      host: options,
      port: 'the default (5432)',
      user: 'the OS user (alice)',
      password: undefined,
      database: options,
    });
  });

  it('a TaskManager without PGPASSWORD, where the submitting shell had it: the note says whose environment was read', () => {
    const noPassword = new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string');
    const note = environmentNote(noPassword, { user: 'alice', database: 'shop' }, {}, 'TaskManager tm-1 on host h1 (pid 7)', true);
    expect(note).toBe(
      "connecting from TaskManager tm-1 on host h1 (pid 7): user and database from the sink's connection options, " +
        "no password (none in the sink's connection options, no PGPASSWORD in that process's environment); " +
        "PG* variables are read in the TaskManager's environment, not the submitting shell's: give them in the sink's connection options, or set them where the TaskManagers are started",
    );
    const wrong = serverError('28P01', 'password authentication failed for user "alice"');
    expect(environmentNote(wrong, {}, { PGUSER: 'alice', PGPASSWORD: 'old', PGDATABASE: 'shop' }, 'TaskManager tm-2 on host h2 (pid 9)', true)).toMatch(
      /^connecting from TaskManager tm-2 on host h2 \(pid 9\): user from PGUSER, password from PGPASSWORD, database from PGDATABASE; PG\* variables are read in the TaskManager's environment, not the submitting shell's/,
    );
    // All given in the options: nothing about environments; the password only when it was refused.
    expect(environmentNote(new Error('connect ETIMEDOUT'), { host: 'db', port: 5432 }, { PGHOST: 'other' }, 'this process on host h (pid 1)', false)).toBe(
      "connecting from this process on host h (pid 1): host and port from the sink's connection options",
    );
    expect(environmentNote(wrong, { user: 'alice', password: 'p', database: 'shop' }, {}, 'this process on host h (pid 1)', false)).toBe(
      "connecting from this process on host h (pid 1): user, password and database from the sink's connection options",
    );
    expect(environmentNote(serverError('3D000', 'database "shop" does not exist'), { user: 'alice', database: 'shop' }, {}, 'this process on host h (pid 1)', false)).toBe(
      "connecting from this process on host h (pid 1): user and database from the sink's connection options",
    );
  });

  it('connectionFailure: refused credentials are non-recoverable and carry the note; a refused connection is neither', () => {
    const refused = connectionFailure('sink', 'alice@h:5432/shop', serverError('28P01', 'password authentication failed for user "alice"'), { user: 'alice' }, {});
    expect(classifyThrowable(refused)).toBe('NonRecoverableError');
    expect(refused.message).toMatch(/^sink: cannot connect to PostgreSQL at alice@h:5432\/shop: password authentication failed for user "alice" \(SQLSTATE 28P01\) \(connecting from .*no password/);
    // A server not reached: transient, and the note is about where the host and port came from.
    const down = connectionFailure('sink', 'alice@localhost:5432/shop', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), { user: 'alice' }, {});
    expect(classifyThrowable(down)).toBe('RecoverableError');
    expect(down.message).toMatch(
      /^sink: cannot connect to PostgreSQL at alice@localhost:5432\/shop: connect ECONNREFUSED 127\.0\.0\.1:5432 \(connecting from .*: host from the default \(localhost\), port from the default \(5432\); PG\* variables are read in /,
    );
  });
});
