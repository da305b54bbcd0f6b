/**
 * Living beside a running upstream VPA: which VPAs are fleetscope's, and what upstream's components
 * would do to the ones it sizes. Pure: the facts come from upstream-read.ts.
 *
 * Upstream's rule (recommender `--recommender-name`, default `default`): a recommender serves the VPAs
 * whose `spec.recommenders` names it, and the default one also those that name none. fleetscope is a
 * recommender named `fleetscope`. It serves a VPA that names it, and a scoped VPA that names no
 * recommender only while no upstream default recommender runs (before this, every scoped VPA was
 * fleetscope's; a cluster without upstream's recommender keeps that). A scoped VPA that names other
 * recommenders only, or names none while upstream's recommender runs, is left alone with the reason.
 */
import type { VpaObject } from './k8s-types.js';

export const FLEETSCOPE_RECOMMENDER = 'fleetscope';
export const DEFAULT_RECOMMENDER = 'default';
export const UPSTREAM_NAMESPACE = 'kube-system';
export const UPSTREAM_WEBHOOK = 'vpa-webhook-config';

export type UpstreamRole = 'recommender' | 'updater' | 'admission-controller';

/** One of upstream's components found running in the cluster. */
export interface UpstreamComponent {
  role: UpstreamRole;
  /** `kube-system/vpa-recommender`, or `MutatingWebhookConfiguration vpa-webhook-config`. */
  where: string;
  /** The recommender's `--recommender-name` (upstream's default: `default`). */
  recommenderName?: string;
}

/** What the cycle found of upstream VPA; `unknown` when it could not look (the reason in `detail`). */
export interface UpstreamVpa {
  state: 'read' | 'unknown' | 'not-read';
  components: UpstreamComponent[];
  detail?: string;
}

export const NOT_READ: UpstreamVpa = { state: 'not-read', components: [] };

/** A skipped VPA, or a warning about one fleetscope sizes, as the cluster record keeps it. */
export interface UpstreamNotice {
  namespace: string;
  vpa: string;
  uid: string;
  updateMode: string;
  kind: 'skipped' | 'warning';
  reason: string;
  /** The DaemonSet the VPA targets: the one fleetscope sizes (a warning) or leaves alone (skipped). */
  daemonSet?: string;
  /** Said (logged, and the Event written unless in mode Off); one not said is tried again next cycle. */
  said?: boolean;
}

/** How fleetscope stands to one VPA. */
export type Claim =
  /** Not about fleetscope at all: no scope, and it does not name fleetscope. */
  | { kind: 'none' }
  /** A scoped VPA fleetscope leaves to another recommender. */
  | { kind: 'skipped'; reason: string }
  /** It names fleetscope but asks for nothing fleetscope does. */
  | { kind: 'refused'; reason: string }
  /** fleetscope sizes it; what upstream's components would do to it besides. */
  | { kind: 'ours'; warnings: string[]; updaterEvicts: boolean };

/** Update modes in which upstream's updater evicts pods (InPlaceOrRecreate when a resize fails). */
const EVICTING_MODES = new Set(['Auto', 'Recreate', 'InPlaceOrRecreate']);

export const recommendersOf = (vpa: VpaObject): string[] =>
  (vpa.spec?.recommenders ?? []).map((r) => r?.name ?? '').filter((n) => n !== '');

const ofRole = (u: UpstreamVpa, role: UpstreamRole) => u.components.filter((c) => c.role === role);

/** The running recommenders that serve VPAs naming `name` (`default` also serves those naming none). */
const recommendersNamed = (u: UpstreamVpa, name: string) =>
  ofRole(u, 'recommender').filter((c) => (c.recommenderName ?? DEFAULT_RECOMMENDER) === name);

const list = (cs: UpstreamComponent[]) => cs.map((c) => c.where).join(', ');

export function claimOf(vpa: VpaObject, scoped: boolean, upstream: UpstreamVpa): Claim {
  const names = recommendersOf(vpa);
  const ours = names.includes(FLEETSCOPE_RECOMMENDER);
  if (!scoped && !ours) return { kind: 'none' };
  if (names.length > 0 && !ours)
    return {
      kind: 'skipped',
      reason: `spec.recommenders names ${names.join(', ')}, not ${FLEETSCOPE_RECOMMENDER}: left to ${names.length > 1 ? 'those recommenders' : 'that recommender'}`,
    };
  if (!scoped)
    return {
      kind: 'refused',
      reason: `spec.recommenders names ${FLEETSCOPE_RECOMMENDER}, but the VPA asks for no scope: fleetscope sizes DaemonSets per node or node-label group only (spec.scope, or the annotation fleetscope.io/scope)`,
    };
  const defaults = recommendersNamed(upstream, DEFAULT_RECOMMENDER);
  if (names.length === 0 && defaults.length > 0)
    return {
      kind: 'skipped',
      reason: `it names no recommender and upstream's recommender runs (${list(defaults)}), which serves such VPAs: left to it; set spec.recommenders: [{name: ${FLEETSCOPE_RECOMMENDER}}] for fleetscope to size it`,
    };
  return {
    kind: 'ours',
    warnings: warningsFor(vpa, names, upstream),
    updaterEvicts: updaterEvicts(vpa, upstream),
  };
}

/**
 * Whether upstream's updater runs (or could not be ruled out) and evicts in this VPA's mode: it evicts
 * on status.recommendation, so that DaemonSet-wide figure is not published while it does.
 */
function updaterEvicts(vpa: VpaObject, upstream: UpstreamVpa): boolean {
  if (!EVICTING_MODES.has(vpa.spec?.updatePolicy?.updateMode ?? 'Auto')) return false;
  return upstream.state === 'unknown' || ofRole(upstream, 'updater').length > 0;
}

/** What upstream's components would do to a VPA fleetscope sizes. */
function warningsFor(vpa: VpaObject, names: string[], upstream: UpstreamVpa): string[] {
  const out: string[] = [];
  if (upstream.state === 'unknown')
    out.push(`could not check for upstream VPA's components (${upstream.detail ?? 'no detail'})`);
  for (const other of names.filter((n) => n !== FLEETSCOPE_RECOMMENDER)) {
    const running = recommendersNamed(upstream, other);
    if (running.length > 0)
      out.push(
        `spec.recommenders also names ${other}: upstream's recommender (${list(running)}) sizes it too, and each overwrites the other's status`,
      );
  }
  const mode = vpa.spec?.updatePolicy?.updateMode ?? 'Auto';
  const updaters = ofRole(upstream, 'updater');
  if (updaters.length > 0 && EVICTING_MODES.has(mode))
    out.push(
      `upstream's updater (${list(updaters)}) evicts pods in updateMode ${mode} once the VPA's status has a recommendation for them (status.groups, with its DaemonSetScope gate); an evicted pod comes back at the template's size. Use updateMode InPlace (never evicts; fleetscope resizes in place), or keep the updater away from this VPA`,
    );
  const admission = ofRole(upstream, 'admission-controller');
  if (admission.length > 0 && mode !== 'Off')
    out.push(
      `upstream's admission controller (${list(admission)}) sets a new pod's requests from the VPA's status in updateMode ${mode}; fleetscope then resizes the pod to its node's recommendation`,
    );
  return out;
}

/** The cycle summary's one phrase for upstream VPA. */
export function upstreamPhrase(u: UpstreamVpa): string {
  if (u.state === 'not-read') return 'upstream VPA not looked for';
  if (u.state === 'unknown') return `upstream VPA unknown (${u.detail ?? 'no detail'})`;
  if (u.components.length === 0) return 'no upstream VPA';
  const roles = [...new Set(u.components.map((c) => c.role))];
  return `upstream VPA: ${roles.join(', ')}`;
}
