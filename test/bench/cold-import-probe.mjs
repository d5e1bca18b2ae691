// Run by test/bench/bundles.ts in a fresh Node process, plain JavaScript so nothing but the bundle is
// loaded: `node cold-import-probe.mjs [bundle.mjs]`. Reports one JSON line on fd 3: when the import
// resolved (ms since process start) and what the first and second formatted stack traces with frames in
// the bundle cost. No bundle: Node's own start-up, the baseline.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const bundle = process.argv[2];
const report = (result) => {
  writeSync(3, `${JSON.stringify(result)}\n`);
  process.exit(0);
};

const mod = bundle ? await import(pathToFileURL(bundle).href) : undefined;
const imported = performance.now();
if (!mod) report({ imported });

const trace = () => {
  const error = new Error('probe');
  const t0 = performance.now();
  const stack = error.stack;
  return { ms: performance.now() - t0, stack };
};

// The handler is called with an event and context that throw on the first property read, so the trace
// is taken with the handler's own frames on the stack (that is what makes Node consult the bundle's
// source map), and before the handler could reach any I/O.
const trap = new Proxy(
  {},
  {
    get() {
      const first = trace();
      const second = trace();
      const frame = first.stack
        .split('\n')
        .slice(1)
        .map((l) => l.trim())
        .find((l) => !l.includes(import.meta.url));
      report({ imported, firstTraceMs: first.ms, secondTraceMs: second.ms, frame });
    },
  },
);
setTimeout(() => report({ imported, firstTraceMs: null }), 2000);
await Promise.resolve(mod.handler(trap, trap)).catch(() => {});
report({ imported, firstTraceMs: null });
