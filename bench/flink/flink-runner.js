// One JVM running bench/flink's Main: queries on a local Flink cluster in that JVM, one after the
// other, on events it preloads once (see Main.java for the commands).
import { spawn } from 'node:child_process';
import { QueryProcess } from '../nexmark/query-process.js';
import { flinkClasspath } from './build.js';

export const FlinkRunner = {
  /** Starts the JVM (building bench/flink first if its cache misses). */
  start({ heap = '3g', log } = {}) {
    const classpath = flinkClasspath({ log });
    const jvm = spawn('java', [`-Xmx${heap}`, `-Xms${heap}`, '-XX:+UseParallelGC', '-cp', classpath, 'sluice.bench.flink.Main'], { stdio: ['pipe', 'pipe', 'pipe'] });
    return new QueryProcess(jvm, 'Flink');
  },
};
