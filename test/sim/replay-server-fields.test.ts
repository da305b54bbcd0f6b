/**
 * Fields as a real kube-apiserver writes them, where `npm run fidelity` found the simulator writing
 * otherwise (local/sim/README.md, "Fidelity divergences"): Go's `omitempty` leaves out a zero count, a
 * false flag and an empty list; a zero time is `null` up to 1.33 and left out from 1.34; a core Event's
 * unset fields come back empty; the x509 authenticator names the credential. Each expectation below was
 * seen on a real 1.33.13 or 1.36.2.
 */
import { AuthenticationV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { vpaCheckpointCrd } from '../../shared/kernel/crds/vpa.js';
import { raw } from './helpers.js';

const NS = '/api/v1/namespaces/kube-system';
const daemonSet = {
  metadata: { name: 'balloon' },
  spec: {
    selector: { matchLabels: { app: 'balloon' } },
    template: {
      metadata: { labels: { app: 'balloon' } },
      spec: {
        automountServiceAccountToken: false,
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
      },
    },
  },
};

for (const version of ['1.33.13', '1.36.2']) {
  const omitsZeroTime = version.startsWith('1.36');
  describe(`a simulated ${version} server writes its fields as the real one`, () => {
    let sim: Simulator;
    let c: SimCluster;
    beforeAll(async () => {
      sim = await startSimulator({ clusters: [{ name: 'fields', nodes: 2, kubernetesVersion: version }] });
      c = sim.cluster('fields');
    });
    afterAll(async () => sim?.stop());

    it('a DaemonSet: no null template creationTimestamp from 1.34, no zero omitempty counts', async () => {
      const created = await raw(c, 'POST', '/apis/apps/v1/namespaces/kube-system/daemonsets', {
        body: daemonSet,
      });
      expect(created.status).toBe(201);
      const meta = created.json.spec.template.metadata;
      if (omitsZeroTime) expect(meta).not.toHaveProperty('creationTimestamp');
      else expect(meta.creationTimestamp).toBeNull();
      // Just created: nothing scheduled yet, and the omitempty counts are absent, the others 0.
      expect(created.json.status).toEqual({
        currentNumberScheduled: 0,
        numberMisscheduled: 0,
        desiredNumberScheduled: 0,
        numberReady: 0,
      });
    });

    it('a daemon pod without the token mount has no volumeMounts at all', async () => {
      const pods = await raw(c, 'GET', `${NS}/pods?labelSelector=app%3Dballoon`);
      expect(pods.json.items.length).toBe(2);
      for (const p of pods.json.items) {
        expect(p.spec.containers[0]).not.toHaveProperty('volumeMounts');
        expect(p.spec).not.toHaveProperty('volumes');
      }
    });

    it('a merge patch that removes the last annotation leaves no annotations map', async () => {
      const cm = { metadata: { name: 'cm', annotations: { a: '1' } }, data: { k: 'v' } };
      expect((await raw(c, 'POST', `${NS}/configmaps`, { body: cm })).status).toBe(201);
      const patched = await raw(c, 'PATCH', `${NS}/configmaps/cm`, {
        body: { metadata: { annotations: { a: null } } },
        contentType: 'application/merge-patch+json',
      });
      expect(patched.status).toBe(200);
      expect(patched.json.metadata).not.toHaveProperty('annotations');
      const emptied = await raw(c, 'PATCH', `${NS}/configmaps/cm`, {
        body: { data: { k: null } },
        contentType: 'application/merge-patch+json',
      });
      expect(emptied.json).not.toHaveProperty('data');
    });

    it('an object seeded straight into the store has a generation, as every object of its type does', () => {
      const seeded = c.store.put('daemonsets.apps', {
        ...daemonSet,
        metadata: { name: 'seeded', namespace: 'kube-system' },
      });
      expect(seeded.metadata.generation).toBe(1);
    });

    it('a dry-run create answers 201 Created, as a real create does', async () => {
      const body = { metadata: { name: 'dry' }, data: { k: 'v' } };
      const created = await raw(c, 'POST', `${NS}/configmaps?dryRun=All`, { body });
      expect(created.status).toBe(201);
      expect((await raw(c, 'GET', `${NS}/configmaps/dry`)).status).toBe(404);
    });

    it('a subresource a CRD does not serve is answered as its object not found', async () => {
      const crd = await raw(c, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: vpaCheckpointCrd(),
      });
      expect(crd.status).toBe(201);
      const path =
        '/apis/autoscaling.k8s.io/v1/namespaces/kube-system/verticalpodautoscalercheckpoints/cp/status';
      const put = await raw(c, 'PUT', path, { body: { metadata: { name: 'cp' } } });
      expect(put.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'verticalpodautoscalercheckpoints.autoscaling.k8s.io "cp" not found',
        reason: 'NotFound',
        details: { name: 'cp', group: 'autoscaling.k8s.io', kind: 'verticalpodautoscalercheckpoints' },
        code: 404,
      });
    });

    it('a PriorityClass leaves out globalDefault: false', async () => {
      const body = { metadata: { name: 'low' }, value: 5, globalDefault: false };
      const created = await raw(c, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body });
      expect(created.status).toBe(201);
      expect(created.json).not.toHaveProperty('globalDefault');
    });

    it("a core Event comes back with its unset fields empty, as Go's encoder writes them", async () => {
      const body = {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'kube-system' },
        reason: 'R',
        message: 'm',
        type: 'Normal',
      };
      const created = await raw(c, 'POST', `${NS}/events`, { body });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({
        source: {},
        firstTimestamp: null,
        lastTimestamp: null,
        eventTime: null,
        reportingComponent: '',
        reportingInstance: '',
      });
    });

    it('a SelfSubjectAccessReview echoes no empty attribute, and its zero time by version', async () => {
      const body = {
        spec: { resourceAttributes: { group: '', resource: 'pods', verb: 'list', namespace: '' } },
      };
      const review = await raw(c, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body });
      expect(review.json.spec).toEqual({ resourceAttributes: { resource: 'pods', verb: 'list' } });
      expect(review.json.metadata).toEqual(omitsZeroTime ? {} : { creationTimestamp: null });
    });

    it('a TokenRequest is stamped with its time, and from 1.36 the account UID', async () => {
      const sa = await raw(c, 'GET', `${NS}/serviceaccounts/default`);
      const token = await raw(c, 'POST', `${NS}/serviceaccounts/default/token`, { body: { spec: {} } });
      expect(token.status).toBe(201);
      expect(token.json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
      if (omitsZeroTime) expect(token.json.metadata.uid).toBe(sa.json.metadata.uid);
      else expect(token.json.metadata).not.toHaveProperty('uid');
    });

    it("a SelfSubjectReview for a certificate's holder names the credential, and has its time", async () => {
      const kc = new KubeConfig();
      kc.loadFromString(await c.kubeconfigFor({ user: 'alice', groups: ['team'] }));
      const answer = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
      const review = { json: JSON.parse(JSON.stringify(answer)) };
      expect(review.json.metadata.creationTimestamp).toMatch(/^\d{4}-/);
      expect(review.json.status.userInfo).toMatchObject({
        username: 'alice',
        extra: {
          'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/)],
        },
      });
      expect(review.json.status.userInfo).not.toHaveProperty('uid');
    });
  });
}
