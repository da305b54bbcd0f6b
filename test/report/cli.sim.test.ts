/**
 * `fleetscope report` on the local state without a fleet: a mistyped --state-dir is refused (and not
 * created), an empty state gives a report whose every section says why it is empty, and bad flags are
 * refused in one line. The report of a real fleet, in a browser, is browser.sim.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReportModel } from '../../shared/report/model.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { testDir } from '../support/temp.js';

describe('fleetscope report (local state)', () => {
  it('refuses a state directory that does not exist, and does not create it', async () => {
    const missing = join(testDir('fleetscope-report-ro-'), 'no-such-state');
    const r = await runFleetscopeInProcess(['report', '--out', join(missing, 'r.html')], {
      stateDir: missing,
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`state directory ${missing} does not exist`);
    expect(existsSync(missing)).toBe(false);
  });

  it('reports an empty fleet with the reason in every section and no chart', async () => {
    const stateDir = testDir('fleetscope-report-empty-');
    const json = await runFleetscopeInProcess(['report', '-o', 'json'], { stateDir });
    expect(json.code).toBe(0);
    const model = JSON.parse(json.out) as ReportModel;
    for (const s of [model.nodescope, model.requests, model.balloons, model.claims, model.features])
      expect(s.empty).toBe('no cluster is registered (fleetscope cluster register)');
    const out = join(stateDir, 'empty.html');
    const r = await runFleetscopeInProcess(['report', '--out', out], { stateDir });
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe(`wrote ${out}: 0 cluster(s), 0 node-scoped DaemonSet(s), 0 chart(s)`);
    const html = readFileSync(out, 'utf8');
    expect(html.match(/<p class="empty">no cluster is registered/g)).toHaveLength(5);
    expect(html).not.toContain('<canvas');
  });

  it('refuses missing or conflicting outputs in one line', async () => {
    const stateDir = testDir('fleetscope-report-usage-');
    for (const [args, message] of [
      [[], 'report needs --out FILE (or -o json|yaml)'],
      [['--out', 'x.html', '-o', 'json'], '--out and -o json|yaml: choose one'],
      [
        ['-o', 'table'],
        "-o table: the report's human form is the HTML file (--out FILE); -o json|yaml print its figures",
      ],
      [['-o', 'pdf'], '-o pdf: use one of table, wide, json, yaml, name, jsonpath=TEMPLATE'],
      [['extra'], 'unexpected argument "extra"'],
      [['--expires', '60', '--out', 'x'], '--expires goes with --aws'],
    ] as [string[], string][]) {
      const r = await runFleetscopeInProcess(['report', ...args], { stateDir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err.split('\n')[0], args.join(' ')).toBe(`fleetscope report: ${message}`);
    }
  });
});
