import { describe, expect, it } from 'vitest';
import { MeterView } from './meter-view.js';
import { MetricGroup } from './metric-group.js';
import { MetricRegistry } from './metric-registry.js';
import { renderPrometheus } from './prometheus-format.js';
import { WaitTimer } from '../runtime/task/wait-timer.js';

describe('MeterView', () => {
  it('is the rate per second over its window, and starts over when the count drops (a new attempt)', () => {
    const m = new MeterView(5000);
    expect(m.rate()).toBe(0);
    m.sample(0, 0);
    m.sample(1000, 100);
    expect(m.rate()).toBe(100);
    for (let t = 2000; t <= 10_000; t += 1000) m.sample(t, (t / 1000) * 100 + (t > 6000 ? (t - 6000) / 10 : 0));
    // Window [5000, 10000]: 500 -> 1400 in 5 s.
    expect(m.rate()).toBeCloseTo((1400 - 500) / 5, 5);
    m.sample(11_000, 10);
    expect(m.rate()).toBe(0);
    m.sample(12_000, 30);
    expect(m.rate()).toBe(20);
    expect(() => m.sample(11_500, 40)).toThrow(/back in time/);
  });
});

describe('MetricGroup and the Prometheus format', () => {
  it('names metrics flink_<scope>_<name>, key-value groups become labels, values filtered like Flink', () => {
    let now = 0;
    const registry = new MetricRegistry({ nowMs: () => now });
    const task = registry.addGroup(['taskmanager', 'job', 'task'], { job_id: 'abc', job_name: 'my job', task_name: 'a -> b', subtask_index: '0' });
    let n = 0;
    task.gauge('numRecordsIn', () => n);
    task.meter('numRecordsInPerSecond', () => n);
    task.gauge('isBackPressured', () => true);
    const reader = new MetricGroup();
    reader.addGroup('KafkaSourceReader').addGroup('topic', 'orders.v1').addGroup('partition', '3').gauge('records-lag', () => 7);
    const op = new MetricGroup(['operator'], { operator_name: 'Source: kafka' });
    op.adopt(reader);
    task.adopt(op);
    const counter = op.counter('numRecordsOut');
    counter.inc(5);
    registry.tick();
    now = 2000;
    n = 300;
    registry.tick();
    const text = renderPrometheus(registry.collect());
    expect(text).toContain('# HELP flink_taskmanager_job_task_numRecordsIn numRecordsIn (scope: taskmanager_job_task)\n# TYPE flink_taskmanager_job_task_numRecordsIn gauge\n');
    expect(text).toContain('flink_taskmanager_job_task_numRecordsIn{job_id="abc",job_name="my_job",task_name="a____b",subtask_index="0"} 300\n');
    expect(text).toContain('flink_taskmanager_job_task_numRecordsInPerSecond{job_id="abc",job_name="my_job",task_name="a____b",subtask_index="0"} 150\n');
    expect(text).toContain('flink_taskmanager_job_task_isBackPressured{job_id="abc",job_name="my_job",task_name="a____b",subtask_index="0"} 1\n');
    expect(text).toContain('flink_taskmanager_job_task_operator_numRecordsOut{job_id="abc",job_name="my_job",task_name="a____b",subtask_index="0",operator_name="Source:_kafka"} 5\n');
    expect(text).toContain(
      'flink_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag{job_id="abc",job_name="my_job",task_name="a____b",subtask_index="0",operator_name="Source:_kafka",topic="orders_v1",partition="3"} 7\n',
    );
    registry.removeGroup(task);
    expect(renderPrometheus(registry.collect())).toBe('');
    expect(() => new MetricGroup().gauge('x', () => 1)).not.toThrow();
  });

  it('refuses a second metric of the same name in a group, and writes one HELP/TYPE per family', () => {
    const registry = new MetricRegistry();
    const a = registry.addGroup(['jobmanager', 'job'], { job_id: '1' });
    const b = registry.addGroup(['jobmanager', 'job'], { job_id: '2' });
    a.gauge('uptime', () => 1);
    b.gauge('uptime', () => Number.NaN);
    expect(() => a.gauge('uptime', () => 2)).toThrow(/already registered/);
    const text = renderPrometheus(registry.collect());
    expect(text.match(/# TYPE flink_jobmanager_job_uptime gauge/g)).toHaveLength(1);
    expect(text).toContain('flink_jobmanager_job_uptime{job_id="2"} NaN');
  });
});

describe('WaitTimer (back-pressured and idle time of a task)', () => {
  it('sums waits, counts the running one up to now, and ignores a second start', () => {
    let now = 100;
    const t = new WaitTimer({ nowMs: () => now, schedule: () => () => {} });
    expect(t.totalMs()).toBe(0);
    t.start();
    now = 150;
    t.start();
    expect(t.waiting).toBe(true);
    expect(t.totalMs()).toBe(50);
    expect(t.totalMs(true)).toBe(0);
    now = 180;
    t.stop();
    t.stop();
    now = 300;
    expect(t.totalMs()).toBe(80);
    t.start();
    now = 320;
    expect(t.totalMs()).toBe(100);
  });
});

describe('serveMetrics (a TaskManager without the REST API)', () => {
  it('answers GET /metrics in the text format and 404 elsewhere', async () => {
    const { serveMetrics } = await import('./metrics-server.js');
    const registry = new MetricRegistry();
    registry.addGroup(['taskmanager'], { tm_id: 'tm-1' }).gauge('numberOfSlots', () => 4);
    const s = await serveMetrics(registry);
    try {
      const res = await fetch(s.url);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await res.text()).toContain('flink_taskmanager_numberOfSlots{tm_id="tm_1"} 4\n');
      expect((await fetch(s.url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await s.close();
    }
  });
});
