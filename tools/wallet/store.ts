import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { monotonicFactory } from 'ulid';
import { WalletError } from './errors';
import type { StoredKey } from './keys';

/** Where the wallet keeps its keys and credentials unless `--dir` or WALLET_DIR says otherwise (git-ignored). */
export const DEFAULT_WALLET_DIR = '.local-data/wallet';

export type CredentialFormat = 'dc+sd-jwt' | 'vc+sd-jwt' | 'jwt_vc_json';
export type Binding = 'jwk' | 'did:key' | 'did:jwk';

/** A received credential as kept in `credentials/<id>.json`. */
export interface StoredCredential {
  /** A ULID: sorts by the time the credential was received. */
  readonly id: string;
  readonly format: CredentialFormat;
  /** The credential as issued (compact SD-JWT with all its disclosures, or the VC-JWT). */
  readonly credential: string;
  /** Its `iss` (the issuer's DID or URL). */
  readonly issuer: string;
  /** The OpenID4VCI credential issuer it came from, and the configuration it was offered as. */
  readonly credential_issuer: string;
  readonly credential_configuration_id: string;
  /** The holder key it is bound to, and how (cnf.jwk, or a DID URL in cnf.kid / sub). */
  readonly key_id: string;
  readonly binding: Binding;
  readonly holder_did_url: string | null;
  readonly received_at: string;
}

const ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The wallet folder: `keys/<thumbprint>.json` (private keys, mode 0600) and `credentials/<ulid>.json`.
 * Plain files, written whole through a rename, so a crash never leaves half a record.
 */
export class WalletStore {
  readonly dir: string;
  private readonly nextId = monotonicFactory();

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  private async ensure(sub: string): Promise<string> {
    const path = join(this.dir, sub);
    await mkdir(path, { recursive: true, mode: 0o700 });
    return path;
  }

  private async writeJson(path: string, value: unknown, mode: number): Promise<void> {
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await chmod(tmp, mode);
    await rename(tmp, path);
  }

  async saveKey(key: StoredKey): Promise<void> {
    await this.writeJson(join(await this.ensure('keys'), `${key.id}.json`), key, 0o600);
  }

  async key(id: string): Promise<StoredKey> {
    try {
      return JSON.parse(await readFile(join(this.dir, 'keys', `${id}.json`), 'utf8')) as StoredKey;
    } catch {
      throw new WalletError('invalid_credential', `holder key ${id} is missing from ${join(this.dir, 'keys')}: the credential cannot be presented without it`);
    }
  }

  newCredentialId(): string {
    return this.nextId();
  }

  async saveCredential(credential: StoredCredential): Promise<void> {
    await this.writeJson(join(await this.ensure('credentials'), `${credential.id}.json`), credential, 0o600);
  }

  /** Every credential, oldest first. */
  async credentials(): Promise<StoredCredential[]> {
    let names: string[];
    try {
      names = await readdir(join(this.dir, 'credentials'));
    } catch {
      return [];
    }
    const ids = names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).filter((id) => ID.test(id)).sort();
    return Promise.all(ids.map((id) => this.credential(id)));
  }

  async credential(id: string): Promise<StoredCredential> {
    const normalised = id.trim().toUpperCase();
    if (!ID.test(normalised)) throw new WalletError('unknown_credential', `no credential ${JSON.stringify(id)} in ${this.dir} (ids are the 26-character ULIDs that \`list\` shows)`);
    try {
      return JSON.parse(await readFile(join(this.dir, 'credentials', `${normalised}.json`), 'utf8')) as StoredCredential;
    } catch {
      throw new WalletError('unknown_credential', `no credential ${normalised} in ${this.dir} (\`list\` shows what the wallet holds)`);
    }
  }
}
