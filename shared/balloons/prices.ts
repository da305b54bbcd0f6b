/**
 * Capacity that doesn't exist, priced: a ballooned node still costs its whole VM, so the part its
 * balloon holds is money a smaller VM (or fewer nodes) would save. The node's price comes from its
 * instance type (the well-known `node.kubernetes.io/instance-type` label): a policy's own prices first
 * (negotiated rates, spot, other regions or clouds), then a shipped table of common EC2 types.
 *
 * The value of a node's balloon = the node's hourly price x the share of its capacity the balloon holds
 * (the mean of its cpu and memory shares: the VM's price pays for both) x 730 hours a month.
 */
import type { Amounts } from './amounts.js';

export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
export const HOURS_PER_MONTH = 730;

/**
 * On-demand Linux list prices in us-east-1, USD per hour (AWS price list, 2025). Approximate by design:
 * a policy's `prices` overrides them for a pool.
 */
export const EC2_HOURLY_USD: Readonly<Record<string, number>> = Object.freeze({
  't3.medium': 0.0416,
  't3.large': 0.0832,
  't3.xlarge': 0.1664,
  't3.2xlarge': 0.3328,
  't3a.medium': 0.0376,
  't3a.large': 0.0752,
  't3a.xlarge': 0.1504,
  't3a.2xlarge': 0.3008,
  'm5.large': 0.096,
  'm5.xlarge': 0.192,
  'm5.2xlarge': 0.384,
  'm5.4xlarge': 0.768,
  'm5.8xlarge': 1.536,
  'm5.12xlarge': 2.304,
  'm5.16xlarge': 3.072,
  'm5.24xlarge': 4.608,
  'm5a.large': 0.086,
  'm5a.xlarge': 0.172,
  'm5a.2xlarge': 0.344,
  'm5a.4xlarge': 0.688,
  'm6i.large': 0.096,
  'm6i.xlarge': 0.192,
  'm6i.2xlarge': 0.384,
  'm6i.4xlarge': 0.768,
  'm6i.8xlarge': 1.536,
  'm6g.medium': 0.0385,
  'm6g.large': 0.077,
  'm6g.xlarge': 0.154,
  'm6g.2xlarge': 0.308,
  'm6g.4xlarge': 0.616,
  'm7i.large': 0.1008,
  'm7i.xlarge': 0.2016,
  'm7i.2xlarge': 0.4032,
  'm7i.4xlarge': 0.8064,
  'm7i.8xlarge': 1.6128,
  'm7g.medium': 0.0408,
  'm7g.large': 0.0816,
  'm7g.xlarge': 0.1632,
  'm7g.2xlarge': 0.3264,
  'm7g.4xlarge': 0.6528,
  'c5.large': 0.085,
  'c5.xlarge': 0.17,
  'c5.2xlarge': 0.34,
  'c5.4xlarge': 0.68,
  'c5.9xlarge': 1.53,
  'c6i.large': 0.085,
  'c6i.xlarge': 0.17,
  'c6i.2xlarge': 0.34,
  'c6i.4xlarge': 0.68,
  'c6i.8xlarge': 1.36,
  'c6g.large': 0.068,
  'c6g.xlarge': 0.136,
  'c6g.2xlarge': 0.272,
  'c6g.4xlarge': 0.544,
  'c7i.large': 0.08925,
  'c7i.xlarge': 0.1785,
  'c7i.2xlarge': 0.357,
  'c7i.4xlarge': 0.714,
  'c7g.large': 0.0725,
  'c7g.xlarge': 0.145,
  'c7g.2xlarge': 0.29,
  'c7g.4xlarge': 0.58,
  'r5.large': 0.126,
  'r5.xlarge': 0.252,
  'r5.2xlarge': 0.504,
  'r5.4xlarge': 1.008,
  'r6i.large': 0.126,
  'r6i.xlarge': 0.252,
  'r6i.2xlarge': 0.504,
  'r6i.4xlarge': 1.008,
  'r6g.large': 0.1008,
  'r6g.xlarge': 0.2016,
  'r6g.2xlarge': 0.4032,
  'r6g.4xlarge': 0.8064,
  'r7i.large': 0.1323,
  'r7i.xlarge': 0.2646,
  'r7i.2xlarge': 0.5292,
  'r7i.4xlarge': 1.0584,
});

export const REGION_LABEL = 'topology.kubernetes.io/region';

/**
 * On-demand Linux prices of a region relative to us-east-1's, for the shipped table (approximate: the
 * ratio of general-purpose m5/m6i list prices, 2025). A region not here is unpriced unless a policy
 * names its types; a policy's prices are taken as they are, wherever the node runs.
 */
export const REGION_PRICE_FACTOR: Readonly<Record<string, number>> = Object.freeze({
  'us-east-1': 1,
  'us-east-2': 1,
  'us-west-2': 1,
  'us-west-1': 1.17,
  'ca-central-1': 1.1,
  'eu-west-1': 1.11,
  'eu-west-2': 1.16,
  'eu-west-3': 1.16,
  'eu-central-1': 1.19,
  'eu-north-1': 1.06,
  'ap-south-1': 1.05,
  'ap-southeast-1': 1.25,
  'ap-southeast-2': 1.25,
  'ap-northeast-1': 1.29,
  'ap-northeast-2': 1.23,
  'sa-east-1': 1.59,
});

/** A node's price as found: its instance type, USD per hour, and where the figure came from. */
export interface NodePrice {
  instanceType: string;
  hourlyUsd: number;
  from: 'policy' | 'table';
  /** The region the table's price was scaled to (absent: us-east-1, or a policy's price). */
  region?: string;
  /** Kubelets sharing the host (KEP-5620's testing story): each is priced its share of the host. */
  sharedBy?: number;
}

/** The node's price: the first override that names its instance type, else the table; none if unknown. */
export function nodePrice(
  labels: Readonly<Record<string, string>>,
  overrides: readonly (Readonly<Record<string, number>> | undefined)[],
): NodePrice | undefined {
  const instanceType = labels[INSTANCE_TYPE_LABEL];
  if (!instanceType) return undefined;
  for (const o of overrides) {
    const p = o?.[instanceType];
    if (p !== undefined) return { instanceType, hourlyUsd: p, from: 'policy' };
  }
  const p = EC2_HOURLY_USD[instanceType];
  const region = labels[REGION_LABEL];
  const factor = region ? REGION_PRICE_FACTOR[region] : 1;
  if (p === undefined || factor === undefined) return undefined;
  return {
    instanceType,
    hourlyUsd: Math.round(p * factor * 10_000) / 10_000,
    from: 'table',
    ...(region && region !== 'us-east-1' ? { region } : {}),
  };
}

/** One host's price is shared by the kubelets on it: each node is priced its 1/N of the host. */
export function sharedHostPrice(
  price: NodePrice | undefined,
  kubelets: number | undefined,
): NodePrice | undefined {
  if (!price || !kubelets || kubelets <= 1) return price;
  return { ...price, hourlyUsd: price.hourlyUsd / kubelets, sharedBy: kubelets };
}

/** The monthly value of what the balloon holds, at the node's price (0 for an empty capacity). */
export function balloonedMonthlyUsd(price: NodePrice, balloon: Amounts, capacity: Amounts): number {
  const share = (r: 'cpu' | 'memory') => (capacity[r] > 0 ? Math.min(1, balloon[r] / capacity[r]) : 0);
  return ((share('cpu') + share('memory')) / 2) * price.hourlyUsd * HOURS_PER_MONTH;
}
