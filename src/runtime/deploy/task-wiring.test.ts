import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../../api/environment.js';
import { DiscardingSink } from '../../connectors/discarding-sink.js';
import { numberSource } from '../../connectors/generator/sources.js';
import { channelSpecs, type SameProcess } from './task-wiring.js';

/** source(p) -> keyBy -> process(p) -> sink: the keyed edge is all-to-all. */
function keyedGraph(parallelism: number) {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
  env
    .fromSource(numberSource({ count: 10 }), 'numbers')
    .keyBy((n) => n % 3)
    .process<number>({ processElement: (n: number, _ctx, out) => out.collect(n) })
    .sinkTo(new DiscardingSink());
  return env.getJobGraph();
}

const config = { buffersPerChannel: 2, floatingBuffersPerGate: 8 };
/** Subtasks below `split` in one process, the others in another (the same split for every vertex). */
const splitAt = (split: number): SameProcess => (_s, p, _t, c) => (p < split) === (c < split);

describe('channel capacities', () => {
  it('in one process, every channel has its exclusive buffers and its share of the floating ones', () => {
    const specs = channelSpecs(keyedGraph(2), config);
    expect(specs).toHaveLength(2 * 2);
    expect(specs.map((s) => s.capacityBuffers)).toEqual([6, 6, 6, 6]);
    // Parallelism 4: 2 + ceil(8 / 4).
    expect(new Set(channelSpecs(keyedGraph(4), config).map((s) => s.capacityBuffers))).toEqual(new Set([4]));
  });

  it("the floating buffers of a gate are shared by its channels that cross processes, as Flink's serve its remote channels", () => {
    // Two processes, one subtask each: each gate has a local and a crossing channel.
    const two = channelSpecs(keyedGraph(2), config, splitAt(1));
    for (const s of two) expect(s.capacityBuffers, `${s.producer} -> ${s.consumer}`).toBe(s.producer === s.consumer ? 2 + 4 : 2 + 8);
    // Parallelism 4 over two processes: each gate has 2 local channels (2 + 8/4) and 2 crossing ones (2 + 8/2).
    const four = channelSpecs(keyedGraph(4), config, splitAt(2));
    for (const s of four) expect(s.capacityBuffers, `${s.producer} -> ${s.consumer}`).toBe((s.producer < 2) === (s.consumer < 2) ? 4 : 6);
    // Ids, order and indexes do not depend on placement: every process numbers channels alike.
    const strip = (specs: typeof two) => specs.map(({ capacityBuffers: _c, ...rest }) => [rest.id, rest.producer, rest.consumer, rest.input, rest.indexInInput]);
    expect(strip(two)).toEqual(strip(channelSpecs(keyedGraph(2), config)));
  });
});
