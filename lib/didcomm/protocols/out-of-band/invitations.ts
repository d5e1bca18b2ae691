import { randomUUID } from 'node:crypto';
import type { EventPublisher } from '../../../events/publisher';
import { ConflictError, NotFoundError } from '../../../http/errors';
import { prefixPage } from '../../../http/paging';
import { keys, type TenantScope } from '../../../store/keys';
import type { ItemStore, WriteOp } from '../../../store/port';
import type { WalletRefs } from '../../../tenancy/public-refs';
import { didcommEndpoint, didcommKeys, invitationFromItem, MAX_INVITATION_ID, walletLabel, type InvitationRecord } from '../../records';
import { didKeyFromVerkey } from '../../envelope';
import { buildInvitation, invitationUrl, type ServiceDecorator } from './messages';
import { qrPng } from '../../../qr/png';

/** What invitations need of the key vault (lib/didcomm/key-vault.ts: a new sealed Ed25519 key per invitation). */
export interface InvitationKeys {
  createKey(walletId: string): Promise<{ verkey: string }>;
}

export interface InvitationDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly refs: WalletRefs;
  readonly keys: InvitationKeys;
  readonly now?: () => Date;
}

export interface CreateInvitation {
  readonly label?: string | undefined;
  readonly alias?: string | undefined;
  readonly multi_use?: boolean | undefined;
  readonly goal_code?: string | undefined;
  readonly goal?: string | undefined;
  readonly qr?: boolean | undefined;
  /**
   * A connectionless invitation (RFC 0434 without `handshake_protocols`) for one credential exchange:
   * it carries `requests` in `requests~attach`, each with an RFC 0056 `~service` naming the invitation's
   * key and our endpoint, so that the holder answers there without connecting. Single use; the key's
   * lookup names the exchange (lib/didcomm/dispatch.ts hands that key's messages to it alone).
   */
  readonly connectionless?: { readonly exchangeId: string; readonly requests: readonly Record<string, unknown>[] } | undefined;
  /** Writes committed with the invitation (the exchange its offer belongs to), given its id, URL and (connectionless) our `~service`. */
  readonly also?: ((made: { invitation_id: number; invitation_msg_id: string; invitation_url: string; service: ServiceDecorator }) => WriteOp[]) | undefined;
}

/**
 * Our Out-of-Band invitations. Each has its own key (so an incoming DID Exchange request names the
 * invitation it answers by the key it is encrypted to) and a sequential `invitation_id` per wallet.
 */
export class InvitationService {
  private readonly now: () => Date;

  constructor(private readonly deps: InvitationDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(scope: TenantScope, input: CreateInvitation, baseUrl: string): Promise<{ invitation_id: number; invitation_url: string; invitation: Record<string, unknown>; qr_png_base64?: string }> {
    const { store, events } = this.deps;
    const [ref, label] = await Promise.all([this.deps.refs.of(scope), input.label !== undefined ? input.label : walletLabel(this.deps.store, scope)]);
    const { verkey } = await this.deps.keys.createKey(scope.walletId);
    // An atomic ADD: ids are unique without a read; an id lost to a failed write below leaves a gap.
    const id = await store.increment(didcommKeys.invitationCounter(scope), 'last', { below: { last: MAX_INVITATION_ID } });
    const endpoint = didcommEndpoint(baseUrl, ref);
    const at = this.now().toISOString();
    const cl = input.connectionless;
    const built = buildInvitation({ id: randomUUID(), label, recipientKey: didKeyFromVerkey(verkey), endpoint, goalCode: input.goal_code ?? null, goal: input.goal ?? null, handshake: cl === undefined });
    // Base58 keys, as ACA-Py and Credo write ~service; Credo answers to the invitation's service and checks our sender key against it.
    const service: ServiceDecorator = { recipientKeys: [verkey], routingKeys: [], serviceEndpoint: endpoint };
    const invitation = cl
      ? { ...built, 'requests~attach': cl.requests.map((m, i) => ({ '@id': `request-${i}`, 'mime-type': 'application/json', data: { base64: Buffer.from(JSON.stringify({ ...m, '~service': service }), 'utf8').toString('base64') } })) }
      : built;
    const exchange = cl ? { exchange_id: cl.exchangeId } : {};
    const url = invitationUrl(endpoint, invitation);
    const record: InvitationRecord = {
      invitation_id: id,
      invitation_msg_id: invitation['@id'] as string,
      invitation_key: verkey,
      invitation,
      invitation_url: url,
      label,
      alias: input.alias ?? null,
      goal_code: input.goal_code ?? null,
      goal: input.goal ?? null,
      multi_use: cl ? false : (input.multi_use ?? false),
      state: 'await-response',
      created_at: at,
      updated_at: at,
    };
    await store.write([
      { type: 'put', item: { ...didcommKeys.invitation(scope, id), type: 'didcomm_invitation', ...record, ...exchange }, condition: 'not_exists' },
      { type: 'put', item: { ...didcommKeys.recipientKey(scope, verkey), type: 'didcomm_key', kind: 'invitation', invitation_id: id, ...exchange }, condition: 'not_exists' },
      events.stage(scope, 'invitation.created', { ...record }).op,
      ...(input.also?.({ invitation_id: id, invitation_msg_id: record.invitation_msg_id, invitation_url: url, service }) ?? []),
    ]);
    const out = { invitation_id: id, invitation_url: url, invitation };
    return input.qr ? { ...out, qr_png_base64: qrPng(url, { errorCorrectionLevel: 'L' }).toString('base64') } : out;
  }

  async list(scope: TenantScope): Promise<InvitationRecord[]> {
    return (await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.invitationPrefix })).map(invitationFromItem);
  }

  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }): Promise<{ items: InvitationRecord[]; next: string | null }> {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), didcommKeys.invitationPrefix, page);
    return { items: out.items.map(invitationFromItem), next: out.next };
  }

  async get(scope: TenantScope, id: number): Promise<InvitationRecord> {
    const item = await this.deps.store.get(didcommKeys.invitation(scope, id));
    if (!item) throw new NotFoundError('No such invitation', 'invitation_not_found');
    return invitationFromItem(item);
  }

  /**
   * Deletes the invitation and its key's lookup: a request answering it afterwards is dropped. The
   * connections it produced stay.
   */
  async delete(scope: TenantScope, id: number): Promise<InvitationRecord> {
    const record = await this.get(scope, id);
    try {
      await this.deps.store.write([
        { type: 'delete', key: didcommKeys.invitation(scope, id), condition: { equals: { updated_at: record.updated_at } } },
        { type: 'delete', key: didcommKeys.recipientKey(scope, record.invitation_key) },
        this.deps.events.stage(scope, 'invitation.deleted', { ...record }).op,
      ]);
    } catch (err) {
      if ((err as Error).name === 'ConditionFailedError' || (err as Error).name === 'WriteConflictError') throw new ConflictError('The invitation changed meanwhile; try again', 'invitation_changed');
      throw err;
    }
    return record;
  }
}
