import type { EventPublisher } from '../events/publisher';
import type { TenantScope } from '../store/keys';
import type { WriteOp } from '../store/port';

/**
 * What the protocol layer needs from the layer below (lib/didcomm/envelope.ts, did-peer.ts and
 * key-vault.ts), named as those modules name it, so that they plug in as they are.
 */
export interface Ed25519KeyPair {
  readonly publicKey: Uint8Array;
  readonly seed: Uint8Array;
}

export interface AgentKeys {
  createKey(walletId: string): Promise<{ verkey: string }>;
  keyPair(walletId: string, verkey: string): Promise<Ed25519KeyPair | undefined>;
}

export interface DidcommService {
  readonly id: string;
  readonly type: 'did-communication' | 'DIDCommMessaging';
  readonly serviceEndpoint: string;
  readonly recipientKeys: readonly string[];
  readonly routingKeys: readonly string[];
}

export interface ResolvedPeer {
  readonly did: string;
  readonly document: Record<string, unknown>;
  readonly verkeys: readonly string[];
  readonly services: readonly DidcommService[];
}

export interface PeerDids {
  createDidPeer4(opts: { verkey: string; serviceEndpoint: string }): { longForm: string; shortForm: string; document: Record<string, unknown> };
  resolveDidPeer(did: string): ResolvedPeer;
  resolveAttachedDidDoc(did: string, doc: unknown): ResolvedPeer;
}

/** Where a message to a peer goes: its endpoint, the verkeys to encrypt to, the mediators' keys (RFC 0046). */
export interface PeerService {
  readonly endpoint: string;
  readonly recipientKeys: readonly string[];
  readonly routingKeys: readonly string[];
}

/** A message to send once the decision is committed: packed (authcrypt from `senderVerkey`) and posted by the outbound worker. */
export interface Outbound {
  readonly connectionId: string;
  readonly to: PeerService;
  readonly senderVerkey: string;
  readonly message: Record<string, unknown>;
}

/**
 * What a protocol handler decided: record changes (with their conditions) and staged events, to be
 * written in one transaction, and the messages to send after it. Handlers write and send nothing.
 */
export interface Decision {
  readonly writes: WriteOp[];
  readonly outbound: Outbound[];
}

export interface AgentContext {
  readonly scope: TenantScope;
  readonly now: Date;
  /** Our DIDComm endpoint: `<base URL>/didcomm/<public_ref>`. */
  readonly endpoint: string;
  readonly keys: AgentKeys;
  readonly dids: PeerDids;
  readonly events: EventPublisher;
}

/** A message that breaks its protocol: answered with a problem report where there is a thread, and logged. */
export class ProtocolViolation extends Error {
  constructor(
    readonly problemCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolViolation';
  }
}
