/**
 * The real kubectl against the simulator, through the kubeconfig it writes (skipped with a notice when
 * kubectl is not installed; a failure under CI=true). kubectl negotiates aggregated discovery and
 * server-side Table output, and checks the server's OpenAPI v3 before create/apply.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { clusterPropertyCrd, type Simulator, startSimulator } from '../../local/sim/index.js';
import { describeNeeding, kubectlNeed } from '../support/needs-tool.js';

const run = promisify(execFile);
const KUBECTL_NEED = kubectlNeed();
const KUBECTL = KUBECTL_NEED.path;

let sim: Simulator;
let dir: string;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(
    KUBECTL as string,
    ['--kubeconfig', path.join(dir, 'kubeconfig'), '--cache-dir', path.join(dir, 'cache'), ...args],
    {
      timeout: 30_000,
    },
  );
  return stdout;
}

describeNeeding(KUBECTL_NEED, 'kubectl', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sim-kubectl-'));
    sim = await startSimulator({
      clusters: [
        {
          name: 'demo-1',
          nodes: 4,
          daemonSets: [
            {
              name: 'agent',
              tolerations: [{ operator: 'Exists' }],
              containers: [{ name: 'a', requests: { cpu: '50m', memory: '64Mi' } }],
              load: { perNode: 'heterogeneous' },
            },
          ],
        },
        { name: 'demo-2', nodes: 7 },
      ],
    });
    await sim.writeKubeconfig(path.join(dir, 'kubeconfig'));
  });
  afterAll(async () => {
    await sim?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('get nodes, per context', async () => {
    const out = await kubectl('--context', 'demo-2', 'get', 'nodes');
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(lines).toHaveLength(8);
    expect(lines[1]).toMatch(/\sReady\s+<none>\s+\S+\s+v1\.35\.0/);
  });

  it('get pods -A', async () => {
    const out = await kubectl('--context', 'demo-1', 'get', 'pods', '-A');
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    expect(lines.slice(1).every((l) => /^kube-system\s+agent-\w{5}\s+1\/1\s+Running\s+0\s/.test(l))).toBe(
      true,
    );
    expect(lines).toHaveLength(5);
  });

  it('top nodes', async () => {
    const out = await kubectl('--context', 'demo-1', 'top', 'nodes');
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CPU\(cores\)\s+CPU(\(%\))?\s+MEMORY\(bytes\)\s+MEMORY(\(%\))?/);
    expect(lines).toHaveLength(5);
  });

  it('create the ClusterProperty CRD, apply an object, get clusterproperties', async () => {
    const crdFile = path.join(dir, 'crd.yaml');
    writeFileSync(crdFile, stringify(clusterPropertyCrd()));
    expect(await kubectl('--context', 'demo-1', 'create', '-f', crdFile)).toMatch(
      /clusterproperties.about.k8s.io created/,
    );
    const cpFile = path.join(dir, 'cp.yaml');
    writeFileSync(
      cpFile,
      stringify({
        apiVersion: 'about.k8s.io/v1alpha1',
        kind: 'ClusterProperty',
        metadata: { name: 'id.k8s.io' },
        spec: { value: sim.cluster('demo-1').kubeSystemUid },
      }),
    );
    expect(await kubectl('--context', 'demo-1', 'apply', '-f', cpFile)).toMatch(
      /clusterproperty.about.k8s.io\/id.k8s.io created/,
    );
    const out = await kubectl('--context', 'demo-1', 'get', 'clusterproperties');
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VALUE\s+AGE$/);
    expect(lines[1]).toContain(sim.cluster('demo-1').kubeSystemUid);
    const yaml = parse(
      await kubectl('--context', 'demo-1', 'get', 'clusterproperty', 'id.k8s.io', '-o', 'yaml'),
    );
    expect(yaml.apiVersion).toBe('about.k8s.io/v1beta1');
  });

  it('get events: a deleted pod and its replacement, as a real cluster records them', async () => {
    const pod = (await kubectl('--context', 'demo-1', 'get', 'pods', '-n', 'kube-system', '-o', 'name'))
      .trim()
      .split('\n')[1] as string;
    await kubectl('--context', 'demo-1', '-n', 'kube-system', 'delete', pod, '--wait=false');
    const out = await kubectl('--context', 'demo-1', 'get', 'events', '-n', 'kube-system');
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(out).toMatch(new RegExp(`Normal\\s+Killing\\s+${pod}\\s+Stopping container a`));
    expect(out).toMatch(/Normal\s+SuccessfulCreate\s+daemonset\/agent\s+Created pod: agent-\w{5}/);
    expect(out).toMatch(/Normal\s+Started\s+pod\/agent-\w{5}\s+Started container a/);
  });

  it('patch --subresource resize', async () => {
    const pod = (await kubectl('--context', 'demo-1', 'get', 'pods', '-n', 'kube-system', '-o', 'name'))
      .trim()
      .split('\n')[0] as string;
    const out = await kubectl(
      '--context',
      'demo-1',
      '-n',
      'kube-system',
      'patch',
      pod,
      '--subresource',
      'resize',
      '-p',
      '{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"60m"}}}]}}',
    );
    expect(out).toMatch(/patched/);
    const json = JSON.parse(
      await kubectl('--context', 'demo-1', '-n', 'kube-system', 'get', pod, '-o', 'json'),
    );
    expect(json.spec.containers[0].resources.requests.cpu).toBe('60m');
  });
});
