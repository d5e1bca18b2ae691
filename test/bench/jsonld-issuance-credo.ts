/**
 * Part of `npm run bench` (`BENCH_ONLY=jsonld-issuance-credo`): JSON-LD issuance end to end through
 * the local runtime and its workers, to Credo 0.6.3 as the holder over DIDComm on loopback (as
 * test/integration/jsonld-issuance-credo.test.ts runs it: Issue Credential 2.0, ld_proof, Credo
 * auto-accepting and verifying with its W3C stack before it stores the credential).
 *
 * Each issuance is `POST /api/v1/credentials/json-ld` with the `contact_id` of one connection and an
 * Ed25519Signature2018 proof (the suite Credo checks with the did:key's 2018 key), timed from the
 * request to: the API's answer; Credo's exchange `done` (its event: the credential verified and
 * stored, the ack sent); our exchange `done` (GET /api/v1/credentials/{id} polled every
 * BENCH_JSONLD_POLL_MS, 25). Rounds alternate a plain request (answered at `offer-sent`) with one
 * carrying `?timeout=15` (answered once the exchange reached `credential-issued` or `done`).
 * BENCH_JSONLD_ISSUANCES (20) of each, after 2 untimed warm-up rounds.
 *
 * Our runtime runs in its own child process (peer/ours.ts), Credo in this one.
 */
import { performance } from 'node:perf_hooks';
import { DidCommCredentialEventTypes, DidCommCredentialState, type DidCommCredentialStateChangedEvent } from '@credo-ts/didcomm';
import { CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { startCredoPeer } from '../helpers/credo-didcomm';
import { median, percentile, loadAverage } from './stats';
import { apiCaller, benchTenants } from './admin';
import { startOurs, stopOurs, until } from './peer/process';

const env = process.env;
const ISSUANCES = Number(env.BENCH_JSONLD_ISSUANCES ?? 20);
const POLL_MS = Number(env.BENCH_JSONLD_POLL_MS ?? 25);
const WAIT_SECONDS = 15;



async function main() {
  console.log('\n### JSON-LD issuance to Credo 0.6.3 over DIDComm, end to end through the local runtime\n');
  console.log(`Load average at start: ${loadAverage()}.\n`);
  const ours = await startOurs();
  const credo = await startCredoPeer({ label: 'bench-credo-holder', jsonLdCredentials: true });
  // When Credo's exchange of each thread reached done (verified, stored, acked).
  const credoDone = new Map<string, number>();
  credo.agent.events.on(DidCommCredentialEventTypes.DidCommCredentialStateChanged, ({ payload }: DidCommCredentialStateChangedEvent) => {
    const r = payload.credentialExchangeRecord;
    if (r.state === DidCommCredentialState.Done && !credoDone.has(r.threadId)) credoDone.set(r.threadId, performance.now());
  });
  try {
    const call = apiCaller(ours.url);
    const { key } = await benchTenants(call, ours.baseApiKey).newWallet('bench-jsonld-credo');
    const did = (await call('POST', '/api/v1/create-did', key, { method: 'key' })).did.did as string;
    const inv = await call('POST', '/api/v1/invitations', key, {});
    const { connectionId } = await credo.receiveInvitationUrl(inv.invitation_url);
    await credo.waitForConnection((c) => c.id === connectionId, 60_000);
    const contactId = (
      await until('our connection active', async () => ((await call('GET', '/api/v1/connections', key)) as any[]).find((c) => c.invitation_id === inv.invitation_id && c.state === 'active'), 100)
    ).connection_id as string;

    const credential = (n: number) => ({
      '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName', memberNumber: 'ex:memberNumber' }],
      type: ['VerifiableCredential', 'Membership'],
      issuer: did,
      issuanceDate: '2026-11-26T00:00:00Z',
      credentialSubject: { memberName: 'Ada Lovelace', memberNumber: n },
    });
    let n = 0;
    const issue = async (wait: boolean) => {
      const t0 = performance.now();
      const [made] = await call('POST', `/api/v1/credentials/json-ld${wait ? `?timeout=${WAIT_SECONDS}` : ''}`, key, { contact_id: contactId, credential: credential(++n), proofType: 'Ed25519Signature2018' });
      const answered = performance.now() - t0;
      const thread = made.thread_id as string;
      await until('Credo done', async () => (credoDone.has(thread) ? true : undefined), POLL_MS);
      await until('our exchange done', async () => ((await call('GET', `/api/v1/credentials/${made.credential_exchange_id}`, key)).state === 'done' ? true : undefined), POLL_MS);
      const oursDone = performance.now() - t0;
      return { answered, answerState: made.state as string, credo: credoDone.get(thread)! - t0, ours: oursDone };
    };
    for (let i = 0; i < 2; i++) {
      await issue(false);
      await issue(true);
    }
    const results = { plain: [] as Awaited<ReturnType<typeof issue>>[], wait: [] as Awaited<ReturnType<typeof issue>>[] };
    for (let i = 0; i < ISSUANCES; i++) {
      const order = i % 2 === 0 ? ([false, true] as const) : ([true, false] as const);
      for (const wait of order) (wait ? results.wait : results.plain).push(await issue(wait));
    }
    const cell = (xs: number[]) => `${median(xs).toFixed(0)} / ${percentile(xs, 99).toFixed(0)}`;
    console.log(`${ISSUANCES} issuances of each kind, rounds alternated, after 2 warm-up rounds; ms p50 / p99 from the POST; our state polled every ${POLL_MS} ms.\n`);
    console.log('| request | API answered | its state then | Credo stored the credential (its exchange done) | our exchange done |');
    console.log('|---|---|---|---|---|');
    for (const [name, rs] of [['`POST /api/v1/credentials/json-ld` (`contact_id`)', results.plain], [`the same with \`?timeout=${WAIT_SECONDS}\``, results.wait]] as const) {
      const states = [...new Set(rs.map((r) => r.answerState))].map((s) => `${s} ×${rs.filter((r) => r.answerState === s).length}`).join(', ');
      console.log(`| ${name} | ${cell(rs.map((r) => r.answered))} | ${states} | ${cell(rs.map((r) => r.credo))} | ${cell(rs.map((r) => r.ours))} |`);
    }
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
