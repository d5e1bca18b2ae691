import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sparticuz, { inflate } from '@sparticuz/chromium';

/** Debian's chromium, when installed. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

export interface HeadlessChromium {
  readonly source: 'system' | '@sparticuz/chromium';
  readonly executablePath: string;
  /** Flags this build needs to start (added to the caller's own). */
  readonly args: readonly string[];
  /** Environment for the browser process. */
  readonly env: Record<string, string>;
}

/**
 * The browser the headless tests drive through playwright-core (which downloads none): Debian's
 * /usr/bin/chromium when present, else the Chromium build the `@sparticuz/chromium` devDependency ships
 * (so `npm ci && npm test` needs no system package). TEST_CHROMIUM=sparticuz forces the latter.
 */
export async function headlessChromium(): Promise<HeadlessChromium> {
  if (process.env.TEST_CHROMIUM !== 'sparticuz' && existsSync(SYSTEM_CHROMIUM)) {
    return { source: 'system', executablePath: SYSTEM_CHROMIUM, args: [], env: {} };
  }
  sparticuz.setGraphicsMode = false; // no WebGL, so no SwiftShader to unpack
  const executablePath = await sparticuz.executablePath(); // unpacks to the temporary folder once
  // The build links NSS and expat, which a machine without a browser lacks; the package carries them
  // (for Amazon Linux 2023, unpacked there only by default): unpack them too and put them first.
  const bin = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', 'bin');
  const libs = join(await inflate(join(bin, 'al2023.tar.br')), 'lib');
  // Its flags minus those that turn web security off: the tests check what the page's CSP allows.
  const weakening = new Set(['--disable-web-security', '--allow-running-insecure-content']);
  return {
    source: '@sparticuz/chromium',
    executablePath,
    args: sparticuz.args.filter((a) => !weakening.has(a)),
    env: { LD_LIBRARY_PATH: [libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
  };
}
