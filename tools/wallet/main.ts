import { runCli } from './cli';
import { DEFAULT_WALLET_DIR } from './store';

/** `npm run wallet -- <command>`: the one place the wallet reads its environment (WALLET_DIR). */
const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  defaultDir: process.env.WALLET_DIR || DEFAULT_WALLET_DIR,
});
process.exitCode = code;
