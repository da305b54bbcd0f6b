import { describe, expect, it } from 'vitest';
import { redact, redactFields, registerSecret } from '../../shared/k8s/redact.js';

describe('redact', () => {
  it('scrubs bearer tokens and EKS tokens', () => {
    expect(redact('Authorization: Bearer abc.def-ghi_jkl')).not.toContain('abc.def');
    const eks = 'k8s-aws-v1.aHR0cHM6Ly9zdHMudXMtZWFzdC0xLmFtYXpvbmF3cy5jb20v';
    expect(redact(`token is ${eks} here`)).toBe('token is k8s-aws-v1.[REDACTED] here');
  });

  it('scrubs PEM blocks and their base64 form', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEsecret\n-----END RSA PRIVATE KEY-----';
    expect(redact(`key=${pem}`)).not.toContain('MIIEsecret');
    const b64 = Buffer.from(pem).toString('base64');
    expect(redact(`data ${b64} end`)).not.toContain(b64.slice(10, 30));
  });

  it('scrubs kubeconfig and JSON credential fields', () => {
    const yaml = 'users:\n- name: u\n  user:\n    token: sekrit-value-1\n    client-key-data: QUJDREVGRw==\n';
    const out = redact(yaml);
    expect(out).not.toContain('sekrit-value-1');
    expect(out).not.toContain('QUJDREVGRw');
    expect(out).toContain('name: u');
    expect(redact('{"token":"abc\\"def","x":1}')).toBe('{"token":[REDACTED],"x":1}');
    expect(redact('password=hunter2hunter2&a=b')).toBe('password=[REDACTED]&a=b');
  });

  it('scrubs AWS keys and presigned URL parts, but leaves hex digests', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    expect(redact(`aws_secret_access_key = ${secret}`)).not.toContain(secret);
    expect(redact(`plain ${secret} plain`)).not.toContain(secret);
    expect(redact('AKIAIOSFODNN7EXAMPLE')).toBe('AKIA[REDACTED]');
    expect(redact('https://sts/?X-Amz-Signature=abcdef&X-Amz-Security-Token=zzz&Action=x')).toBe(
      'https://sts/?X-Amz-Signature=[REDACTED]&X-Amz-Security-Token=[REDACTED]&Action=x',
    );
    const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    expect(redact(`commit ${sha1}`)).toContain(sha1);
  });

  it('scrubs JWTs', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl';
    expect(redact(`sa ${jwt}`)).toBe('sa [REDACTED]');
  });

  it('scrubs registered secrets of any shape, and their base64 forms', () => {
    registerSecret('odd shaped secret %%');
    expect(redact('x odd shaped secret %% y')).toBe('x [REDACTED] y');
    const b64 = Buffer.from('odd shaped secret %%').toString('base64').replace(/=+$/, '');
    expect(redact(`x ${b64} y`)).not.toContain(b64);
  });

  it('leaves ordinary messages readable', () => {
    const m = 'cluster "a": list nodes failed: HTTP 500 InternalError: etcd timeout';
    expect(redact(m)).toBe(m);
  });

  it('redacts log fields deeply, credential keys whatever their value', () => {
    const f = redactFields({ cluster: 'a', nested: { token: 'plain', msg: 'Bearer xyz123' }, n: 3 });
    expect(f).toEqual({ cluster: 'a', nested: { token: '[REDACTED]', msg: 'Bearer [REDACTED]' }, n: 3 });
  });
});
