import type { MetricSample } from './metric-group.js';

/** The content type of Prometheus' text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Flink's PrometheusReporter: only [a-zA-Z0-9:_] in names and (by default) label values. */
export function prometheusName(text: string): string {
  return text.replace(/[^a-zA-Z0-9:_]/g, '_');
}

function labelValue(text: string): string {
  return prometheusName(text).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function number(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/**
 * Renders samples in the text format 0.0.4 with Flink's names: `flink_<scope>_<metric>`
 * (`flink_taskmanager_job_task_operator_numRecordsIn`), variables as labels, every metric a
 * gauge (Flink reports counters and meters as gauges), one `# HELP`/`# TYPE` per family.
 */
export function renderPrometheus(samples: readonly MetricSample[]): string {
  const families = new Map<string, { help: string; lines: string[]; seen: Set<string> }>();
  for (const s of samples) {
    const logicalScope = s.scope.map(prometheusName).join('_');
    const name = `flink_${logicalScope}_${prometheusName(s.name)}`;
    let f = families.get(name);
    if (f === undefined) {
      f = { help: `${s.name} (scope: ${logicalScope})`, lines: [], seen: new Set() };
      families.set(name, f);
    }
    const labels = Object.entries(s.variables)
      .map(([k, v]) => `${prometheusName(k)}="${labelValue(v)}"`)
      .join(',');
    // Two metrics whose labels collapse to the same series would make the scrape invalid.
    if (f.seen.has(labels)) continue;
    f.seen.add(labels);
    f.lines.push(`${name}${labels === '' ? '' : `{${labels}}`} ${number(s.value)}`);
  }
  let out = '';
  for (const [name, f] of families) {
    out += `# HELP ${name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} gauge\n${f.lines.join('\n')}\n`;
  }
  return out;
}
