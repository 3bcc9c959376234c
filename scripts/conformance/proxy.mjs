// A loopback HTTP proxy that adds `Authorization: Bearer <token>` to every request and
// passes everything else through unchanged (the Host and Origin headers included, so the
// server judges exactly what the client sent), streaming both ways (SSE).
//
// Usage: node proxy.mjs --listen 9100 --upstream 127.0.0.1:8765 --token-file path
import * as fs from 'node:fs';
import * as http from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    listen: { type: 'string' },
    upstream: { type: 'string' },
    'token-file': { type: 'string' },
  },
});
const [host, port] = values.upstream.split(':');
const token = fs.readFileSync(values['token-file'], 'utf8').trim();

http
  .createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const upstream = http.request(
      { host, port: Number(port), method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(upstream);
  })
  .listen(Number(values.listen), '127.0.0.1', () => console.log(`READY ${values.listen}`));
