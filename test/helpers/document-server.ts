import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { JWK } from 'jose';
import { didJwk } from '../../lib/dids/methods';
import type { PublicJwk } from '../../lib/keys/port';
import type { IssuerSigner } from '../../lib/keys/signer';

/** What a path serves: a body with status and headers, optionally late, or never (hang). */
export interface Route {
  readonly body?: string | Buffer;
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly delayMs?: number;
  readonly hang?: boolean;
  /** Status line and the first bytes, then nothing more. */
  readonly trickle?: boolean;
  /** Sent in chunks without a content-length. */
  readonly chunked?: boolean;
}

/** A loopback HTTP server (127.0.0.1) serving documents per path and counting what it received. */
export interface DocumentServer {
  readonly origin: string;
  readonly port: number;
  serve(path: string, route: Route): void;
  hits(path: string): number;
  readonly requests: { path: string; headers: IncomingHttpHeaders }[];
  /** Paths of requests the client gave up on (closed the connection) before they were answered. */
  readonly abandoned: string[];
  close(): Promise<void>;
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const routes = new Map<string, Route>();
  const requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  const abandoned: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers });
    res.on('close', () => {
      if (!res.headersSent) abandoned.push(path);
    });
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404).end('not found');
      return;
    }
    if (route.hang) return;
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(route.status ?? 200, route.headers ?? {});
      const body = Buffer.from(route.body ?? '');
      if (route.trickle) return void res.write(body);
      if (!route.chunked) return void res.end(body);
      for (let i = 0; i < body.length; i += 64) res.write(body.subarray(i, i + 64));
      res.end();
    };
    if (route.delayMs) setTimeout(send, route.delayMs);
    else send();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    abandoned,
    serve: (path, route) => void routes.set(path, route),
    hits: (path) => requests.filter((r) => r.path === path).length,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A real Ed25519 issuer key: its public JWK, did:jwk and a signer the publication code accepts. */
export interface TestIssuer {
  readonly publicJwk: JWK;
  readonly privateKey: KeyObject;
  readonly did: string;
  signer(kid?: string): IssuerSigner;
}

export function ed25519Issuer(): TestIssuer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  const did = didJwk(publicJwk as unknown as PublicJwk);
  return {
    publicJwk,
    privateKey,
    did,
    signer: (kid = `${did}#0`) => ({ alg: 'EdDSA', kid, sign: async (data) => sign(null, data, privateKey) }),
  };
}
