/**
 * Why there are no node-scoped DaemonSets to show: an empty list alone leaves the operator guessing
 * between "nothing is wrong yet" (no cycle has run), "cannot work here" (no metrics API) and "nothing
 * asked for it" (no VPA with node scope).
 */
import type { CliContext } from '../context.js';

export async function whyNoNodeScope(ctx: CliContext, only?: string): Promise<string> {
  const names = only ? [only] : (await ctx.registry.list()).map((c) => c.name);
  if (names.length === 0) return 'no node-scoped DaemonSets: no clusters registered';
  const reasons = await Promise.all(
    names.map(async (name) => {
      const status = await ctx.registry.getStatus(name);
      if (!status) return `${name}: no cycle has run yet`;
      if (status.metricsApi !== 'available')
        return `${name}: no metrics API (metrics.k8s.io ${status.metricsApi})`;
      return `${name}: no VPA asks for node scope (spec.scope: node, or the annotation fleetscope.io/scope: node, on a DaemonSet's VPA)`;
    }),
  );
  return ['no node-scoped DaemonSets:', ...reasons.map((r) => `  ${r}`)].join('\n');
}
