/**
 * The guards a VPA asks for, by annotation: when resizes may be sent, and how far one may go. A value
 * that does not parse holds every resize of the VPA (the safe side) and says why; recommendations and
 * the VPA's status go on.
 */
import { parseCap, type ResizeCaps } from './caps.js';
import { parseResizeWindows, type ResizeWindow } from './window.js';

export const RESIZE_WINDOW_ANNOTATION = 'fleetscope.io/resize-window';
export const MAX_INCREASE_ANNOTATION = 'fleetscope.io/max-increase';
export const MAX_DECREASE_ANNOTATION = 'fleetscope.io/max-decrease';

export interface GuardSpec {
  /** Absent: resizes may be sent at any time. */
  windows?: ResizeWindow[];
  caps: ResizeCaps;
  /** What of the annotations does not parse, each naming the annotation; any holds every resize. */
  problems: string[];
}

export function guardSpecOf(annotations: Readonly<Record<string, string>> | undefined): GuardSpec {
  const problems: string[] = [];
  const spec: GuardSpec = { caps: {}, problems };
  const window = annotations?.[RESIZE_WINDOW_ANNOTATION];
  if (window !== undefined)
    try {
      spec.windows = parseResizeWindows(window);
    } catch (err) {
      problems.push(`annotation ${RESIZE_WINDOW_ANNOTATION}: ${(err as Error).message}`);
    }
  for (const [key, what] of [
    [MAX_INCREASE_ANNOTATION, 'increase'],
    [MAX_DECREASE_ANNOTATION, 'decrease'],
  ] as const) {
    const v = annotations?.[key];
    if (v === undefined) continue;
    try {
      const cap = parseCap(v, what);
      if (cap !== undefined) spec.caps[what === 'increase' ? 'maxIncrease' : 'maxDecrease'] = cap;
    } catch (err) {
      problems.push(`annotation ${key}: ${(err as Error).message}`);
    }
  }
  return spec;
}
