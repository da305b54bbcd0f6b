import { describe, expect, it } from 'vitest';
import { kubeconfigRefProblem, parseKubeconfigRef } from '../../shared/k8s/kubeconfig-ref.js';

const P = 'fleetscope/clusters/';

describe('KubeconfigRef validation', () => {
  it('accepts secrets under the prefix, by name or ARN, and files', () => {
    expect(kubeconfigRefProblem({ kind: 'secret', secretId: 'fleetscope/clusters/prod' }, P)).toBeNull();
    expect(
      kubeconfigRefProblem(
        {
          kind: 'secret',
          secretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fleetscope/clusters/prod-AbCdEf',
        },
        P,
      ),
    ).toBeNull();
    expect(parseKubeconfigRef({ kind: 'file', path: '/tmp/k', context: 'c', extra: 1 }, P)).toEqual({
      kind: 'file',
      path: '/tmp/k',
      context: 'c',
    });
  });

  it('names what is wrong', () => {
    expect(kubeconfigRefProblem({ kind: 'secret', secretId: 'other/prod' }, P)).toContain(
      'not under the configured prefix "fleetscope/clusters/"',
    );
    expect(
      kubeconfigRefProblem(
        { kind: 'secret', secretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:x-AbCdEf' },
        P,
      ),
    ).toContain('secret "x-AbCdEf" is not under');
    expect(kubeconfigRefProblem({ kind: 'secret', secretId: 'fleetscope/clusters/a b' }, P)).toContain(
      'characters',
    );
    expect(kubeconfigRefProblem({ kind: 'file', path: '' }, P)).toContain('non-empty "path"');
    expect(kubeconfigRefProblem({ kind: 'url', url: 'x' }, P)).toContain('must be "secret" or "file"');
    expect(kubeconfigRefProblem({ kind: 'file', path: '/x', context: '' }, P)).toContain('context');
    expect(() => parseKubeconfigRef(null, P)).toThrow('must be an object');
  });
});
