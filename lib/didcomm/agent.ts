import type { EventPublisher } from '../events/publisher';
import type { ExchangeReader } from './protocols/issue-credential-v2/handlers';
import { createDidPeer4, resolveAttachedDidDoc, resolveDidPeer, type ResolvedPeer } from './did-peer';
import type { Ed25519KeyPair } from './envelope';
import type { TenantScope } from '../store/keys';
import type { WriteOp } from '../store/port';

/**
 * What the protocol layer needs from the layer below (lib/didcomm/envelope.ts, did-peer.ts and
 * key-vault.ts), named as those modules name it, so that they plug in as they are.
 */
export type { Ed25519KeyPair, ResolvedPeer };

/** lib/didcomm/key-vault.ts's DidcommKeyVault: a new sealed Ed25519 key, and a key pair unsealed in memory. */
export interface AgentKeys {
  createKey(walletId: string): Promise<{ verkey: string }>;
  keyPair(walletId: string, verkey: string): Promise<Ed25519KeyPair | undefined>;
}

/** lib/didcomm/did-peer.ts, injected so that tests can count or refuse resolutions. */
export interface PeerDids {
  createDidPeer4: typeof createDidPeer4;
  resolveDidPeer: typeof resolveDidPeer;
  resolveAttachedDidDoc: typeof resolveAttachedDidDoc;
}

export const PEER_DIDS: PeerDids = { createDidPeer4, resolveDidPeer, resolveAttachedDidDoc };

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
  /** Our basic message record this sends (marked sent or failed by the outbound worker). */
  readonly messageId?: string;
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
  /** Credential exchanges by thread (Issue Credential 2.0); without it the agent takes no credential messages. */
  readonly exchanges?: ExchangeReader;
  /**
   * Why an endpoint a peer names in a message is unacceptable, or null (the outbound URL rule: the
   * webhooks' target URL rule). Checked before anything naming it is stored; without it, the strictest.
   */
  readonly endpointProblem?: ((url: string) => string | null) | undefined;
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
