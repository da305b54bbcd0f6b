/**
 * Beside a running upstream VPA: which VPAs fleetscope serves (spec.recommenders, upstream's default
 * recommender), which it skips with the reason, what it warns about, and how upstream's components are
 * recognised among kube-system's Deployments.
 */
import { describe, expect, it } from 'vitest';
import type { DaemonSetObject, VpaObject } from '../../shared/nodescope/k8s-types.js';
import { applyModeOf, resolveTargets } from '../../shared/nodescope/targets.js';
import { componentsOf, recommenderNameOf } from '../../shared/nodescope/upstream-read.js';
import type { UpstreamVpa } from '../../shared/nodescope/upstream-vpa.js';

const ds: DaemonSetObject = {
  metadata: { name: 'agent', namespace: 'mon', uid: 'ds-uid' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }] } },
  },
};

const vpa = (
  name: string,
  over: { scope?: boolean; recommenders?: string[]; mode?: string; target?: string } = {},
): VpaObject => ({
  metadata: { name, namespace: 'mon', uid: `uid-${name}` },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: over.target ?? 'DaemonSet', name: 'agent' },
    ...(over.scope === false ? {} : { scope: 'node' }),
    ...(over.recommenders ? { recommenders: over.recommenders.map((n) => ({ name: n })) } : {}),
    updatePolicy: { updateMode: over.mode ?? 'InPlace' },
  },
});

const none: UpstreamVpa = { state: 'read', components: [] };
const recommender: UpstreamVpa = {
  state: 'read',
  components: [{ role: 'recommender', where: 'kube-system/vpa-recommender' }],
};
const all: UpstreamVpa = {
  state: 'read',
  components: [
    { role: 'recommender', where: 'kube-system/vpa-recommender' },
    { role: 'updater', where: 'kube-system/vpa-updater' },
    { role: 'admission-controller', where: 'kube-system/vpa-admission-controller' },
  ],
};

const resolve = (v: VpaObject, upstream: UpstreamVpa) => resolveTargets([v], [ds], upstream);

describe('which VPAs fleetscope serves beside upstream VPA', () => {
  it("a scoped VPA naming no recommender is fleetscope's without upstream, and left alone while upstream's recommender runs", () => {
    expect(resolve(vpa('plain'), none).targets.map((t) => t.vpa.name)).toEqual(['plain']);
    const r = resolve(vpa('plain'), recommender);
    expect(r.targets).toEqual([]);
    expect(r.rejected).toEqual([]);
    expect(r.skipped).toEqual([
      expect.objectContaining({
        vpa: 'plain',
        reason: expect.stringMatching(
          /names no recommender and upstream's recommender runs \(kube-system\/vpa-recommender\).*recommenders: \[\{name: fleetscope\}\]/,
        ),
      }),
    ]);
  });

  it("a VPA naming fleetscope is served even while upstream's recommender runs", () => {
    const r = resolve(vpa('ours', { recommenders: ['fleetscope'] }), recommender);
    expect(r.targets.map((t) => t.vpa.name)).toEqual(['ours']);
    expect(r.skipped).toEqual([]);
  });

  it('a recommender named otherwise than default does not claim VPAs naming none', () => {
    const custom: UpstreamVpa = {
      state: 'read',
      components: [{ role: 'recommender', where: 'kube-system/vpa-recommender', recommenderName: 'strict' }],
    };
    expect(resolve(vpa('plain'), custom).targets).toHaveLength(1);
  });

  it('bad input: a recommenders list naming another recommender only is skipped, with the reason named', () => {
    for (const upstream of [none, recommender]) {
      const r = resolve(vpa('theirs', { recommenders: ['strict'] }), upstream);
      expect(r.targets).toEqual([]);
      expect(r.rejected).toEqual([]);
      expect(r.skipped.map((s) => s.reason)).toEqual([
        'spec.recommenders names strict, not fleetscope: left to that recommender',
      ]);
    }
  });

  it("a VPA naming fleetscope without a scope is refused with the reason; an unscoped VPA naming none is not fleetscope's", () => {
    const named = resolve(vpa('named', { scope: false, recommenders: ['fleetscope'] }), none);
    expect(named.targets).toEqual([]);
    expect(named.rejected.map((r) => r.reason)).toEqual([
      expect.stringContaining('names fleetscope, but the VPA asks for no scope'),
    ]);
    const plain = resolve(vpa('plain', { scope: false }), all);
    expect([plain.targets, plain.rejected, plain.skipped]).toEqual([[], [], []]);
  });

  it("warns, per VPA, when upstream's updater would evict or its admission controller mutate, and when default is named too", () => {
    const warningsIn = (mode: string, names = ['fleetscope']) =>
      resolve(vpa('v', { recommenders: names, mode }), all).targets[0]?.warnings ?? [];
    for (const mode of ['Recreate', 'Auto', 'InPlaceOrRecreate'])
      expect(warningsIn(mode)).toContainEqual(
        expect.stringContaining(
          `upstream's updater (kube-system/vpa-updater) evicts pods in updateMode ${mode}`,
        ),
      );
    for (const mode of ['Off', 'Initial', 'InPlace'])
      expect(warningsIn(mode).some((w) => w.includes('evicts'))).toBe(false);
    expect(warningsIn('InPlace')).toEqual([expect.stringContaining("upstream's admission controller")]);
    expect(warningsIn('Off')).toEqual([]);
    expect(warningsIn('Off', ['fleetscope', 'default'])).toEqual([
      expect.stringContaining(
        "also names default: upstream's recommender (kube-system/vpa-recommender) sizes it too",
      ),
    ]);
    // Without upstream, nothing to warn about.
    expect(
      resolve(vpa('v', { recommenders: ['fleetscope'], mode: 'Recreate' }), none).targets[0]?.warnings,
    ).toBeUndefined();
  });

  it('a cycle that could not look for upstream serves as before, and says it could not look', () => {
    const unknown: UpstreamVpa = { state: 'unknown', components: [], detail: 'forbidden' };
    const t = resolve(vpa('plain', { mode: 'Off' }), unknown).targets;
    expect(t.map((x) => x.warnings)).toEqual([["could not check for upstream VPA's components (forbidden)"]]);
  });
});

describe("upstream's components among kube-system's Deployments", () => {
  const dep = (name: string, image: string, args: string[] = [], replicas?: number) => ({
    metadata: { name, namespace: 'kube-system' },
    spec: {
      ...(replicas !== undefined ? { replicas } : {}),
      template: { spec: { containers: [{ image, args }] } },
    },
  });

  it('known by name or by image; scaled to zero is not running; the recommender name read from its flags', () => {
    const found = componentsOf([
      dep('vpa-recommender', 'registry.k8s.io/autoscaling/vpa-recommender:1.8.0'),
      dep('my-vpa-updater', 'registry.k8s.io/autoscaling/vpa-updater:1.8.0'),
      dep('vpa-admission-controller', 'example/other:1', [], 0),
      dep('coredns', 'registry.k8s.io/coredns/coredns:v1.11.1'),
      dep('strict', 'registry.k8s.io/autoscaling/vpa-recommender@sha256:abc', ['--recommender-name=strict']),
    ]);
    expect(found).toEqual([
      { role: 'recommender', where: 'kube-system/vpa-recommender' },
      { role: 'updater', where: 'kube-system/my-vpa-updater' },
      { role: 'recommender', where: 'kube-system/strict', recommenderName: 'strict' },
    ]);
    expect(recommenderNameOf(dep('r', 'x', ['--v=4', '--recommender-name', 'two']))).toBe('two');
  });
});

describe('update modes (VPA 1.7/1.8)', () => {
  it('fleetscope never evicts: every mode that updates running pods resizes in place, InPlace included', () => {
    expect(
      Object.fromEntries(
        (['Off', 'Initial', 'Recreate', 'Auto', 'InPlaceOrRecreate', 'InPlace'] as const).map((m) => [
          m,
          applyModeOf(m),
        ]),
      ),
    ).toEqual({
      Off: 'off',
      Initial: 'initial',
      Recreate: 'inplace',
      Auto: 'inplace',
      InPlaceOrRecreate: 'inplace',
      InPlace: 'inplace',
    });
    expect(resolve(vpa('v', { mode: 'InPlace' }), none).targets[0]?.updateMode).toBe('InPlace');
    expect(resolve(vpa('v', { mode: 'InPlaceOnly' }), none).rejected[0]?.reason).toBe(
      'updateMode "InPlaceOnly" is not one of Off, Initial, Recreate, InPlaceOrRecreate, InPlace, Auto',
    );
  });
});
