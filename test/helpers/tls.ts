import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * A throw-away PKI made with openssl in `dir` (EC P-256, valid 2 days): `ca.crt`/`ca.key`, a server
 * certificate `tls.crt`/`tls.key` for 127.0.0.1 and localhost, and a client certificate
 * `<name>.crt`/`<name>.key` for each of `clients` (CN = name), all signed by the CA.
 */
export async function makeTestPki(dir: string, clients: string[] = []): Promise<void> {
  const ssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir })
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  await ssl(
    'req',
    '-x509',
    ...key,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=tailor-test-ca',
  )
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n')
  for (const [name, cn, ext] of [
    ['tls', 'nats', 'server.ext'],
    ...clients.map((c) => [c, c, 'client.ext']),
  ] as [string, string, string][]) {
    await ssl('req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`)
    await ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      ext,
    )
  }
}
