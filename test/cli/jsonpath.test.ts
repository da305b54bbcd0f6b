/** `-o jsonpath=`: kubectl's template language, the part scripts use, over fleetscope's documents. */
import { describe, expect, it } from 'vitest';
import { jsonpath } from '../../cli/jsonpath.js';

const doc = [
  { cluster: { name: 'a' }, nodes: [{ name: 'n1' }, { name: 'n2' }], reachable: true },
  { cluster: { name: 'b' }, nodes: [], reachable: false },
];

describe('jsonpath', () => {
  it('reads fields, indexes and wildcards, several results space-separated', () => {
    expect(jsonpath('{[*].cluster.name}', doc)).toBe('a b');
    expect(jsonpath("{[0]['cluster'].name}", doc)).toBe('a');
    expect(jsonpath('{.[1].reachable}', doc)).toBe('false');
    expect(jsonpath('{..name}', doc)).toBe('a n1 n2 b');
    expect(jsonpath('{[0].nodes}', doc)).toBe('[{"name":"n1"},{"name":"n2"}]');
    expect(jsonpath('{[5].cluster}', doc)).toBe('');
  });

  it('ranges over a list with literals between, as kubectl does', () => {
    expect(jsonpath('{range [*]}{.cluster.name}{"\\t"}{.reachable}{"\\n"}{end}', doc)).toBe(
      'a\ttrue\nb\tfalse\n',
    );
    expect(jsonpath('{range [*]}{range .nodes[*]}{.name},{end}{end}', doc)).toBe('n1,n2,');
    expect(jsonpath('clusters: {[*].cluster.name}', doc)).toBe('clusters: a b');
  });

  it('names what is wrong with a template', () => {
    expect(() => jsonpath('{range [*]}{.x}', doc)).toThrow('{range} without {end}');
    expect(() => jsonpath('{.x}{end}', doc)).toThrow('{end} without {range}');
    expect(() => jsonpath('{.x', doc)).toThrow('is never closed');
    expect(() => jsonpath('{.x y}', doc)).toThrow('cannot read the path ".x y"');
  });
});
