import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ChannelSpec, RemoteChannels, RestorableInputChannel } from '../../runtime/deploy/task-wiring.js';
import type { OutputChannel } from '../../runtime/channel/channel.js';
import { Connection } from '../wire/connection.js';
import { DataMessageCodec } from './data-message-codec.js';
import { checkProof, proof } from '../wire/shared-secret.js';
import type { DataMessage } from './data-messages.js';
import { RemoteInputChannel } from './remote-input-channel.js';
import { RemoteOutputChannel } from './remote-output-channel.js';
import { notAnOperatorFault } from '../../runtime/task/stream-operator.js';

type DataConnection = Connection<DataMessage, DataMessage>;

export interface PeerAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * A TaskManager's data plane: a TCP server that consumers' channels are fed through, and
 * connections to the other TaskManagers for channels this one produces. Channels belong to
 * one attempt of one job (`AttemptNetwork`); a new attempt opens new connections.
 */
export class DataEndpoint {
  private server: Server | undefined;
  private readonly attempts = new Map<string, AttemptNetwork>();
  address: PeerAddress | undefined;

  constructor(
    readonly taskManagerId: string,
    private readonly secret: string | undefined,
    private readonly log: (message: string) => void,
  ) {}

  async start(host: string, port = 0): Promise<PeerAddress> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const a = server.address() as AddressInfo;
    this.address = { host, port: a.port };
    return this.address;
  }

  /** The network of one attempt (created on first use, by a deployment or a peer's hello). */
  attempt(jobId: string, attempt: number): AttemptNetwork {
    const key = `${jobId}/${attempt}`;
    let a = this.attempts.get(key);
    if (a === undefined) {
      a = new AttemptNetwork(jobId, attempt, this.taskManagerId, this.secret);
      this.attempts.set(key, a);
    }
    return a;
  }

  /** Closes every connection of an attempt at once (canceled, failed). */
  release(jobId: string, attempt: number): void {
    const key = `${jobId}/${attempt}`;
    this.attempts.get(key)?.close(false);
    this.attempts.delete(key);
  }

  /**
   * The attempt's tasks here finished: once every remote output channel has sent what waits
   * for credit (consumers elsewhere may still be taking it), close its connections gracefully.
   */
  async releaseFinished(jobId: string, attempt: number): Promise<void> {
    const key = `${jobId}/${attempt}`;
    const a = this.attempts.get(key);
    if (a === undefined) return;
    while (!a.outputsDrained() && !a.isClosed) await new Promise((r) => setTimeout(r, 5));
    a.close(true);
    if (this.attempts.get(key) === a) this.attempts.delete(key);
  }

  async stop(): Promise<void> {
    for (const a of this.attempts.values()) a.close();
    this.attempts.clear();
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const conn: DataConnection = new Connection(socket, `data connection from ${socket.remoteAddress}:${socket.remotePort}`, undefined, new DataMessageCodec());
    let network: AttemptNetwork | undefined;
    conn.onMessage((m) => {
      if (network === undefined) {
        const malformed = m.t === 'hello' && !(typeof m.jobId === 'string' && Number.isInteger(m.attempt) && m.attempt >= 0 && typeof m.from === 'string');
        if (m.t !== 'hello' || malformed || !checkProof(this.secret, `${m.jobId}/${m.attempt}/${m.from}`, m.proof)) {
          this.log(`refused a data connection from ${socket.remoteAddress}: ${m.t !== 'hello' ? 'no hello' : malformed ? 'a malformed hello' : 'wrong cluster secret'}`);
          conn.close(new Error('refused'));
          return;
        }
        network = this.attempt(m.jobId, m.attempt);
        network.adoptIncoming(conn);
        return;
      }
      network.onIncoming(conn, m);
    });
  }
}

/** The remote channels of one attempt on one TaskManager. */
export class AttemptNetwork implements RemoteChannels {
  private readonly inputs = new Map<number, RemoteInputChannel>();
  private readonly outputs = new Map<number, RemoteOutputChannel>();
  /** `open` received before the consumer's channel was created: its credit route. */
  private readonly pendingOpens = new Map<number, DataConnection>();
  /** Elements received before the consumer's channel was created. */
  private readonly pendingElements = new Map<number, DataMessage[]>();
  private readonly outgoing = new Map<string, DataConnection>();
  private readonly incoming = new Set<DataConnection>();
  /** The channels each incoming connection feeds. */
  private readonly fedBy = new Map<DataConnection, number[]>();
  private closed = false;
  /** Called when a connection of this attempt breaks: the attempt's tasks here fail. */
  onBroken: (error: Error) => void = () => {};
  /** Where a peer TaskManager listens, by id (set at deployment). */
  peers = new Map<string, PeerAddress>();
  /** Which TaskManager runs a subtask (set at deployment). */
  placement: (vertexId: number, subtaskIndex: number) => string = () => {
    throw new Error('no placement');
  };

  constructor(
    readonly jobId: string,
    readonly attemptNumber: number,
    private readonly taskManagerId: string,
    private readonly secret: string | undefined,
  ) {}

  outputsDrained(): boolean {
    for (const ch of this.outputs.values()) if (!ch.isDrained()) return false;
    return true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  output(spec: ChannelSpec): OutputChannel {
    const tm = this.placement(spec.target.id, spec.consumer);
    const ch = new RemoteOutputChannel(this.connectionTo(tm), spec.id, spec.capacityBuffers);
    this.outputs.set(spec.id, ch);
    return ch;
  }

  input(spec: ChannelSpec): RestorableInputChannel {
    const ch = new RemoteInputChannel(spec.id, spec.capacityBuffers);
    this.inputs.set(spec.id, ch);
    const opened = this.pendingOpens.get(spec.id);
    if (opened !== undefined) {
      this.pendingOpens.delete(spec.id);
      ch.connect((n) => opened.send({ t: 'credit', ch: spec.id, n }));
    }
    for (const m of this.pendingElements.get(spec.id) ?? []) this.deliver(ch, m);
    this.pendingElements.delete(spec.id);
    return ch;
  }

  adoptIncoming(conn: DataConnection): void {
    if (this.closed) {
      conn.close();
      return;
    }
    this.incoming.add(conn);
    conn.onClose((e) => {
      this.incoming.delete(conn);
      // A producer that finished closes its connection after its last element: not a failure.
      const done = (this.fedBy.get(conn) ?? []).every((ch) => this.inputs.get(ch)?.ended === true);
      if (!this.closed && !(e === undefined && done)) this.onBroken(new DataConnectionLost(`a data connection to this TaskManager closed${e === undefined ? '' : `: ${e.message}`}`));
    });
  }

  onIncoming(conn: DataConnection, m: DataMessage): void {
    if (m.t === 'open') {
      let fed = this.fedBy.get(conn);
      if (fed === undefined) this.fedBy.set(conn, (fed = []));
      fed.push(m.ch);
      const ch = this.inputs.get(m.ch);
      if (ch === undefined) this.pendingOpens.set(m.ch, conn);
      else ch.connect((n) => conn.send({ t: 'credit', ch: m.ch, n }));
      return;
    }
    if (m.t === 'el' || m.t === 'prio') {
      const ch = this.inputs.get(m.ch);
      if (ch === undefined) {
        let list = this.pendingElements.get(m.ch);
        if (list === undefined) this.pendingElements.set(m.ch, (list = []));
        list.push(m);
      } else this.deliver(ch, m);
    }
  }

  private deliver(ch: RemoteInputChannel, m: DataMessage): void {
    if (m.t === 'el') ch.receive(m.e);
    else if (m.t === 'prio') ch.receivePriority(m.barrier, m.rest);
  }

  private connectionTo(tm: string): DataConnection {
    let conn = this.outgoing.get(tm);
    if (conn !== undefined) return conn;
    const address = this.peers.get(tm);
    if (address === undefined) throw new Error(`no data address for TaskManager ${tm}`);
    const socket = createConnection({ host: address.host, port: address.port });
    conn = new Connection<DataMessage, DataMessage>(socket, `data connection to TaskManager ${tm} (${address.host}:${address.port})`, undefined, new DataMessageCodec());
    this.outgoing.set(tm, conn);
    conn.send({ t: 'hello', jobId: this.jobId, attempt: this.attemptNumber, from: this.taskManagerId, proof: proof(this.secret, `${this.jobId}/${this.attemptNumber}/${this.taskManagerId}`) });
    conn.onMessage((msg) => {
      if (msg.t !== 'credit') return;
      try {
        // Credit sends what waited for it: a record that cannot be encoded fails the attempt
        // here (with the codec's message), as it fails its task when sent at once.
        this.outputs.get(msg.ch)?.addCredit(msg.n);
      } catch (e) {
        if (!this.closed) this.onBroken(e instanceof Error ? e : new Error(String(e)));
      }
    });
    conn.onClose((e) => {
      // A consumer that finished closes after taking everything: not a failure.
      const done = [...this.outputs.values()].filter((ch) => ch.connection === conn).every((ch) => ch.ended);
      if (!this.closed && !(e === undefined && done)) this.onBroken(new DataConnectionLost(`the data connection to TaskManager ${tm} closed${e === undefined ? '' : `: ${e.message}`}`));
    });
    return conn;
  }

  close(graceful = false): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.outgoing.values()) if (graceful) c.end();
    else c.close();
    for (const c of this.incoming) if (graceful) c.end();
    else c.close();
    this.outgoing.clear();
    this.incoming.clear();
  }
}

/**
 * A data connection between TaskManagers closed while the attempt ran: most often the
 * consequence of a failure elsewhere (the other side failed and let go of its connections), so
 * the JobManager waits a moment for that failure before it takes this one as the cause. No
 * operator is to blame for it.
 */
export class DataConnectionLost extends Error {
  override readonly name = 'DataConnectionLost';
  constructor(message: string) {
    super(message);
    notAnOperatorFault(this);
  }
}

/** Whether `e` or an error in its cause chain is a DataConnectionLost (also after crossing the wire). */
export function isDataConnectionLoss(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 10; x = x.cause, depth++) if (x.name === 'DataConnectionLost') return true;
  return false;
}
