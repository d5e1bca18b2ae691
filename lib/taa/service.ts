import { createHash } from 'node:crypto';
import { BadRequestError, ConflictError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore, WriteOp } from '../store/port';

/** The operator's publication agreement, from deployment configuration (no ledger here). */
export interface TaaConfig {
  readonly text: string;
  readonly version: string;
  readonly aml: Readonly<Record<string, string>>;
  readonly amlVersion: string;
}

export interface TaaAcceptance {
  readonly mechanism: string;
  /** Seconds since the epoch, rounded down to the day as Indy requires (less precise, less linkable). */
  readonly time: number;
  readonly version: string;
  readonly digest: string;
}

/** Indy's TAA digest: SHA-256 (hex) over version followed by text. */
export function taaDigest(version: string, text: string): string {
  return createHash('sha256').update(`${version}${text}`, 'utf8').digest('hex');
}

/**
 * The Transaction Author Agreement as this service's publication agreement: a wallet must accept the
 * current version, by one of the configured mechanisms, before it publishes a DID.
 */
export class TaaService {
  constructor(
    private readonly store: ItemStore,
    private readonly config: TaaConfig | undefined,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get required(): boolean {
    return this.config !== undefined;
  }

  private current() {
    const c = this.config;
    return c ? { text: c.text, version: c.version, digest: taaDigest(c.version, c.text) } : null;
  }

  async acceptance(scope: TenantScope): Promise<TaaAcceptance | null> {
    const item = await this.store.get(keys.taaAcceptance(scope));
    return item ? { mechanism: item.mechanism as string, time: item.time as number, version: item.version as string, digest: item.digest as string } : null;
  }

  async fetch(scope: TenantScope) {
    const taa = this.current();
    return {
      taa: {
        taa_required: this.required,
        taa_record: taa,
        aml_record: this.config ? { version: this.config.amlVersion, aml: { ...this.config.aml } } : null,
        taa_accepted: await this.acceptance(scope),
      },
    };
  }

  async accept(scope: TenantScope, input: { mechanism: string; text?: string | undefined; version?: string | undefined }) {
    const taa = this.current();
    if (!taa || !this.config) throw new ConflictError('No agreement is configured for this service; there is nothing to accept', 'taa_not_configured');
    if (!Object.hasOwn(this.config.aml, input.mechanism)) {
      throw new BadRequestError(`mechanism must be one of: ${Object.keys(this.config.aml).join(', ')}`, 'unknown_mechanism', [
        { path: 'mechanism', message: 'not in the acceptance mechanisms list' },
      ]);
    }
    if (input.version !== undefined && input.version !== taa.version) {
      throw new BadRequestError(`The current agreement is version ${taa.version}`, 'taa_mismatch', [{ path: 'version', message: 'not the current version' }]);
    }
    if (input.text !== undefined && input.text !== taa.text) {
      throw new BadRequestError('text is not the current agreement text', 'taa_mismatch', [{ path: 'text', message: 'differs from the current agreement' }]);
    }
    const seconds = Math.floor(this.now().getTime() / 1000);
    const acceptance: TaaAcceptance = { mechanism: input.mechanism, time: seconds - (seconds % 86400), version: taa.version, digest: taa.digest };
    await this.store.write([{ type: 'put', item: { ...keys.taaAcceptance(scope), type: 'taa_acceptance', ...acceptance, accepted_at: this.now().toISOString() } }]);
    return this.fetch(scope);
  }

  /**
   * Throws unless the wallet accepted the current agreement by a mechanism still in the AML (when an
   * agreement is configured). Returns a check for the caller's transaction, so the publication and
   * the acceptance it relies on are read together.
   */
  async requireAccepted(scope: TenantScope): Promise<WriteOp | null> {
    const taa = this.current();
    if (!taa || !this.config) return null;
    const accepted = await this.acceptance(scope);
    if (!accepted) throw new ConflictError('Accept the publication agreement first (POST /api/v1/accept-taa)', 'taa_not_accepted');
    if (accepted.digest !== taa.digest) {
      throw new ConflictError(`The agreement changed (now version ${taa.version}); accept the new version first`, 'taa_not_accepted');
    }
    if (!Object.hasOwn(this.config.aml, accepted.mechanism)) {
      throw new ConflictError(`The acceptance mechanism ${accepted.mechanism} is no longer accepted; accept again`, 'taa_not_accepted');
    }
    return { type: 'check', key: keys.taaAcceptance(scope), condition: { equals: { digest: taa.digest, mechanism: accepted.mechanism } } };
  }
}
