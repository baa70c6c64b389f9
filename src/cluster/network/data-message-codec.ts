import { createStatePackr } from '../../runtime/state/serializer.js';
import { MsgpackMessageCodec, type MessageCodec } from '../wire/connection.js';
import { RECORD_BATCH_MARKER, RecordBatchDecoder, RecordBatchEncoder } from '../wire/record-batch-codec.js';
import type { DataMessage } from './data-messages.js';

/**
 * Frames of a data connection: record batches (`el` with a batch) by the record batch codec,
 * everything else (hello, open, credit, events, unaligned barriers with their overtaken
 * elements) as msgpack. The two are told apart by the first payload byte.
 */
export class DataMessageCodec implements MessageCodec<DataMessage, DataMessage> {
  private readonly other = new MsgpackMessageCodec<DataMessage, DataMessage>();
  private readonly batches = new RecordBatchEncoder(createStatePackr());
  private readonly batchReader = new RecordBatchDecoder(createStatePackr());

  encodeFrame(message: DataMessage): Buffer {
    if (message.t === 'el' && message.e.kind === 'batch') return this.batches.encodeFrame(message.ch, message.e);
    return this.other.encodeFrame(message);
  }

  decode(payload: Buffer): DataMessage {
    if (payload[0] !== RECORD_BATCH_MARKER) return this.other.decode(payload);
    const { channel, batch } = this.batchReader.decode(payload);
    return { t: 'el', ch: channel, e: batch };
  }
}
