import { describe, expect, it } from 'vitest';
import { backendDnsName, serviceDnsName } from '../../shared/claims/dns.js';
import { claimsChangedEvents, EVENT_VALUE_BYTES, summarizeValue } from '../../shared/claims/events.js';
import {
  type ClusterIdentity,
  DEFAULT_SETTINGS,
  desiredClaims,
  desiredDigest,
  idChangeProblem,
  joinProblem,
  leaveProblem,
  moveProblem,
  planSync,
} from '../../shared/claims/identity.js';
import {
  CLUSTER_ID_CLAIM,
  CLUSTERSET_CLAIM,
  claimValueProblem,
  clusterIdProblem,
  customClaimNameProblem,
  customClaimProblem,
  customClaimWarnings,
  ID_CLAIM,
  MAX_CLAIM_VALUE_BYTES,
} from '../../shared/claims/rules.js';
import { detailSchemas } from '../../shared/platform/events.js';

const base: ClusterIdentity = {
  cluster: 'alpha',
  clusterId: '8545e17f-fa2f-414d-b762-8c54d2681416',
  idSource: 'kube-system-uid',
  kubeSystemUid: '8545e17f-fa2f-414d-b762-8c54d2681416',
  version: 3,
  updatedAt: '2026-11-21T10:00:00Z',
};

describe('id.k8s.io rules', () => {
  it('accepts a kube-system UID and human-readable DNS labels', () => {
    expect(clusterIdProblem(base.clusterId)).toBeNull();
    expect(clusterIdProblem('prod-eu-1')).toBeNull();
    expect(clusterIdProblem('a'.repeat(63))).toBeNull();
  });

  it('refuses anything that is not an RFC 1123 label, naming the rule', () => {
    expect(clusterIdProblem('Prod')).toMatch(/RFC 1123 label/);
    expect(clusterIdProblem('prod.eu')).toMatch(/RFC 1123 label/);
    expect(clusterIdProblem('-prod')).toMatch(/RFC 1123 label/);
    expect(clusterIdProblem('a'.repeat(64))).toMatch(/at most 63/);
    expect(clusterIdProblem('')).toMatch(/empty/);
  });

  it('is immutable during a membership: the refusal says why and how to rename', () => {
    const member = { ...base, clusterSet: 'blue' };
    const problem = idChangeProblem(member, 'prod-eu-1');
    expect(problem).toMatch(/member of ClusterSet "blue"/);
    expect(problem).toMatch(/must not change during a membership/);
    expect(problem).toMatch(/leave, change, rejoin/);
    expect(idChangeProblem(base, 'prod-eu-1')).toBeNull();
    expect(idChangeProblem(member, member.clusterId)).toBeNull();
  });

  it('refuses changes while a membership change is in progress', () => {
    const pending = {
      ...base,
      pending: { op: 'join' as const, set: 'blue', token: 't', at: base.updatedAt },
    };
    expect(idChangeProblem(pending, 'x')).toMatch(/is joining "blue"/);
    expect(leaveProblem(pending)).toMatch(/is joining/);
    expect(joinProblem(pending, 'blue')).toBeNull(); // resuming the same join
    expect(joinProblem(pending, 'green')).toMatch(/is joining "blue"/);
  });
});

describe('membership rules', () => {
  it('one ClusterSet at a time: joining another is refused in favour of move', () => {
    expect(joinProblem({ ...base, clusterSet: 'blue' }, 'green')).toMatch(/clusterset move/);
    expect(joinProblem({ ...base, clusterSet: 'blue' }, 'blue')).toBeNull();
    expect(joinProblem(base, 'Blue')).toMatch(/RFC 1123 label/);
  });

  it('leave and move need a membership', () => {
    expect(leaveProblem(base)).toMatch(/not a member/);
    expect(leaveProblem({ ...base, clusterSet: 'blue' }, 'green')).toMatch(/not "green"/);
    expect(moveProblem(base, 'green')).toMatch(/clusterset join/);
    expect(moveProblem({ ...base, clusterSet: 'green' }, 'green')).toMatch(/already a member/);
    expect(moveProblem({ ...base, clusterSet: 'blue' }, 'green')).toBeNull();
  });
});

describe('custom claims', () => {
  it('refuses the reserved domains, naming the rule', () => {
    for (const name of [
      'foo.k8s.io',
      'sigs.k8s.io',
      'x.sigs.k8s.io',
      'a.kubernetes.io',
      'k8s.io',
      'kubernetes.io',
    ]) {
      expect(customClaimNameProblem(name), name).toMatch(/reserved domain/);
    }
    expect(customClaimNameProblem(ID_CLAIM)).toMatch(/well-known claim/);
    expect(customClaimNameProblem(CLUSTERSET_CLAIM)).toMatch(/clusterset join\|leave\|move/);
    expect(customClaimNameProblem(CLUSTER_ID_CLAIM)).toMatch(/mirrors id.k8s.io/);
    expect(customClaimNameProblem('platform.open-cluster-management.io')).toMatch(/Open Cluster Management/);
  });

  it('refuses invalid names (RFC 1123 subdomain, with a domain suffix)', () => {
    expect(customClaimNameProblem('Upper.Example.COM')).toMatch(/RFC 1123 subdomain/);
    expect(customClaimNameProblem('under_score.example.com')).toMatch(/RFC 1123 subdomain/);
    expect(customClaimNameProblem(`${'a'.repeat(250)}.com`)).toMatch(/at most 253/);
    expect(customClaimNameProblem('region')).toMatch(/domain suffix/);
    expect(customClaimNameProblem('region.example.com')).toBeNull();
    expect(customClaimNameProblem('k8s.io.example.com')).toBeNull();
  });

  it('holds values up to 128 KiB and refuses one byte more', () => {
    expect(claimValueProblem('x'.repeat(MAX_CLAIM_VALUE_BYTES))).toBeNull();
    expect(claimValueProblem('x'.repeat(MAX_CLAIM_VALUE_BYTES + 1))).toMatch(
      /131073 bytes.*at most 131072 bytes \(128 KiB/,
    );
    // Bytes, not characters: 43,691 three-byte characters are 131,073 bytes.
    expect(claimValueProblem('€'.repeat(43_691))).toMatch(/at most 131072 bytes/);
    expect(claimValueProblem('')).toMatch(/must not be empty/);
    expect(customClaimProblem('big.example.com', 'x'.repeat(MAX_CLAIM_VALUE_BYTES + 1))).toMatch(/128 KiB/);
  });

  it('warns when a value will not fit OCM ClusterClaim (1024 characters)', () => {
    expect(customClaimWarnings('a.example.com', 'x'.repeat(1024))).toEqual([]);
    expect(customClaimWarnings('a.example.com', 'x'.repeat(1025))[0]).toMatch(
      /OCM ClusterClaim holds at most 1024/,
    );
  });
});

describe('desired claims and the sync plan', () => {
  it('writes the ID under both names, the ClusterSet only while a member, and the custom claims', () => {
    const d = desiredClaims({ ...base, clusterSet: 'blue' }, { 'zone.example.com': 'a' }, DEFAULT_SETTINGS);
    expect(Object.fromEntries(d)).toEqual({
      [ID_CLAIM]: base.clusterId,
      [CLUSTER_ID_CLAIM]: base.clusterId,
      [CLUSTERSET_CLAIM]: 'blue',
      'zone.example.com': 'a',
    });
    const notMember = desiredClaims(base, {}, { ...DEFAULT_SETTINGS, writeClusterIdName: false });
    expect([...notMember.keys()]).toEqual([ID_CLAIM]);
  });

  it('restores edited and deleted claims, removes a clusterset claim after leave and only its own extras', () => {
    const desired = desiredClaims(base, { 'zone.example.com': 'a' }, DEFAULT_SETTINGS);
    const ops = planSync(desired, [
      { name: ID_CLAIM, value: 'edited', managed: true },
      { name: CLUSTERSET_CLAIM, value: 'blue', managed: false },
      { name: 'old.example.com', value: 'x', managed: true },
      { name: 'theirs.example.com', value: 'y', managed: false },
      { name: 'zone.example.com', value: 'a', managed: true },
    ]);
    expect(ops).toEqual([
      { kind: 'update', name: ID_CLAIM, old: 'edited', value: base.clusterId, adopt: false },
      { kind: 'create', name: CLUSTER_ID_CLAIM, value: base.clusterId },
      { kind: 'delete', name: CLUSTERSET_CLAIM, old: 'blue' },
      { kind: 'delete', name: 'old.example.com', old: 'x' },
    ]);
    expect(planSync(desired, [])).toHaveLength(3);
  });

  it('digests desired states independently of insertion order', () => {
    const a = new Map([
      ['a', '1'],
      ['b', '2'],
    ]);
    const b = new Map([
      ['b', '2'],
      ['a', '1'],
    ]);
    expect(desiredDigest(a)).toBe(desiredDigest(b));
    expect(desiredDigest(a)).not.toBe(desiredDigest(new Map([['a', '1']])));
  });
});

describe('events', () => {
  it('carry short values whole and cut long ones with size and SHA-256, valid against the catalogue', () => {
    expect(summarizeValue('blue')).toEqual({ value: 'blue', bytes: 4, truncated: false });
    expect(summarizeValue(undefined)).toBeNull();
    const long = summarizeValue('€'.repeat(1000))!;
    expect(long.truncated).toBe(true);
    expect(long.bytes).toBe(3000);
    expect(Buffer.byteLength(long.value)).toBeLessThanOrEqual(EVENT_VALUE_BYTES);
    expect(long.sha256).toMatch(/^[0-9a-f]{64}$/);
    const events = claimsChangedEvents({
      cluster: 'alpha',
      clusterId: 'x',
      origin: 'registry',
      reason: 'set',
      changes: Array.from({ length: 20 }, (_, i) => ({
        claim: `c${i}.example.com`,
        old: null,
        new: summarizeValue('v'.repeat(128 * 1024)),
      })),
      at: new Date('2026-11-21T10:00:00Z'),
    });
    expect(events).toHaveLength(2);
    for (const e of events) {
      expect(() => detailSchemas.ClusterClaimsChanged.parse(e.detail)).not.toThrow();
      expect(JSON.stringify(e.detail).length).toBeLessThan(32 * 1024);
    }
  });
});

describe('DNS helper', () => {
  it('builds <hostname>.<clusterID>.<svc>.<ns>.svc.clusterset.local', () => {
    expect(
      backendDnsName({ hostname: 'web-0', clusterId: 'prod-eu-1', service: 'web', namespace: 'shop' }),
    ).toBe('web-0.prod-eu-1.web.shop.svc.clusterset.local');
    expect(serviceDnsName('web', 'shop')).toBe('web.shop.svc.clusterset.local');
  });

  it('refuses a part that is not a DNS label', () => {
    expect(() =>
      backendDnsName({ hostname: 'web_0', clusterId: 'x', service: 'web', namespace: 'shop' }),
    ).toThrow(/hostname "web_0" is not an RFC 1123 label/);
    expect(() =>
      backendDnsName({ hostname: 'w', clusterId: 'a.b', service: 'web', namespace: 'shop' }),
    ).toThrow(/cluster ID/);
  });
});
