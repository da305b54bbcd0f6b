import { randomUUID } from 'node:crypto';

/** An EventBridge event as fleetscope's bus delivers it to a function, for invoking a handler directly. */
export function busEvent(detailType: string, detail: Record<string, unknown>, at = new Date()) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': detailType,
    source: 'fleetscope',
    account: '000000000000',
    time: at.toISOString(),
    region: 'us-east-1',
    resources: [],
    detail,
  };
}
