// A real OpenID provider (the npm package `oidc-provider`, OpenID-certified) on loopback,
// for the interop check: client credentials with a `resource` indicator (RFC 8707) issue
// JWT access tokens (RFC 9068) signed RS256 or ES256.
//
// Usage: node provider.mjs --port 4000 --alg RS256 --resource http://127.0.0.1:8765/mcp
//
// Clients: "7", "8" and "9" (secret "secret-<id>"): service accounts acting for the ERP
// users 7, 8 and 9, so a token's `sub` is the ERP user. Resources: the given MCP URL and
// http://127.0.0.1:1/other-mcp (another server, to show the audience check).
// POST /__rotate (loopback only) rotates the signing key: a new key signs, the old one
// stays published. Prints "READY <issuer>" when listening.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    alg: { type: 'string', default: 'RS256' },
    resource: { type: 'string' },
  },
});
const port = Number(values.port);
const { alg, resource } = values;
if (!port || !resource || !['RS256', 'ES256'].includes(alg)) {
  console.error('usage: node provider.mjs --port N --alg RS256|ES256 --resource URL');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
export const OTHER_RESOURCE = 'http://127.0.0.1:1/other-mcp';
const SCOPES = 'purchasing:read purchasing:draft inventory:read';

function newKey() {
  const { privateKey } = alg === 'RS256'
    ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
    : crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: `${alg.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}`, alg, use: 'sig' };
}

function build(keys) {
  const provider = new Provider(issuer, {
    clients: ['7', '8', '9'].map((id) => ({
      client_id: id,
      client_secret: `secret-${id}`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
      id_token_signed_response_alg: alg,
    })),
    scopes: SCOPES.split(' '),
    jwks: { keys },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource && indicator !== OTHER_RESOURCE) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: SCOPES,
            audience: indicator,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg } },
          };
        },
      },
    },
  });
  return provider.callback();
}

let keys = [newKey()];
let handler = build(keys);

const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/__rotate') {
    keys = [newKey(), ...keys]; // the new key signs; the old one stays published
    handler = build(keys);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kid: keys[0].kid, published: keys.map((k) => k.kid) }));
    return;
  }
  handler(req, res);
});
server.listen(port, '127.0.0.1', () => console.log(`READY ${issuer}`));
