import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/**
 * The log of a Sluice process: every line has a level and, in the JSON format, fields (the
 * job, vertex, subtask, TaskManager it is about). Lines are written synchronously to stderr
 * (or the file stderr is), so a line is in the kernel before the call returns and none is
 * lost when the process is SIGKILLed or exits. The JSON lines are pino's (docs/architecture.md
 * says why); the plain lines are the terminal's `[component] LEVEL message`.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['plain', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What a line is about: keys of the JSON line (the plain format shows the message only). */
export interface LogFields {
  readonly jobId?: string;
  /** The vertex (chain of operators) a line is about, by name. */
  readonly vertex?: string;
  /** The subtask index (0-based) within the vertex. */
  readonly subtask?: number;
  readonly attempt?: number;
  readonly taskManager?: string;
  readonly checkpointId?: number;
  /** The error a line reports (JSON: its type, message and stack, as pino serializes errors). */
  readonly err?: Error;
}

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** This logger, with `fields` on every line too. */
  with(fields: LogFields): Logger;
}

/**
 * Where a component logs: a Logger, or a function that gets every line's message whatever its
 * level (what tests pass to collect or silence lines: `log: () => {}`).
 */
export type LogTarget = Logger | ((message: string) => void);

/** Where lines go: stderr by default; a test's collector. */
export interface LogDestination {
  write(line: string): void;
}

export interface LogSettings {
  readonly level: LogLevel;
  readonly format: LogFormat;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50 };
const LABEL: Readonly<Record<LogLevel, string>> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

interface Output {
  readonly settings: LogSettings;
  readonly destination: LogDestination;
  /** The JSON format's pino logger; undefined for plain. */
  readonly json: PinoLogger | undefined;
}

let stderr: DestinationStream | undefined;
/** stderr as pino's synchronous destination: each line is one write(2) (retried on EAGAIN), nothing buffered. */
function stderrDestination(): DestinationStream {
  stderr ??= pino.destination({ dest: 2, sync: true });
  return stderr;
}

let output: Output | undefined;

function currentOutput(): Output {
  output ??= createOutput({ level: 'info', format: 'plain' }, undefined);
  return output;
}

function createOutput(settings: LogSettings, destination: LogDestination | undefined): Output {
  const dest = destination ?? stderrDestination();
  const json =
    settings.format === 'json'
      ? pino(
          {
            level: settings.level,
            messageKey: 'message',
            timestamp: pino.stdTimeFunctions.isoTime,
            formatters: { level: (label) => ({ level: label }) },
            base: { pid: process.pid },
          },
          dest as DestinationStream,
        )
      : undefined;
  return { settings, destination: dest, json };
}

/**
 * Sets the level and format of this process's log (the `sluice` commands, from `log.level`
 * and `log.format`); loggers made before take it too. `destination` (tests): where lines go
 * from now on (default: where they went so far, stderr at first).
 */
export function configureLogging(settings: Partial<LogSettings>, destination?: LogDestination): void {
  const current = currentOutput();
  const s = current.settings;
  output = createOutput({ level: settings.level ?? s.level, format: settings.format ?? s.format }, destination ?? current.destination);
}

/** The level and format in force. */
export function loggingSettings(): LogSettings {
  return currentOutput().settings;
}

/** Back to the defaults (info, plain, stderr): tests. */
export function resetLogging(): void {
  output = undefined;
}

/**
 * The logger of a component of this process: `component` is the plain format's prefix
 * (`[jobmanager]`; with a TaskManager field, `[taskmanager tm-0]`) and the JSON `component`.
 */
export function processLogger(component: string, fields: LogFields = {}): Logger {
  return new ProcessLogger(component, fields);
}

/** `target` as a Logger; none: the process logger of `component`. */
export function toLogger(target: LogTarget | undefined, component: string, fields: LogFields = {}): Logger {
  if (target === undefined) return processLogger(component, fields);
  if (typeof target === 'function') return new FunctionLogger(target);
  return Object.keys(fields).length === 0 ? target : target.with(fields);
}

class ProcessLogger implements Logger {
  constructor(
    private readonly component: string,
    private readonly fields: LogFields,
  ) {}

  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  with(fields: LogFields): Logger {
    return new ProcessLogger(this.component, { ...this.fields, ...fields });
  }

  private write(level: LogLevel, message: string, fields: LogFields | undefined): void {
    const out = currentOutput();
    if (RANK[level] < RANK[out.settings.level]) return;
    if (out.json !== undefined) {
      out.json[level]({ component: this.component, ...this.fields, ...fields }, message);
      return;
    }
    const tm = this.fields.taskManager ?? fields?.taskManager;
    out.destination.write(`[${this.component}${tm === undefined || this.component !== 'taskmanager' ? '' : ` ${tm}`}] ${LABEL[level]} ${message}\n`);
  }
}

/** Every line's message to a function, whatever its level (fields are dropped). */
class FunctionLogger implements Logger {
  constructor(private readonly fn: (message: string) => void) {}

  debug(message: string): void {
    this.fn(message);
  }

  info(message: string): void {
    this.fn(message);
  }

  warn(message: string): void {
    this.fn(message);
  }

  error(message: string): void {
    this.fn(message);
  }

  with(): Logger {
    return this;
  }
}

/** The fields of a task named as Flink names it, `numbers -> map (2/4)`: vertex `numbers -> map`, subtask 1. */
export function taskNameFields(taskName: string | undefined): { vertex?: string; subtask?: number } {
  if (taskName === undefined) return {};
  const m = /^(.*) \((\d+)\/\d+\)$/.exec(taskName);
  return m === null ? { vertex: taskName } : { vertex: m[1]!, subtask: Number(m[2]) - 1 };
}
