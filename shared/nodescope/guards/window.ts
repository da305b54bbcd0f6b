/**
 * Resize windows: when resizes may be sent, as a VPA annotation says (`Mon-Fri 09:00-17:00 UTC`).
 * Outside every window nothing is sent; recommendations and the VPA's status go on. Judged on the
 * cycle's clock (the cluster's time as the cycle read it), never the process's own.
 *
 *   windows   one or more, separated by `;`
 *   window    [DAYS] HH:MM-HH:MM [ZONE]
 *   DAYS      `Mon-Fri`, `Sat,Sun`, `Mon,Wed-Fri`, `*` (default: every day); Mon Tue Wed Thu Fri Sat Sun
 *   HH:MM     00:00 to 24:00; an end before the start runs past midnight (`Fri 22:00-02:00` ends Sat 02:00)
 *   ZONE      `UTC` (default), `UTC+02:00`, `UTC-5`, or an IANA name (`Europe/Berlin`, with its DST)
 */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const DAY = 24 * 60;

export interface ResizeWindow {
  /** As written, for messages. */
  text: string;
  /** Open on these local weekdays (0 = Sunday) from `start`; a window past midnight ends the next day. */
  days: readonly boolean[];
  /** Minutes of the local day. */
  start: number;
  end: number;
  zone: { offsetMinutes: number } | { iana: string };
}

/** A window annotation that does not parse: the message names what is wrong. */
export class WindowSyntaxError extends Error {
  override name = 'WindowSyntaxError';
}

/** Every window of the annotation's value; throws WindowSyntaxError naming the part that is wrong. */
export function parseResizeWindows(value: string): ResizeWindow[] {
  const parts = value.split(';').map((p) => p.trim());
  if (parts.every((p) => p === ''))
    throw new WindowSyntaxError('no window given (e.g. "Mon-Fri 09:00-17:00 UTC")');
  return parts.filter((p) => p !== '').map(parseWindow);
}

function parseWindow(text: string): ResizeWindow {
  const words = text.split(/\s+/);
  const timeAt = words.findIndex((w) => /^\d/.test(w));
  if (timeAt < 0) throw new WindowSyntaxError(`"${text}": no time range HH:MM-HH:MM`);
  if (timeAt > 1) throw new WindowSyntaxError(`"${text}": days go in one word, such as Mon-Fri or Sat,Sun`);
  if (words.length > timeAt + 2) throw new WindowSyntaxError(`"${text}": more than DAYS HH:MM-HH:MM ZONE`);
  const days = timeAt === 1 ? parseDays(text, words[0] as string) : DAYS.map(() => true);
  const [start, end] = parseTimes(text, words[timeAt] as string);
  const zone = parseZone(text, words[timeAt + 1] ?? 'UTC');
  return { text, days, start, end, zone };
}

function dayIndex(text: string, d: string): number {
  const i = DAYS.findIndex((x) => x.toLowerCase() === d.toLowerCase());
  if (i < 0)
    throw new WindowSyntaxError(`"${text}": "${d}" is not a day (use ${DAYS.slice(1).join(' ')} Sun)`);
  return i;
}

function parseDays(text: string, spec: string): boolean[] {
  const days = DAYS.map(() => false);
  if (spec === '*') return days.map(() => true);
  for (const item of spec.split(',')) {
    const [from, to, more] = item.split('-');
    if (more !== undefined || !from)
      throw new WindowSyntaxError(`"${text}": "${item}" is not a day or a range of days`);
    const a = dayIndex(text, from);
    const b = to === undefined ? a : dayIndex(text, to);
    // Mon-Fri, or across the week's end: Fri-Mon.
    for (let i = a; ; i = (i + 1) % 7) {
      days[i] = true;
      if (i === b) break;
    }
  }
  return days;
}

function parseTimes(text: string, spec: string): [number, number] {
  const m = /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(spec);
  if (!m) throw new WindowSyntaxError(`"${text}": "${spec}" is not a time range HH:MM-HH:MM`);
  const minutes = (h: string, mm: string) => {
    const v = Number(h) * 60 + Number(mm);
    if (Number(mm) > 59 || v > DAY) throw new WindowSyntaxError(`"${text}": ${h}:${mm} is not a time of day`);
    return v;
  };
  const start = minutes(m[1] as string, m[2] as string);
  const end = minutes(m[3] as string, m[4] as string);
  if (start === end)
    throw new WindowSyntaxError(`"${text}": the window is empty (for a whole day: 00:00-24:00)`);
  if (start === DAY) throw new WindowSyntaxError(`"${text}": a window cannot start at 24:00`);
  return [start, end];
}

function parseZone(text: string, spec: string): ResizeWindow['zone'] {
  const fixed = /^UTC(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/i.exec(spec);
  if (fixed) {
    const h = Number(fixed[2] ?? 0);
    const m = Number(fixed[3] ?? 0);
    if (h > 14 || m > 59) throw new WindowSyntaxError(`"${text}": "${spec}" is not a UTC offset`);
    return { offsetMinutes: (fixed[1] === '-' ? -1 : 1) * (h * 60 + m) };
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: spec });
  } catch {
    throw new WindowSyntaxError(
      `"${text}": "${spec}" is not a time zone (UTC, UTC+02:00, or an IANA name such as Europe/Berlin)`,
    );
  }
  return { iana: spec };
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** The local weekday and minute of the day at `t` in the window's zone. */
function localTime(zone: ResizeWindow['zone'], t: number): { day: number; minute: number } {
  if ('offsetMinutes' in zone) {
    const d = new Date(t + zone.offsetMinutes * 60_000);
    return { day: d.getUTCDay(), minute: d.getUTCHours() * 60 + d.getUTCMinutes() };
  }
  let f = zoneFormats.get(zone.iana);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone.iana,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    zoneFormats.set(zone.iana, f);
  }
  const parts = Object.fromEntries(f.formatToParts(t).map((p) => [p.type, p.value]));
  const day = DAYS.indexOf(parts.weekday as (typeof DAYS)[number]);
  return { day, minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

function openIn(w: ResizeWindow, t: number): boolean {
  const { day, minute } = localTime(w.zone, t);
  if (w.start < w.end) return Boolean(w.days[day]) && minute >= w.start && minute < w.end;
  // Past midnight: the evening of a listed day, or the morning after one.
  return (Boolean(w.days[day]) && minute >= w.start) || (Boolean(w.days[(day + 6) % 7]) && minute < w.end);
}

/** Whether any window is open at `t` (ms since the epoch, the cycle's clock). */
export function windowOpen(windows: readonly ResizeWindow[], t: number): boolean {
  return windows.some((w) => openIn(w, t));
}

/** When a window next opens after `t` (to the minute), within 8 days; undefined if none does. */
export function nextOpening(windows: readonly ResizeWindow[], t: number): number | undefined {
  const start = Math.floor(t / 60_000) * 60_000 + 60_000;
  for (let m = 0; m <= 8 * DAY; m++) {
    const at = start + m * 60_000;
    if (windowOpen(windows, at)) return at;
  }
  return undefined;
}
