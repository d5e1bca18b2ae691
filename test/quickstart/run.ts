/**
 * Runs README.md's Quick start, block by block in one bash session, and fails on the first command that
 * fails, so the README and the product cannot drift apart.
 *
 *   npm run quickstart                          starts `npm start` (a fresh data folder, free ports),
 *                                               runs the blocks with the BASE_URL and BASE_API_KEY its
 *                                               banner prints, and stops it (.ci/run does this)
 *   npm run smoke -- --url https://… --key …    the same blocks against a deployed stage, with its URL
 *                                               and base (super-admin) key
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../../infra/local/emulators';
import { startStack, REPO_ROOT, type StartedStack } from './local-stack';
import { quickStartBlocks, quickStartScript } from './readme-blocks';

const { values } = parseArgs({
  options: {
    local: { type: 'boolean', default: false },
    url: { type: 'string' },
    key: { type: 'string' },
    'timeout-seconds': { type: 'string', default: '600' },
  },
});
if (values.local === Boolean(values.url) || Boolean(values.url) !== Boolean(values.key)) {
  console.error('usage: run.ts --local | --url <API base URL> --key <base (super-admin) API key>');
  process.exit(2);
}
const timeoutMs = Number(values['timeout-seconds']) * 1000;

const blocks = quickStartBlocks(await readFile(join(REPO_ROOT, 'README.md'), 'utf8'));
const work = await mkdtemp(join(tmpdir(), 'quickstart-'));
let stack: StartedStack | undefined;
let status = 1;
try {
  let env: Record<string, string>;
  if (values.local) {
    const [port, mailViewerPort] = [await freePort(), await freePort()];
    console.error(`Starting npm start on port ${port} (mail viewer ${mailViewerPort}), data folder ${join(work, 'data')}…`);
    stack = await startStack({
      env: { PORT: String(port), MAIL_VIEWER_PORT: String(mailViewerPort), LOCAL_DATA_DIR: join(work, 'data') },
    });
    if (!stack.baseApiKey) throw new Error('a fresh data folder, yet the banner printed no base key');
    env = { BASE_URL: stack.baseUrl, BASE_API_KEY: stack.baseApiKey };
  } else {
    env = { BASE_URL: values.url!.replace(/\/+$/, ''), BASE_API_KEY: values.key! };
  }
  const script = join(work, 'quickstart.sh');
  await writeFile(script, quickStartScript(blocks));
  console.error(`Running ${blocks.length} blocks of README.md's Quick start against ${env.BASE_URL}`);
  // The wallet's keys and credentials in this run's own folder, not the developer's .local-data/wallet.
  const child = spawn('bash', [script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env, WALLET_DIR: join(work, 'wallet') },
  });
  const timer = setTimeout(() => {
    console.error(`The Quick start did not finish within ${timeoutMs / 1000} s`);
    child.kill('SIGTERM');
  }, timeoutMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  status = code ?? 1;
  if (status !== 0 && stack) console.error(`\nWhat npm start printed:\n${stack.output()}`);
  console.error(status === 0 ? '\nQuick start: every block ran and exited 0.' : `\nQuick start FAILED (exit ${code ?? signal}).`);
} catch (err) {
  console.error(err);
} finally {
  await stack?.stop();
  await rm(work, { recursive: true, force: true });
}
process.exit(status);
