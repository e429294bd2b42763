/**
 * A throwaway certificate authority made with the openssl CLI (node:crypto cannot write X.509), and
 * server certificates signed by it: P-256 keys, valid for 30 days, files in a temporary folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { findTool, fixtureDir, removeFixtureDir, run } from './process.js';

export interface CaOptions {
  /** The CA's common name (what a certificate error names as the issuer). Default `opcli test CA <random>`. */
  name?: string;
  /** Names of the first server certificate: IP addresses and DNS names. Default `['127.0.0.1', 'localhost']`. */
  hosts?: string[];
}

export interface ServerCert {
  /** PEM files of the certificate and its key. */
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
  hosts: string[];
}

export interface TestCa extends ServerCert {
  /** The folder holding every file. */
  dir: string;
  /** The CA's common name. */
  name: string;
  /** The CA certificate (what a client trusts: `ca: caPem`, `NODE_EXTRA_CA_CERTS=caFile`) and its key. */
  caFile: string;
  caKeyFile: string;
  caPem: string;
  /** Signs another server certificate for `hosts` (e.g. a name the client does not use). */
  issue(hosts: string[], label?: string): Promise<ServerCert>;
  /** Removes the folder. */
  cleanup(): void;
}

const CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
`;

function leafExtensions(hosts: string[]): string {
  const names = hosts.map((host) => (isIP(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  return `[leaf_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = ${names}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** Makes a throwaway CA and a server certificate for 127.0.0.1 and localhost signed by it. */
export async function makeCa(options: CaOptions = {}): Promise<TestCa> {
  const openssl = findTool('openssl');
  if (!openssl) throw new Error('openssl is not installed (apt-get install openssl)');
  const name = options.name ?? `opcli test CA ${randomBytes(3).toString('hex')}`;
  const dir = fixtureDir('ca');
  const config = join(dir, 'openssl.cnf');
  writeFileSync(config, CONFIG);
  const caFile = join(dir, 'ca.pem');
  const caKeyFile = join(dir, 'ca.key');
  await run(openssl, [
    'req',
    '-x509',
    '-config',
    config,
    '-extensions',
    'ca_ext',
    ...EC_KEY,
    '-keyout',
    caKeyFile,
    '-out',
    caFile,
    '-days',
    '30',
    '-subj',
    `/CN=${name}`,
  ]);

  const issue = async (hosts: string[], label = `server-${randomBytes(3).toString('hex')}`): Promise<ServerCert> => {
    const extensions = join(dir, `${label}.ext`);
    writeFileSync(extensions, leafExtensions(hosts));
    const keyFile = join(dir, `${label}.key`);
    const csr = join(dir, `${label}.csr`);
    const certFile = join(dir, `${label}.pem`);
    await run(openssl, ['req', '-new', '-config', config, ...EC_KEY, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${hosts[0] ?? 'localhost'}`]);
    const serial = `0x${randomBytes(8).toString('hex')}`;
    await run(openssl, [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caFile,
      '-CAkey',
      caKeyFile,
      '-set_serial',
      serial,
      '-days',
      '30',
      '-extfile',
      extensions,
      '-extensions',
      'leaf_ext',
      '-out',
      certFile,
    ]);
    return { certFile, keyFile, certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8'), hosts };
  };

  const server = await issue(options.hosts ?? ['127.0.0.1', 'localhost'], 'server');
  return { ...server, dir, name, caFile, caKeyFile, caPem: readFileSync(caFile, 'utf8'), issue, cleanup: () => removeFixtureDir(dir) };
}
