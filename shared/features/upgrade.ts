/**
 * Whether feature states block an upgrade or downgrade (KEP-3920: "make it easy to tell if it is not
 * safe to upgrade / downgrade due to feature states"), of fleetscope or of a cluster's Kubernetes, and
 * why. Pure: from the records, their uses and the catalog.
 *
 *   a transition in progress           blocks any upgrade or downgrade (its tasks assume this version)
 *   an Off feature with a use on       a component still uses what was turned off (dangling use)
 *   a feature this version cannot name its records outlive the code that knows how to turn it off
 *   a target that cannot serve it      Kubernetes outside the feature's range, or a fleetscope before it
 */
import type { FeatureCatalog } from './catalog.js';
import { type FeatureRecord, inTransition, refKey, type Use } from './model.js';

export interface UpgradeTarget {
  kubernetes?: string;
  fleetscope?: string;
}

export interface Blocker {
  cluster: string;
  feature: string;
  reason: string;
}

/** "v1.33.2", "1.33" -> [1, 33, 2]; compares numerically, missing parts as 0. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/, '')
      .split(/[.+-]/)
      .slice(0, 3)
      .map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

const minorOf = (v: string) => v.replace(/^v/, '').split('.').slice(0, 2).join('.');

export function upgradeBlockers(
  features: readonly { record: FeatureRecord; uses: readonly Use[] }[],
  catalog: FeatureCatalog,
  target: UpgradeTarget,
): Blocker[] {
  const out: Blocker[] = [];
  for (const { record: r, uses } of features) {
    const block = (reason: string) => out.push({ cluster: r.cluster, feature: refKey(r), reason });
    const spec = catalog.get(r);
    const on = uses.filter((u) => u.value === 'on');
    const live = r.state !== 'Off' || on.length > 0;
    if (inTransition(r.state)) {
      const t = r.tasks[0];
      if (t?.stuck)
        block(
          `${r.state} STUCK at "${t.title}" since ${new Date(t.stuck.at).toISOString()}: ${t.stuck.reason} (features retry|skip|abandon)`,
        );
      else
        block(
          `${r.state} in progress${t ? ` at "${t.title}"${t.waitingFor ? ` (waiting for: ${t.waitingFor})` : t.lastError ? ` (failing: ${t.lastError})` : ''}` : ''}: let it finish first`,
        );
    }
    if (r.state === 'Off' && on.length)
      block(`Off, but ${on.map((u) => u.component).join(', ')} still report(s) on: a dangling use`);
    if (!spec) {
      if (live)
        block(
          'unknown to this fleetscope (declared by another version, or unregistered): it cannot be turned off here',
        );
      continue;
    }
    const k = spec.kubernetes;
    if (target.kubernetes && k && live) {
      const v = minorOf(target.kubernetes);
      if ((k.min && compareVersions(v, k.min) < 0) || (k.max && compareVersions(v, k.max) > 0))
        block(
          `Kubernetes ${target.kubernetes} cannot serve it (it needs ${k.min ? `>= ${k.min}` : ''}${k.min && k.max ? ' and ' : ''}${k.max ? `<= ${k.max}` : ''}: ${k.why}): turn it off first`,
        );
    }
    if (target.fleetscope && live && compareVersions(target.fleetscope, spec.since) < 0)
      block(
        `fleetscope ${target.fleetscope} cannot serve it (introduced in ${spec.since}): turn it off first`,
      );
  }
  return out;
}
