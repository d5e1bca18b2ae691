import * as z from 'zod';
import type { TenantScope } from '../store/keys';
import type { Paged } from './paging';

/** What a route accepts and returns; the router validates with it and the OpenAPI document shows it. */
export interface OperationContract {
  readonly body?: z.ZodType;
  /** Media types the request body may be sent as (default JSON, or a form on `form` routes): for the OpenAPI document. */
  readonly requestMediaTypes?: readonly string[];
  /** The body may be left out altogether (it then reads as `{}`). */
  readonly bodyOptional?: true;
  /** A list that pages by cursor (lib/http/paging.ts): its query takes `limit` and `cursor`. */
  readonly paged?: true;
  readonly query?: z.ZodType;
  readonly params?: z.ZodType;
  readonly response: z.ZodType;
  /** Media types of a success response that is not JSON (RawRepresentation), for the OpenAPI document. */
  readonly mediaTypes?: readonly string[];
  /** Further media types the success response is negotiated into by Accept (a Representation), each with its body's schema. */
  readonly negotiated?: Readonly<Record<string, z.ZodType>>;
  /** Answers with an ETag, and with 304 Not Modified (no body) when If-None-Match names it. */
  readonly conditional?: true;
  /** Success status (default 200). */
  readonly status?: number;
  /** Error statuses this operation can answer with (for the OpenAPI document). */
  readonly errors: readonly number[];
  /** Statuses answered in a protocol's own body instead of {@link ErrorBodySchema}: that body's schema. */
  readonly errorBodies?: Readonly<Partial<Record<number, z.ZodType>>>;
}

/** The service's error body (errorBody() and the gateway responses): `{error, code, details?}`. */
export const ErrorBodySchema = z
  .object({
    error: z.string().meta({ description: 'Human-readable message' }),
    code: z.string().meta({ description: 'Machine-readable code' }),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional().meta({ description: 'Validation failures' }),
  })
  .meta({ id: 'Error' });

export type OperationContracts = Record<string, OperationContract>;

export type Caller =
  | { readonly kind: 'superadmin'; readonly keyId: string }
  | {
      readonly kind: 'wallet';
      readonly scope: TenantScope;
      readonly keyId: string | null;
      readonly via: 'api_key' | 'token';
      /** Epoch ms after which the credential is refused, even while the gateway's cached decision lives. */
      readonly expiresAt: number | null;
    }
  | { readonly kind: 'anonymous' };

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface OperationInput<C extends OperationContract> {
  readonly body: Out<C['body']>;
  readonly query: Out<C['query']>;
  readonly params: Out<C['params']>;
  readonly caller: Caller;
  /** Public base URL of the API as callers reach it (configured, or from the request's host and stage). */
  readonly baseUrl: string;
  /** The request's Accept header ('' when absent), for the few routes that negotiate a media type. */
  readonly accept: string;
  /**
   * The request as protocols see it (OAuth DPoP `htu`/`htm`, `Authorization`): the method, the absolute
   * URL the caller used (base URL + path, no query) and the headers, names lower-cased.
   */
  readonly request: { readonly method: string; readonly url: string; readonly headers: Readonly<Record<string, string>> };
}

/** A JSON body with its own status and headers (204, `Cache-Control`, `DPoP-Nonce`): protocol endpoints. */
export class JsonReply<T = unknown> {
  constructor(
    readonly body: T | undefined,
    readonly opts: { readonly status?: number; readonly headers?: Readonly<Record<string, string>> } = {},
  ) {}
}

/** A response body with its own media type (content negotiation); plain results are application/json. */
export class Representation<T = unknown> {
  constructor(
    readonly body: T,
    readonly mediaType: string,
  ) {}
}

/**
 * A text body sent as it is rather than JSON-encoded (HTML, scripts, stylesheets), with headers of its
 * own (caching, CSP) over the router's defaults.
 */
export class RawRepresentation extends Representation<string> {
  constructor(
    body: string,
    mediaType: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(body, mediaType);
  }
}

/** Bytes (a tails file): sent base64-encoded with `isBase64Encoded`, which API Gateway decodes (binaryMediaTypes). */
export class BinaryRepresentation extends RawRepresentation {
  constructor(bytes: Uint8Array, mediaType: string, headers: Readonly<Record<string, string>> = {}) {
    super(Buffer.from(bytes).toString('base64'), mediaType, headers);
  }
}

export type OperationImpl<C extends OperationContract> = (input: OperationInput<C>) => Promise<z.input<C['response']> | Representation | JsonReply<z.input<C['response']>> | (z.input<C['response']> extends readonly (infer T)[] ? Paged<T> : never)>;

export type OperationImpls<Cs extends OperationContracts> = { readonly [K in keyof Cs]: OperationImpl<Cs[K]> };

/** The wallet a `wallet` route acts for; the router has already refused every other caller kind there. */
export function walletScope(caller: Caller): TenantScope {
  if (caller.kind !== 'wallet') throw new Error('wallet route reached without a wallet caller');
  return caller.scope;
}
