/**
 * The real kubectl against `fleetscope sim --rbac` (skipped with a notice when kubectl is not installed; a failure under CI=true): `kubectl
 * create` and `kubectl auth` send protobuf bodies, which must create exactly the object kubectl would
 * have sent as JSON; the manifests of `fleetscope rbac` load with `kubectl apply -f`, and kubectl, as the
 * ServiceAccount they bind, sees what it may and may not do.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runFleetscopeInProcess, startFleetscope } from '../support/cli.js';
import { describeNeeding, kubectlNeed } from '../support/needs-tool.js';

const run = promisify(execFile);
const KUBECTL_NEED = kubectlNeed();
const KUBECTL = KUBECTL_NEED.path;

let dir: string;
let sim: Awaited<ReturnType<typeof startFleetscope>> | undefined;

async function kubectl(kubeconfig: string, args: string[]) {
  const argv = ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'cache'), ...args];
  return run(KUBECTL as string, argv, { timeout: 30_000 }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({
      code: typeof e.code === 'number' ? e.code : 1,
      out: String(e.stdout ?? ''),
      err: String(e.stderr ?? ''),
    }),
  );
}

/** kubectl with input on stdin (`apply -f -`). */
function kubectlIn(kubeconfig: string, args: string[], stdin: string) {
  return new Promise<{ code: number; out: string; err: string }>((resolve) => {
    const c = execFile(
      KUBECTL as string,
      ['--kubeconfig', kubeconfig, ...args],
      { timeout: 30_000 },
      (e, out, err) => resolve({ code: e ? 1 : 0, out, err }),
    );
    c.stdin?.end(stdin);
  });
}

describeNeeding(KUBECTL_NEED, 'kubectl against fleetscope sim --rbac', () => {
  let admin: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sim-kubectl-rbac-'));
    admin = path.join(dir, 'admin.yaml');
    sim = await startFleetscope(
      ['sim', '--rbac', '--clusters', '1', '--nodes', '2', '--kubeconfig-out', admin],
      (out) => out.includes('Ctrl-C'),
      30_000,
    );
  }, 40_000);
  afterAll(async () => {
    await sim?.stop('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl create sends protobuf; the server stores the object kubectl would send as JSON', async () => {
    const cases = [
      ['namespace', 'team-a'],
      ['configmap', 'settings', '--from-literal=mode=fast', '--from-literal=empty='],
      ['deployment', 'web', '--image=nginx', '--replicas=0', '--port=8080', '--', 'sleep', '60'],
      ['clusterrole', 'reader', '--verb=get,list', '--resource=pods,nodes', '--resource-name=x'],
      ['rolebinding', 'bind', '--clusterrole=reader', '--user=bob', '--serviceaccount=default:robot'],
      ['priorityclass', 'low', '--value=0', '--description=batch'],
      ['serviceaccount', 'robot'],
    ];
    for (const [kind, name, ...rest] of cases) {
      const args = ['create', kind as string, name as string, ...rest];
      const dryRun = ['create', kind as string, name as string, '--dry-run=client', '-o', 'json', ...rest];
      const sent = JSON.parse((await kubectl(admin, dryRun)).out);
      const created = await kubectl(admin, args);
      expect(created.err).toBe('');
      const stored = JSON.parse(
        (await kubectl(admin, ['get', kind as string, name as string, '-o', 'json'])).out,
      );
      const { metadata: m1, ...body1 } = sent;
      const { metadata: m2, ...body2 } = stored;
      // The server defaults what kubectl left out (PriorityClass preemptionPolicy, Namespace finalizers...).
      expect(body2, `kubectl create ${kind}`).toMatchObject(body1);
      expect(m2).toMatchObject({ name, ...(m1.labels ? { labels: m1.labels } : {}) });
    }
  });

  it('loads the manifests of fleetscope rbac with kubectl apply -f', async () => {
    expect((await kubectl(admin, ['create', 'namespace', 'fleetscope'])).code).toBe(0);
    const rbac = await runFleetscopeInProcess(['rbac', '--service-account', 'fleetscope/fleetscope']);
    expect(rbac.code).toBe(0);
    const applied = await kubectlIn(admin, ['apply', '-f', '-'], rbac.out);
    expect(applied.err).toBe('');
    expect(applied.out).toMatch(/clusterrole.rbac.authorization.k8s.io\/fleetscope:nodescope created/);
    expect(applied.out).toMatch(/serviceaccount\/fleetscope created/);
  });

  it('kubectl auth can-i and whoami answer for the ServiceAccount the manifests bind', async () => {
    const token = (await kubectl(admin, ['-n', 'fleetscope', 'create', 'token', 'fleetscope'])).out.trim();
    const config = parse(readFileSync(admin, 'utf8'));
    config.users[0].user = { token };
    const sa = path.join(dir, 'sa.yaml');
    writeFileSync(sa, stringify(config));
    const can = (...a: string[]) => kubectl(sa, ['auth', 'can-i', ...a]);
    expect(await can('patch', 'pods', '--subresource=resize', '-n', 'monitoring')).toMatchObject({
      code: 0,
      out: 'yes\n',
    });
    expect(await can('list', 'nodes')).toMatchObject({ code: 0, out: 'yes\n' });
    expect(await can('list', 'secrets', '-n', 'kube-system')).toMatchObject({ code: 1, out: 'no\n' });
    expect(await can('delete', 'pods', '-n', 'monitoring')).toMatchObject({ code: 1, out: 'no\n' });
    expect((await kubectl(sa, ['auth', 'whoami'])).out).toMatch(
      /Username\s+system:serviceaccount:fleetscope:fleetscope/,
    );
    const denied = await kubectl(sa, ['get', 'secrets', '-n', 'kube-system']);
    expect(denied.err).toContain(
      'Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:fleetscope:fleetscope" cannot list resource "secrets" in API group "" in the namespace "kube-system"',
    );
    expect((await kubectl(sa, ['get', 'nodes', '-o', 'name'])).out.trim().split('\n')).toHaveLength(2);
  });

  it('kubectl --as impersonates: the admin may, the ServiceAccount may not', async () => {
    const as = ['--as', 'system:serviceaccount:fleetscope:fleetscope'];
    expect(await kubectl(admin, [...as, 'auth', 'can-i', 'list', 'nodes'])).toMatchObject({ out: 'yes\n' });
    expect(await kubectl(admin, [...as, 'auth', 'can-i', 'list', 'secrets'])).toMatchObject({ out: 'no\n' });
    const who = await kubectl(admin, ['--as', 'bob', '--as-group', 'qa', 'auth', 'whoami']);
    expect(who.out).toMatch(/Username\s+bob/);
    expect(who.out).toMatch(/Groups\s+\[qa system:authenticated\]/);
    const config = parse(readFileSync(admin, 'utf8'));
    const token = (await kubectl(admin, ['-n', 'fleetscope', 'create', 'token', 'fleetscope'])).out.trim();
    config.users[0].user = { token };
    const sa = path.join(dir, 'sa-as.yaml');
    writeFileSync(sa, stringify(config));
    const refused = await kubectl(sa, ['--as', 'bob', 'get', 'nodes']);
    expect(refused.err).toContain(
      'users "bob" is forbidden: User "system:serviceaccount:fleetscope:fleetscope" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});
