/**
 * The real-apiserver harness itself: the server it starts is the version asked for, reached over TLS
 * verified against the generated CA, with RBAC deciding for users who are not the admin.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { describeRealApiserver, SKEW_VERSIONS } from '../support/real-apiserver.js';

describeRealApiserver(
  'envtest harness',
  (server, version) => {
    it('serves the version asked for', () => {
      expect(server.api().version).toMatch(new RegExp(`^v${version.replace('.', '\\.')}\\.`));
    });

    it('the admin creates and reads a namespace over verified TLS', async () => {
      const core = (await server.kubeConfig()).makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'envtest-smoke' } } });
      const ns = await core.readNamespace({ name: 'envtest-smoke' });
      expect(ns.metadata?.uid).toBeTruthy();
    });

    it('RBAC refuses a user with no role, naming the user', async () => {
      const core = (await server.kubeConfig('nobody', [])).makeApiClient(CoreV1Api);
      const refused = await core.listNamespace().then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
      expect(refused?.code).toBe(403);
      const status = JSON.parse(String(refused?.body)) as { reason?: string; message?: string };
      expect(status.reason).toBe('Forbidden');
      expect(status.message).toContain('User "nobody" cannot list resource "namespaces"');
    });

    it('a client that does not trust the CA is refused by TLS', async () => {
      const kc = await server.kubeConfig();
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new Error('no cluster in the kubeconfig');
      const untrusting = kc.getClusters().map((c) => ({ ...c, caData: undefined, caFile: undefined }));
      kc.loadFromOptions({
        clusters: untrusting,
        users: kc.getUsers(),
        contexts: kc.getContexts(),
        currentContext: kc.getCurrentContext(),
      });
      const failure = await kc
        .makeApiClient(CoreV1Api)
        .listNamespace()
        .then(
          () => 'accepted',
          (e: Error & { cause?: { code?: string } }) => `${e.message} ${e.cause?.code ?? ''}`,
        );
      expect(failure).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
    });
  },
  { versions: SKEW_VERSIONS },
);
