/**
 * The ClusterRole aggregation controller (kube-controller-manager's clusterrole-aggregation): a
 * ClusterRole with an aggregationRule gets, as its rules, the union of the rules of every other
 * ClusterRole its selectors match (per selector, roles in name order; a rule already present is not
 * added again). It rewrites a role only when the union differs, so it settles.
 */

import { RBAC_GROUP } from './authz.js';
import { deepEqual, type Json, type JsonObject } from './json.js';
import { labelSelectorObjectMatches } from './selectors.js';
import type { SimState } from './state.js';

const ROLES = `clusterroles.${RBAC_GROUP}`;

function aggregatedRules(roles: ReadonlyMap<string, Json>, role: Json): Json[] {
  const names = [...roles.keys()].sort();
  const rules: Json[] = [];
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? [])
    for (const name of names) {
      if (name === role.metadata.name) continue;
      const other = roles.get(name);
      if (!labelSelectorObjectMatches(selector, other?.metadata?.labels)) continue;
      for (const rule of other?.rules ?? []) if (!rules.some((r) => deepEqual(r, rule))) rules.push(rule);
    }
  return rules;
}

/** One pass: the aggregated roles whose rules differ from the union, with the union. */
function stale(roles: ReadonlyMap<string, Json>): [string, Json[]][] {
  const out: [string, Json[]][] = [];
  for (const [name, role] of roles) {
    if (!role?.aggregationRule) continue;
    const rules = aggregatedRules(roles, role);
    // Semantic equality: no rules and an empty list are the same.
    if (!deepEqual(rules, role.rules ?? [])) out.push([name, rules]);
  }
  return out;
}

/** The bootstrap roles with their aggregated rules filled in (to a fixed point: view feeds edit feeds admin). */
export function aggregateBootstrap(entries: [string, Json][]): [string, Json][] {
  const roles = new Map(entries);
  for (let pass = 0; pass < 10; pass++) {
    const changes = stale(roles);
    if (!changes.length) break;
    for (const [name, rules] of changes) roles.set(name, { ...(roles.get(name) as JsonObject), rules });
  }
  return [...roles];
}

/** Brings every aggregated ClusterRole's rules up to date (after any ClusterRole changed). */
export function aggregateClusterRoles(cluster: SimState): void {
  const collection = cluster.store.collection(ROLES);
  const roles = new Map(collection.keys().map((k) => [k, collection.get(k)] as [string, Json]));
  for (const [name, rules] of stale(roles))
    cluster.internalWrite(ROLES, name, { ...(roles.get(name) as JsonObject), rules });
}
