import { parseArgs } from 'node:util';
import { credentialView, type CredentialView } from './credentials';
import { EXIT, messageOf, WalletError } from './errors';
import { present, type PresentResult } from './present';
import { redeem, type RedeemResult } from './redeem';
import { WalletStore } from './store';
import type { WalletContext } from './context';

export const USAGE = `Usage: npm run wallet -- <command> [options]

Commands:
  redeem '<offer>' [--pin <code>] [--no-dpop]
      Take a credential offer (openid-credential-offer://…, an offer URL, or the offer JSON)
      through the pre-authorized code flow and keep the credential.
  present '<request URI>' [--credential <id>]…
      Answer an OpenID4VP request (openid://…?request_uri=…) with held credentials, disclosing
      only what it asks for, and print the verifier's answer.
  list
      The credentials the wallet holds.
  show <id>
      One credential: issuer, format, decoded claims, status reference.

Options:
  --dir <path>   wallet folder (default: $WALLET_DIR, else .local-data/wallet)
  --json         print one JSON object on stdout (progress goes to stderr)
  -h, --help     this text

Exit codes: 0 done, 1 failed, 2 bad usage, 3 the verifier refused the presentation.`;

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The folder when --dir is not given (main.ts reads WALLET_DIR). */
  readonly defaultDir: string;
}

export interface CredentialSummary {
  readonly id: string;
  readonly format: string;
  readonly issuer: string;
  readonly vct: string | null;
  readonly types: string[] | null;
  readonly received_at: string;
}

const indent = (text: string, by = '    ') =>
  text
    .split('\n')
    .map((l) => by + l)
    .join('\n');

/** The status reference as issued: an IETF Token Status List entry, or W3C credentialStatus entries. */
function describeStatus(status: unknown): string {
  if (!status) return 'none (not revocable)';
  const list = (status as { status_list?: { idx?: unknown; uri?: unknown } }).status_list;
  if (list) return `entry ${String(list.idx)} of the token status list ${String(list.uri)}`;
  const entries = (Array.isArray(status) ? status : [status]) as { statusPurpose?: unknown; statusListIndex?: unknown; statusListCredential?: unknown }[];
  if (entries.every((e) => e.statusListCredential)) return entries.map((e) => `${String(e.statusPurpose)} entry ${String(e.statusListIndex)} of ${String(e.statusListCredential)}`).join('; ');
  return JSON.stringify(status);
}

/** A credential for people: what it is, who issued it, its claims (disclosable ones marked). */
export function describeCredential(v: CredentialView): string {
  const lines = [
    `  id          ${v.id}`,
    `  format      ${v.format}`,
    `  issuer      ${v.issuer}`,
    ...(v.vct ? [`  vct         ${v.vct}`] : []),
    ...(v.types ? [`  types       ${v.types.join(', ')}`] : []),
    `  issued      ${v.issued_at ?? '-'}   expires ${v.expires_at ?? '-'}`,
    `  holder key  ${v.holder_binding.method}${v.holder_binding.did_url ? ` ${v.holder_binding.did_url}` : ` (thumbprint ${v.holder_binding.key})`}`,
    `  status      ${describeStatus(v.status)}`,
    `  claims`,
    indent(JSON.stringify(v.claims, null, 2)),
    `  selectively disclosable: ${v.disclosable.length ? v.disclosable.join(', ') : 'none'}`,
  ];
  return lines.join('\n');
}

function describeRedeem(r: RedeemResult): string {
  return [`Received ${r.credentials.length} credential(s) from ${r.credential_issuer}:`, ...r.credentials.map((c) => `\n${describeCredential(c)}`)].join('\n');
}

function describePresent(r: PresentResult): string {
  const lines = [`Presented to ${r.client_id}:`];
  for (const p of r.presented) lines.push(`  ${p.query_id}: ${p.credential_id} (${p.format}), disclosed ${p.disclosed.length ? p.disclosed.join(', ') : 'no selectively disclosable claim'}`);
  lines.push(`Verifier answered ${r.verifier.status}: ${JSON.stringify(r.verifier.body)}`);
  lines.push(r.accepted ? 'Accepted.' : 'Refused by the verifier.');
  return lines.join('\n');
}

/** Runs one wallet command; returns the exit code. Every failure is reported on stderr (and as JSON with --json). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let json = argv.includes('--json');
  const fail = (code: number, err: WalletError) => {
    io.stderr(`wallet: ${err.message}`);
    if (json) io.stdout(JSON.stringify({ error: err.message, code: err.code }));
    return code;
  };

  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      allowNegative: true,
      options: {
        pin: { type: 'string' },
        dpop: { type: 'boolean', default: true },
        credential: { type: 'string', multiple: true },
        dir: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    return fail(EXIT.usage, new WalletError('usage', `${messageOf(err)}\n\n${USAGE}`));
  }
  const { values, positionals } = parsed;
  json = values.json === true;
  const [command, ...args] = positionals;
  if (values.help || !command) {
    io.stdout(USAGE);
    return values.help ? EXIT.ok : EXIT.usage;
  }

  const store = new WalletStore(values.dir ?? io.defaultDir);
  const ctx: WalletContext = { store, log: (line) => io.stderr(line) };
  const one = (what: string): string => {
    if (args.length !== 1 || !args[0]) throw new WalletError('usage', `${command} takes exactly one argument: ${what} (quote it: it contains & and ?)`);
    return args[0];
  };

  try {
    switch (command) {
      case 'redeem': {
        const result = await redeem(ctx, one("the offer ('openid-credential-offer://…', an offer URL or the offer JSON)"), {
          ...(values.pin !== undefined ? { pin: values.pin } : {}),
          dpop: values.dpop !== false,
        });
        io.stdout(json ? JSON.stringify(result) : describeRedeem(result));
        return EXIT.ok;
      }
      case 'present': {
        const result = await present(ctx, one("the request URI ('openid://?client_id=…&request_uri=…')"), { credentials: values.credential ?? [] });
        io.stdout(json ? JSON.stringify(result) : describePresent(result));
        return result.accepted ? EXIT.ok : EXIT.refused;
      }
      case 'list': {
        if (args.length) throw new WalletError('usage', 'list takes no argument');
        const credentials = await Promise.all((await store.credentials()).map(credentialView));
        const summaries: CredentialSummary[] = credentials.map(({ id, format, issuer, vct, types, received_at }) => ({ id, format, issuer, vct, types, received_at }));
        if (json) io.stdout(JSON.stringify({ credentials: summaries }));
        else if (summaries.length === 0) io.stdout(`No credentials in ${store.dir}.`);
        else io.stdout(summaries.map((s) => `${s.id}  ${s.format.padEnd(11)}  ${s.vct ?? s.types?.filter((t) => t !== 'VerifiableCredential').join(',') ?? ''}  from ${s.issuer}`).join('\n'));
        return EXIT.ok;
      }
      case 'show': {
        const view = await credentialView(await store.credential(one('the credential id (see `list`)')));
        io.stdout(json ? JSON.stringify({ credential: view }) : describeCredential(view));
        return EXIT.ok;
      }
      default:
        throw new WalletError('usage', `unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof WalletError) return fail(err.code === 'usage' ? EXIT.usage : EXIT.failed, err);
    return fail(EXIT.failed, new WalletError('internal_error', `unexpected failure: ${messageOf(err)}`));
  }
}
