/**
 * ValidateNodeSelector's rule for node fields (validateNodeFieldSelectorRequirement): `In` and `NotIn`
 * on a field such as metadata.name take exactly one value. A real 1.33 and 1.36 refuse more with 422
 * (npm run fidelity found fleetscope's balloon DaemonSet listing several nodes in one term).
 */
import { type FieldError, fieldRequired } from './errors.js';
import type { Json } from './json.js';

export function validateNodeAffinity(spec: Json, path: string): FieldError[] {
  const required = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const base = `${path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`;
  const errs: FieldError[] = [];
  (required?.nodeSelectorTerms ?? []).forEach((term: Json, i: number) => {
    (term?.matchFields ?? []).forEach((req: Json, j: number) => {
      if (['In', 'NotIn'].includes(req?.operator) && (req?.values ?? []).length !== 1)
        errs.push(
          fieldRequired(
            `${base}.nodeSelectorTerms[${i}].matchFields[${j}].values`,
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
          ),
        );
    });
  });
  return errs;
}
