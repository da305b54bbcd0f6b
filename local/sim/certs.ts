/**
 * A per-simulator certificate authority and one serving certificate (EC P-256), so clients keep TLS
 * verification on: the kubeconfig carries the CA, the servers present a certificate for 127.0.0.1 and
 * localhost. Certificates use the wall clock (TLS checks real time), not the simulated clock.
 */
// @peculiar/x509 resolves its providers through tsyringe, which needs this polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface SimCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** A client certificate signed by the CA: the apiserver authenticates it as user CN, groups O. */
  issueClient(user: string, groups: string[]): Promise<{ certPem: string; keyPem: string }>;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END PRIVATE KEY-----\n`;
}

export async function createCertificates(hosts: string[] = []): Promise<SimCertificates> {
  const now = Date.now();
  const notBefore = new Date(now - 60 * 60 * 1000);
  const notAfter = new Date(now + 365 * 24 * 60 * 60 * 1000);
  const caKeys = (await webcrypto.subtle.generateKey(EC, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: 'CN=fleetscope-sim-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const names: { type: 'ip' | 'dns'; value: string }[] = [
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: '::1' },
    { type: 'dns', value: 'localhost' },
  ];
  for (const h of hosts) {
    if (!names.some((n) => n.value === h)) names.push({ type: isIP(h) ? 'ip' : 'dns', value: h });
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    subject: 'CN=kube-apiserver',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const issueClient = async (user: string, groups: string[]) => {
    const k = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const name = new x509.Name([{ CN: [user] }, ...groups.map((g) => ({ O: [g] }))]);
    const client = await x509.X509CertificateGenerator.create({
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
        .toString('hex')
        .replace(/^[89a-f]/, '1'),
      subject: name,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: k.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      ],
    });
    return { certPem: client.toString('pem'), keyPem: await pkcs8Pem(k.privateKey) };
  };
  return {
    caPem: ca.toString('pem'),
    certPem: cert.toString('pem'),
    keyPem: await pkcs8Pem(keys.privateKey),
    issueClient,
  };
}
