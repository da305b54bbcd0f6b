/** Resize windows: their syntax, its errors, and whether one is open at a time of the cycle's clock. */
import { describe, expect, it } from 'vitest';
import { guardSpecOf } from '../../../shared/nodescope/guards/settings.js';
import { nextOpening, parseResizeWindows, windowOpen } from '../../../shared/nodescope/guards/window.js';

// Monday 2026-11-02.
const at = (day: number, hh: number, mm = 0) => Date.UTC(2026, 10, 2 + day, hh, mm);

describe('a resize window', () => {
  it('is open on its days between its times, in UTC by default', () => {
    const w = parseResizeWindows('Mon-Fri 09:00-17:00 UTC');
    expect(windowOpen(w, at(0, 9))).toBe(true);
    expect(windowOpen(w, at(0, 16, 59))).toBe(true);
    expect(windowOpen(w, at(0, 17))).toBe(false);
    expect(windowOpen(w, at(0, 8, 59))).toBe(false);
    expect(windowOpen(w, at(5, 12))).toBe(false); // Saturday
    expect(windowOpen(parseResizeWindows('09:00-17:00'), at(6, 12))).toBe(true); // every day
  });

  it('runs past midnight into the next day, and across the week’s end', () => {
    const w = parseResizeWindows('Fri 22:00-02:00');
    expect(windowOpen(w, at(4, 23))).toBe(true);
    expect(windowOpen(w, at(5, 1, 59))).toBe(true); // Saturday morning
    expect(windowOpen(w, at(5, 2))).toBe(false);
    expect(windowOpen(w, at(0, 1))).toBe(false); // Monday morning
    const weekend = parseResizeWindows('Sat-Sun 00:00-24:00');
    expect(windowOpen(weekend, at(6, 23, 59))).toBe(true);
    expect(windowOpen(weekend, at(7, 0))).toBe(false);
  });

  it('takes several windows, fixed offsets and IANA zones with their DST', () => {
    const w = parseResizeWindows('Mon,Wed 01:00-02:00 UTC+02:00; Sun 10:00-11:00 Europe/Berlin');
    expect(windowOpen(w, at(0, 23, 30) - 24 * 3_600_000)).toBe(true); // Mon 01:30 at UTC+2 is Sun 23:30 UTC
    expect(windowOpen(w, at(1, 0))).toBe(false); // Tuesday 02:00 at UTC+2
    expect(windowOpen(w, at(6, 9, 30))).toBe(true); // Sunday 10:30 in Berlin (CET, UTC+1)
    const summer = Date.UTC(2026, 6, 5, 8, 30); // Sunday 10:30 CEST
    expect(windowOpen(w, summer)).toBe(true);
  });

  it('says when it opens next', () => {
    const w = parseResizeWindows('Mon-Fri 09:00-17:00 UTC');
    expect(nextOpening(w, at(0, 17, 30))).toBe(at(1, 9));
    expect(nextOpening(w, at(4, 18))).toBe(at(7, 9));
  });

  it('refuses what does not parse, naming the part', () => {
    const bad = (v: string) => () => parseResizeWindows(v);
    expect(bad('Mon-Fri')).toThrow('"Mon-Fri": no time range HH:MM-HH:MM');
    expect(bad('Mon-Fro 09:00-17:00')).toThrow('"Mon-Fro 09:00-17:00": "Fro" is not a day');
    expect(bad('Mon 9-17')).toThrow('"Mon 9-17": "9-17" is not a time range HH:MM-HH:MM');
    expect(bad('Mon 09:00-25:00')).toThrow('25:00 is not a time of day');
    expect(bad('Mon 09:00-09:00')).toThrow('the window is empty');
    expect(bad('Mon 09:00-17:00 Mars/Olympus')).toThrow('"Mars/Olympus" is not a time zone');
    expect(bad(' ; ')).toThrow('no window given');
    expect(guardSpecOf({ 'fleetscope.io/resize-window': 'weekdays' }).problems).toEqual([
      'annotation fleetscope.io/resize-window: "weekdays": no time range HH:MM-HH:MM',
    ]);
  });
});
