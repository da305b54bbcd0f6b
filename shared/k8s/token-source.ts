/**
 * Where EKS bearer tokens come from, as cluster access sees it: a credential source handed in by the
 * composition root (shared/fleet/cluster-access.ts wires the AWS side's minter,
 * shared/platform/eks-token.ts). This layer never signs anything and imports no AWS SDK.
 */
import type { AssumeRoleSpec } from './role.js';

/** Anything that can supply a bearer token for an EKS cluster. */
export interface EksTokenProvider {
  /** `role`: mint with that role's credentials (a cluster in another account) instead of our own. */
  token(clusterName: string, region: string, role?: AssumeRoleSpec): Promise<string>;
  /** Forget cached tokens (all, or one cluster's, and that cluster's role session) so the next call mints afresh. */
  invalidate(clusterName?: string): void;
  /** Null when the provider can mint for `region`, else why not (checked when a kubeconfig is read). */
  regionProblem?(region: string): string | null;
}

/** Thrown when an EKS kubeconfig is used by a process that was given no token source. */
export class EksTokenError extends Error {
  override readonly name = 'EksTokenError';
  readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** The shape of an AWS region name; whether a partition lists it is the token source's to say. */
export function regionShapeProblem(region: string): string | null {
  if (!/^[a-z]{2,4}(-[a-z]+)+-\d+$/.test(region)) return `"${region.slice(0, 40)}" is not an AWS region`;
  return null;
}

/** A source that refuses: for processes that reach no EKS cluster (tests, the simulator). */
export const noEksTokens: EksTokenProvider = {
  token: async (clusterName) => {
    throw new EksTokenError(
      `cluster "${clusterName}" uses an EKS exec kubeconfig, but this process was given no EKS token source`,
    );
  },
  invalidate: () => {},
};
