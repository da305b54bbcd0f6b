import { balloonsCapability } from './balloons/capability.js';
import { claimsCapability } from './claims/capability.js';
import { cycleCapability } from './cycle/capability.js';
import { featuresCapability } from './features/capability.js';
import type { FeaturedCapability } from './features/spec.js';
import { fleetCapability } from './fleet/capability.js';
import { inventoryCapability } from './inventory/capability.js';
import { nodescopeCapability } from './nodescope/capability.js';
import type { FunctionSpec, RuleSpec, ScheduleSpec } from './platform/catalogue.js';
import { reportCapability } from './report/capability.js';

/**
 * Every capability fleetscope ships: add one here and the stack, the local runtime and the handler kit
 * get it. The list sits above the platform layer and the capabilities' folders: it imports them, and
 * the platform (handler kit, catalogue types) never imports it.
 */
export const CAPABILITIES: FeaturedCapability[] = [
  fleetCapability,
  inventoryCapability,
  claimsCapability,
  nodescopeCapability,
  balloonsCapability,
  cycleCapability,
  featuresCapability,
  reportCapability,
];

export const allFunctions = (): FunctionSpec[] => CAPABILITIES.flatMap((c) => c.functions);
export const allSchedules = (): ScheduleSpec[] => CAPABILITIES.flatMap((c) => c.schedules);
export const allRules = (): RuleSpec[] => CAPABILITIES.flatMap((c) => c.rules);

export function functionSpec(id: string): FunctionSpec {
  const spec = allFunctions().find((f) => f.id === id);
  if (!spec) throw new Error(`no function "${id}" in the catalogue`);
  return spec;
}

/** Schedules in dependency order (each after those it names in `after`); throws on a cycle. */
export function schedulesInOrder(schedules = allSchedules()): ScheduleSpec[] {
  const byId = new Map(schedules.map((s) => [s.id, s]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: ScheduleSpec[] = [];
  const visit = (s: ScheduleSpec) => {
    if (done.has(s.id)) return;
    if (visiting.has(s.id)) throw new Error(`schedule dependency cycle through "${s.id}"`);
    visiting.add(s.id);
    for (const dep of s.after ?? []) {
      const d = byId.get(dep);
      if (!d) throw new Error(`schedule "${s.id}" runs after unknown schedule "${dep}"`);
      visit(d);
    }
    visiting.delete(s.id);
    done.add(s.id);
    out.push(s);
  };
  schedules.forEach(visit);
  return out;
}
