/**
 * Part of `npm run bench` (`BENCH_ONLY=anoncreds-issuance-credo`): AnonCreds issuance end to end
 * through the local runtime and its workers, to Credo 0.6.3 as the holder over DIDComm on loopback (as
 * test/integration/anoncreds-issuance-credo.test.ts runs it: Issue Credential 2.0, Credo auto-accepting,
 * its `anoncreds/*` format the holder written from the specification, test/helpers/credo-anoncreds-format.ts).
 *
 * Each issuance is `POST /api/v1/credentials` with the `contact_id` of one connection, timed from the
 * request to: the API's answer; Credo's exchange `done` (the credential checked and stored, the ack
 * sent); our exchange `done` (GET /api/v1/credentials/{id} polled every BENCH_ANONCREDS_POLL_MS, 25).
 * Four kinds, rotated round by round: a non-revocable and a revocable definition (registry of 64),
 * each plain (answered at `offer-sent`) and with `?timeout=15`. BENCH_ANONCREDS_ISSUANCES (20) of each,
 * after one untimed warm-up round. The holder's own work (the definition fetched, the key correctness
 * proof checked, the link secret blinded; the credential's signature and proof checked) is timed
 * apart, in this process.
 *
 * Our runtime runs in its own child process (peer/ours.ts, definitions from precomputed primes: they
 * are not what is timed here), Credo in this one.
 */
import { performance } from 'node:perf_hooks';
import type { AgentContext } from '@credo-ts/core';
import { DidCommCredentialEventTypes, DidCommCredentialState, type DidCommCredentialFormatAcceptOfferOptions, type DidCommCredentialFormatProcessCredentialOptions, type DidCommCredentialStateChangedEvent } from '@credo-ts/didcomm';
import { didWebAnonCredsResolver, SpecAnonCredsHolderFormatService, type SpecAnonCredsFormat } from '../helpers/credo-anoncreds-format';
import { startCredoPeer } from '../helpers/credo-didcomm';
import { median, percentile, loadAverage } from './stats';
import { apiCaller, benchTenants } from './admin';
import { startOurs, stopOurs, until } from './peer/process';

const env = process.env;
const ISSUANCES = Number(env.BENCH_ANONCREDS_ISSUANCES ?? 20);
const POLL_MS = Number(env.BENCH_ANONCREDS_POLL_MS ?? 25);
const REGISTRY_SIZE = 64;
const WAIT_SECONDS = 15;
const SCHEMA = { schema_name: 'bench degree', schema_version: '1.0', attributes: ['name', 'degree', 'age'] };



/** The holder, its two steps timed per thread (they run on this process's event loop). */
class TimedHolder extends SpecAnonCredsHolderFormatService {
  readonly work = new Map<string, { request: number; check: number }>();
  override async acceptOffer(ctx: AgentContext, o: DidCommCredentialFormatAcceptOfferOptions<SpecAnonCredsFormat>) {
    const t0 = performance.now();
    try {
      return await super.acceptOffer(ctx, o);
    } finally {
      this.work.set(o.credentialExchangeRecord.threadId, { request: performance.now() - t0, check: 0 });
    }
  }
  override async processCredential(ctx: AgentContext, o: DidCommCredentialFormatProcessCredentialOptions) {
    const t0 = performance.now();
    try {
      return await super.processCredential(ctx, o);
    } finally {
      const w = this.work.get(o.credentialExchangeRecord.threadId);
      if (w) w.check = performance.now() - t0;
    }
  }
}

async function main() {
  console.log('\n### AnonCreds issuance to Credo 0.6.3 over DIDComm, end to end through the local runtime\n');
  console.log(`Load average at start: ${loadAverage()}.\n`);
  const ours = await startOurs({ args: ['--precomputed-primes'] });
  const holder = new TimedHolder({ credentialDefinition: didWebAnonCredsResolver(ours.url), linkSecret: 0x5eed5eed5eed5eed5eed5eed5eed5eedn << 100n });
  const credo = await startCredoPeer({ label: 'bench-anoncreds-holder', credentialFormats: [holder] });
  const credoDone = new Map<string, number>();
  credo.agent.events.on(DidCommCredentialEventTypes.DidCommCredentialStateChanged, ({ payload }: DidCommCredentialStateChangedEvent) => {
    const r = payload.credentialExchangeRecord;
    if (r.state === DidCommCredentialState.Done && !credoDone.has(r.threadId)) credoDone.set(r.threadId, performance.now());
  });
  try {
    const call = apiCaller(ours.url);
    const { key } = await benchTenants(call, ours.baseApiKey).walletWithPublicDid('bench-anoncreds-credo', { method: 'web' });
    const definition = async (schemaName: string, revocable: boolean) => {
      const schema = await call('POST', '/api/v1/schemas', key, { ...SCHEMA, schema_name: schemaName });
      const req = await call('POST', '/api/v1/credential-definitions', key, { schema_id: schema.schema_id, tag: 'bench', ...(revocable ? { support_revocation: true, revocation_registry_size: REGISTRY_SIZE } : {}) });
      await until('definition finished', async () => ((await call('GET', `/api/v1/credential-definitions/${req.id}`, key)).state === 'finished' ? true : undefined), 250, 180_000);
      return schema.schema_id as string;
    };
    const schemas = { plain: await definition('bench degree', false), revocable: await definition('bench revocable degree', true) };

    const inv = await call('POST', '/api/v1/invitations', key, {});
    const { connectionId } = await credo.receiveInvitationUrl(inv.invitation_url);
    await credo.waitForConnection((c) => c.id === connectionId, 60_000);
    const contactId = (
      await until('our connection active', async () => ((await call('GET', '/api/v1/connections', key)) as any[]).find((c) => c.invitation_id === inv.invitation_id && c.state === 'active'), 100, 180_000)
    ).connection_id as string;

    let n = 0;
    const issue = async (revocable: boolean, wait: boolean) => {
      const attributes = [
        { name: 'name', value: 'Ada Lovelace' },
        { name: 'degree', value: 'Mathematics' },
        { name: 'age', value: String(20 + (++n % 60)) },
      ];
      const t0 = performance.now();
      const [made] = await call('POST', `/api/v1/credentials${wait ? `?timeout=${WAIT_SECONDS}` : ''}`, key, { schema_id: revocable ? schemas.revocable : schemas.plain, attributes, contact_id: contactId });
      const answered = performance.now() - t0;
      const thread = made.thread_id as string;
      await until('Credo done', async () => (credoDone.has(thread) ? true : undefined), POLL_MS, 180_000);
      await until('our exchange done', async () => ((await call('GET', `/api/v1/credentials/${made.credential_exchange_id}`, key)).state === 'done' ? true : undefined), POLL_MS, 180_000);
      const oursDone = performance.now() - t0;
      if (revocable !== (made.revocation_def_id !== null)) throw new Error(`revocation_def_id ${made.revocation_def_id} on a ${revocable ? 'revocable' : 'non-revocable'} issuance`);
      const work = holder.work.get(thread) ?? { request: NaN, check: NaN };
      return { answered, answerState: made.state as string, credo: credoDone.get(thread)! - t0, ours: oursDone, holderRequest: work.request, holderCheck: work.check };
    };
    type Result = Awaited<ReturnType<typeof issue>>;
    const kinds = [
      { revocable: false, wait: false },
      { revocable: true, wait: false },
      { revocable: false, wait: true },
      { revocable: true, wait: true },
    ];
    for (const k of kinds) await issue(k.revocable, k.wait);
    const results = kinds.map(() => [] as Result[]);
    for (let i = 0; i < ISSUANCES; i++) {
      // Rotated, so that no kind always follows the same one.
      for (let j = 0; j < kinds.length; j++) {
        const at = (i + j) % kinds.length;
        results[at]!.push(await issue(kinds[at]!.revocable, kinds[at]!.wait));
      }
      console.error(`round ${i + 1}/${ISSUANCES} done, load ${loadAverage()}`);
    }
    const cell = (xs: number[]) => `${median(xs).toFixed(0)} / ${percentile(xs, 99).toFixed(0)}`;
    console.log(`${ISSUANCES} issuances of each kind, kinds rotated round by round, after 1 warm-up round; ms p50 / p99 from the POST; our state polled every ${POLL_MS} ms; registry of ${REGISTRY_SIZE}.\n`);
    console.log('| definition | request | API answered | its state then | Credo stored the credential (its exchange done) | our exchange done | holder: request made (definition fetched, proof checked, link secret blinded) | holder: credential checked |');
    console.log('|---|---|---|---|---|---|---|---|');
    kinds.forEach((k, i) => {
      const rs = results[i]!;
      const states = [...new Set(rs.map((r) => r.answerState))].map((s) => `${s} ×${rs.filter((r) => r.answerState === s).length}`).join(', ');
      const name = k.wait ? `\`?timeout=${WAIT_SECONDS}\`` : 'plain';
      console.log(`| ${k.revocable ? `revocable (L = ${REGISTRY_SIZE})` : 'non-revocable'} | ${name} | ${cell(rs.map((r) => r.answered))} | ${states} | ${cell(rs.map((r) => r.credo))} | ${cell(rs.map((r) => r.ours))} | ${cell(rs.map((r) => r.holderRequest))} | ${cell(rs.map((r) => r.holderCheck))} |`);
    });
    console.log(`\nLoad average at end: ${loadAverage()}.`);
  } finally {
    await credo.stop().catch(() => undefined);
    await stopOurs(ours);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

