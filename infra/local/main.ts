import { banner } from './banner';
import { startLocalRuntime } from './runtime';

/** `npm start`: the service on this machine, no AWS account needed. */
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.LOCAL_DATA_DIR ?? '.local-data';
/** The mail viewer's port is fixed (bookmarkable), not a free one picked at each start. */
const DEFAULT_MAIL_VIEWER_PORT = 8005;
const mailViewerPort = Number(process.env.MAIL_VIEWER_PORT || DEFAULT_MAIL_VIEWER_PORT);
for (const [name, value] of [['PORT', port], ['MAIL_VIEWER_PORT', mailViewerPort]] as const) {
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    console.error(`${name} must be a TCP port number (0-65535; 0: any free port)`);
    process.exit(2);
  }
}

const rt = await startLocalRuntime({ port, dataDir, mailViewerPort, baseApiKey: process.env.BASE_API_KEY || undefined });

console.log(banner(rt, dataDir));

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping…`);
  await rt.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
