/**
 * The layers, as import rules over the sources: the math and the kernel import nothing of ours (the
 * math takes only the kernel's unit types), Kubernetes access and the platform's AWS adapters never
 * import each other, and the list of capabilities sits above the platform, which never imports it.
 */
import { describe, expect, it } from 'vitest';
import { type Import, importGraph } from '../support/imports.js';

const ALL = importGraph(['shared']).filter((i) => !i.pkg);
const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
const from = (dir: string) => ALL.filter((i) => under(i.from, dir));
const show = (is: Import[]) => is.map((i) => `${i.from} -> ${i.to}${i.typeOnly ? ' (type)' : ''}`);

describe('layers', () => {
  it('finds the imports it judges', () => {
    // A scanner that matched nothing would pass every rule below.
    expect(from('shared/recommendation').length).toBeGreaterThan(20);
    expect(from('shared/platform').some((i) => i.to === 'shared/platform/catalogue')).toBe(true);
  });

  it('the kernel imports nothing of ours', () => {
    expect(show(from('shared/kernel').filter((i) => !under(i.to, 'shared/kernel')))).toEqual([]);
  });

  it("the math imports only itself and the kernel's types", () => {
    const outside = from('shared/recommendation').filter(
      (i) => !under(i.to, 'shared/recommendation') && !(under(i.to, 'shared/kernel') && i.typeOnly),
    );
    expect(show(outside)).toEqual([]);
  });

  it('Kubernetes access imports nothing of ours outside itself', () => {
    expect(show(from('shared/k8s').filter((i) => !under(i.to, 'shared/k8s')))).toEqual([]);
  });

  it('the platform (AWS adapters, handler kit, catalogue) imports nothing outside itself', () => {
    expect(show(from('shared/platform').filter((i) => !under(i.to, 'shared/platform')))).toEqual([]);
  });

  it('only what sits above the platform imports the list of capabilities', () => {
    const users = ALL.filter((i) => i.to === 'shared/capabilities' && !i.typeOnly).map((i) => i.from);
    for (const user of users) expect(user).not.toMatch(/^shared\/(platform|k8s|kernel|recommendation)\//);
  });
});
