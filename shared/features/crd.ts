/**
 * The `Feature` custom resource (features.fleetscope.io/v1alpha1, namespaced) that mirrors each Feature
 * record into its cluster, so people and in-cluster components read it with kubectl. fleetscope writes
 * `spec` and the status fields it owns (state, tasks, transition, observedVersion, its workers' uses);
 * an in-cluster component uses the feature when `status.value` is on (the client flow's rule, worked out
 * by fleetscope), and reports its use by merge-patching its own key of `status.uses`:
 *
 *   kubectl patch feature widgets -n widgets --subresource=status --type=merge \
 *     -p '{"status":{"uses":{"widget-agent":{"value":"on","time":"2026-11-21T10:00:00Z"}}}}'
 *
 * `uses` is a map keyed by component, so that components reporting at the same time never overwrite
 * each other (a merge patch merges maps key by key, and would replace a list whole).
 */
import { OBJECT_META } from '../kernel/crds/version.js';

export const FEATURE_CRD = {
  group: 'fleetscope.io',
  version: 'v1alpha1',
  plural: 'features',
  kind: 'Feature',
  crdName: 'features.fleetscope.io',
} as const;

export const FEATURE_API_VERSION = `${FEATURE_CRD.group}/${FEATURE_CRD.version}`;

const onOff = { type: 'string', enum: ['on', 'off'] };
const loose = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const schema = {
  type: 'object',
  properties: {
    ...OBJECT_META,
    spec: {
      type: 'object',
      properties: {
        default: onOff,
        desired: onOff,
        description: { type: 'string' },
        components: { type: 'array', items: { type: 'string' } },
      },
    },
    status: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['On', 'Off', 'TurningOn', 'TurningOff'] },
        /** What a component should use now (on: On, or TurningOn once only waits for uses are left). */
        value: onOff,
        observedVersion: { type: 'integer' },
        /** The epoch of the last clearing of uses: a component echoes it with its use. */
        usesEpoch: { type: 'integer' },
        transition: loose,
        tasks: { type: 'array', items: loose },
        dangling: { type: 'array', items: { type: 'string' } },
        uses: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: {
              value: onOff,
              time: { type: 'string' },
              epoch: { type: 'integer' },
              source: { type: 'string' },
            },
            required: ['value', 'time'],
          },
        },
      },
    },
  },
};

export function featureCrd() {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: FEATURE_CRD.crdName,
      labels: { 'app.kubernetes.io/managed-by': 'fleetscope' },
    },
    spec: {
      group: FEATURE_CRD.group,
      scope: 'Namespaced',
      names: {
        plural: FEATURE_CRD.plural,
        singular: 'feature',
        kind: FEATURE_CRD.kind,
        listKind: 'FeatureList',
      },
      versions: [
        {
          name: FEATURE_CRD.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'State', type: 'string', jsonPath: '.status.state' },
            { name: 'Value', type: 'string', jsonPath: '.status.value' },
            { name: 'Desired', type: 'string', jsonPath: '.spec.desired' },
            { name: 'Default', type: 'string', jsonPath: '.spec.default' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}
