/**
 * Part of `npm run bench` (`BENCH_ONLY=bundles npm run bench`): the Lambda bundles as `cdk synth`
 * builds them. Synthesizes the app with cdk.json's context, reads each function's asset from the cloud
 * assembly, and reports per function: bundle and source-map size, what the bundle is made of (esbuild
 * metafile), the cold import in a fresh Node 22 process with the function's deployed environment, the
 * first stack trace through the bundle (when Node decodes the source map), and what the function
 * bundles but does not use. BENCH_BUNDLE_RUNS (21) cold processes per figure; BENCH_BUNDLE_FUNCTIONS
 * limits the report to the functions it names (comma-separated).
 */
import { build, type Metafile, type Plugin } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createServiceApp, REPO_ROOT } from '../../infra/service-app';
import { BUNDLE_ALIASES, ESM_REQUIRE_BANNER } from '../../infra/constructs/service-function';
import { WORKER_ENTRIES } from '../../infra/stacks/service-functions';
import type { FunctionName } from '../../lib/service/access';
import { resourcesOf, stackTemplates, type StackTemplate } from '../helpers/assembly';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? '21');
/** `BENCH_BUNDLE_FUNCTIONS=didcomm,didcomm-worker`: only these functions (all by default). */
const ONLY = process.env.BENCH_BUNDLE_FUNCTIONS?.split(',').map((s) => s.trim()).filter(Boolean);
const NODE = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const PROBE = join(REPO_ROOT, 'test', 'bench', 'cold-import-probe.mjs');
const STACK = 'CredentialService';
const ACCOUNT = '123456789012';
const REGION = 'eu-central-1';

type Json = any; // CloudFormation template fragments
interface Fn {
  readonly name: string;
  readonly dir: string;
  readonly env: Record<string, string>;
  /** IAM actions the function's role is granted (Allow statements; a Deny grants nothing, and one with NotAction has no Action). */
  readonly actions: ReadonlySet<string>;
  readonly entry: string;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));

/**
 * Plausible values for the CloudFormation tokens of a function's environment (nothing is contacted at
 * import). A nested stack's parameter is the value its parent passes, resolved in the parent.
 */
function resolveToken(v: Json, stack: StackTemplate): string {
  if (typeof v === 'string') return v;
  const resources = stack.template.Resources as Record<string, Json>;
  if (v.Ref !== undefined && stack.template.Parameters?.[v.Ref] !== undefined && stack.parent) {
    return resolveToken(stack.parent.stack.template.Resources[stack.parent.resourceId].Properties.Parameters[v.Ref], stack.parent.stack);
  }
  const typeOf = (id: string) => resources[id]?.Type as string | undefined;
  const physical = (id: string) => `${STACK}-${id}-1A2B3C4D5E6F`.slice(0, 80);
  if (v.Ref !== undefined) {
    const pseudo: Record<string, string> = { 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::Partition': 'aws', 'AWS::StackName': STACK, 'AWS::URLSuffix': 'amazonaws.com' };
    if (pseudo[v.Ref]) return pseudo[v.Ref]!;
    switch (typeOf(v.Ref)) {
      case 'AWS::SQS::Queue':
        return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${physical(v.Ref)}`;
      case 'AWS::KMS::Key':
        return '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
      default:
        return physical(v.Ref);
    }
  }
  if (v['Fn::GetAtt']) {
    const [id, attr] = v['Fn::GetAtt'] as [string, string];
    if (attr !== 'Arn') return `${physical(id)}-${attr}`;
    switch (typeOf(id)) {
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${REGION}:${ACCOUNT}:key/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0`;
      case 'AWS::DynamoDB::Table':
        return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${physical(id)}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${REGION}:${ACCOUNT}:${physical(id)}`;
      default:
        return `arn:aws:${id}:${REGION}:${ACCOUNT}:${physical(id)}`;
    }
  }
  if (v['Fn::Join']) {
    const [sep, parts] = v['Fn::Join'] as [string, Json[]];
    return parts.map((p) => resolveToken(p, stack)).join(sep);
  }
  throw new Error(`no dummy value for ${JSON.stringify(v)}: teach resolveToken`);
}

function synthesize(outdir: string): Fn[] {
  const context = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
  // The metadata `cdk synth` turns on (asset paths, construct paths), and esbuild's metafile per bundle.
  const { app, stack } = createServiceApp({ ...context, 'aws:cdk:enable-path-metadata': true, 'aws:cdk:enable-asset-metadata': true, bundleMetafile: true }, outdir);
  app.synth();
  // The root stack's template and every area's nested one.
  const stacks = stackTemplates(stack, outdir);
  const actionsOfRole = (template: StackTemplate, roleId: string) =>
    new Set(
      Object.values(template.template.Resources as Record<string, Json>)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: Json) => x.Ref === roleId))
        .flatMap((r) => r.Properties.PolicyDocument.Statement.filter((s: Json) => s.Effect === 'Allow').flatMap((s: Json) => [s.Action].flat())),
    );
  const fns: Fn[] = [];
  for (const { stack: template, id, resource: r } of resourcesOf(stacks, 'AWS::Lambda::Function')) {
    const cdkPath = r.Metadata['aws:cdk:path'] as string; // CredentialService[/<Area>]/<name>-function/Fn/Resource
    const name = /([^/]+)-function\/Fn\/Resource$/.exec(cdkPath)?.[1] ?? id;
    const dir = join(outdir, r.Metadata['aws:asset:path']);
    const p = r.Properties;
    const variables = Object.fromEntries(Object.entries<Json>(p.Environment?.Variables ?? {}).map(([k, v]) => [k, resolveToken(v, template)]));
    const functionName = `${STACK}-${id}-AbCdEfGhIjKl`;
    fns.push({
      name,
      dir,
      // Its own role's grants and its tenant role's (the wallet sessions'), in its area's template.
      actions: new Set([...actionsOfRole(template, p.Role['Fn::GetAtt'][0]), ...(p.Environment?.Variables?.TENANT_ROLE_ARN ? actionsOfRole(template, p.Environment.Variables.TENANT_ROLE_ARN['Fn::GetAtt'][0]) : [])]),
      entry: entryOf(name),
      // What Lambda itself sets (docs: "Defined runtime environment variables"), then the function's own.
      env: {
        PATH: '/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin',
        LANG: 'en_US.UTF-8',
        TZ: ':UTC',
        _HANDLER: p.Handler,
        AWS_EXECUTION_ENV: `AWS_Lambda_${p.Runtime}`,
        AWS_REGION: REGION,
        AWS_DEFAULT_REGION: REGION,
        AWS_LAMBDA_FUNCTION_NAME: functionName,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(p.MemorySize ?? 128),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
        AWS_LAMBDA_LOG_STREAM_NAME: '2026/11/23/[$LATEST]0123456789abcdef0123456789abcdef',
        ...(p.LoggingConfig?.LogFormat ? { AWS_LAMBDA_LOG_FORMAT: p.LoggingConfig.LogFormat } : {}),
        AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
        AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEEXAMPLE00',
        AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEXAMPLE',
        LAMBDA_TASK_ROOT: dir,
        LAMBDA_RUNTIME_DIR: '/var/runtime',
        ...variables,
      },
    });
  }
  return fns;
}

/** The function's entry file, as ServiceFunction and the stack name them (for the analysis builds). */
function entryOf(name: string): string {
  const found = [WORKER_ENTRIES[name as FunctionName], join('functions', name, 'handler.ts')].find((c) => c !== undefined && existsSync(join(REPO_ROOT, c)));
  if (!found) throw new Error(`no entry file found for function ${name}`);
  return found;
}

function metafileOf(dir: string): Metafile | undefined {
  const file = join(dir, 'index.meta.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** Bytes in the bundle per input file. */
function inputsOf(meta: Metafile): Map<string, number> {
  const out = Object.entries(meta.outputs).find(([k]) => k.endsWith('index.mjs'))![1];
  return new Map(Object.entries(out.inputs).map(([k, v]) => [k, v.bytesInOutput]));
}

const packageOf = (input: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? `(own) ${input.split('/').slice(0, 2).join('/')}`;

function byPackage(inputs: Map<string, number>): [string, number][] {
  const sums = new Map<string, number>();
  for (const [input, bytes] of inputs) sums.set(packageOf(input), (sums.get(packageOf(input)) ?? 0) + bytes);
  return [...sums].sort((a, b) => b[1] - a[1]);
}

interface Probe {
  imported: number;
  firstTraceMs?: number | null;
  secondTraceMs?: number;
  frame?: string;
}

function probe(bundle: string | undefined, env: Record<string, string>, cwd: string): Probe {
  const r = spawnSync(NODE, [PROBE, ...(bundle ? [bundle] : [])], { cwd, env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'], timeout: 30000 });
  const line = r.output[3]?.toString().trim();
  if (r.status !== 0 || !line) throw new Error(`probe of ${bundle ?? '(no bundle)'} failed (${r.status}): ${r.stderr?.toString()}`);
  return JSON.parse(line) as Probe;
}

/**
 * The shared wiring's adapters, and what a deployed function must be granted (or configured with) to
 * use one. A function without it bundles the adapter for nothing.
 */
const ADAPTERS: { module: string; usedBy: (fn: Fn) => boolean; why: string }[] = [
  { module: 'lib/adapters/kms-secret-deriver.ts', usedBy: (fn) => fn.actions.has('kms:GenerateMac'), why: 'no kms:GenerateMac grant' },
  { module: 'lib/adapters/kms-key-manager.ts', usedBy: (fn) => ['kms:GetPublicKey', 'kms:Sign', 'kms:CreateKey'].some((a) => fn.actions.has(a)), why: 'no issuer-key grant' },
  { module: 'lib/adapters/sqs-job-queue.ts', usedBy: (fn) => fn.actions.has('sqs:SendMessage'), why: 'no sqs:SendMessage grant' },
  { module: 'lib/secrets/local-secret-deriver.ts', usedBy: (fn) => fn.env.KEY_BACKEND === 'local', why: 'KEY_BACKEND=kms' },
  { module: 'lib/keys/local-key-manager.ts', usedBy: (fn) => fn.env.KEY_BACKEND === 'local', why: 'KEY_BACKEND=kms' },
  // Only the worker makes webhook HTTP requests; the relay and the API function only queue jobs.
  { module: 'lib/adapters/node-webhook-transport.ts', usedBy: (fn) => fn.name === 'webhook-delivery' || fn.name === 'didcomm-outbound', why: 'sends no webhook or DIDComm request' },
];
/** SDK clients a function without any action of the service cannot use (deps.ts constructs them). */
const CLIENTS: { module: string; usedBy: (fn: Fn) => boolean; why: string }[] = [
  { module: '@aws-sdk/client-kms', usedBy: (fn) => [...fn.actions].some((a) => a.startsWith('kms:')), why: 'no kms: grant' },
  { module: '@aws-sdk/client-sqs', usedBy: (fn) => [...fn.actions].some((a) => a.startsWith('sqs:')), why: 'no sqs: grant' },
];

/**
 * Rebuilds a function with the construct's esbuild options (checked: the result must equal the
 * synthesized bundle) and, with `unused`, with those adapters replaced by empty classes and the
 * project's own modules declared free of side effects, so that esbuild drops whatever nothing used
 * references. The difference to the real bundle is what the function carries for nothing.
 */
async function analysisBuild(fn: Fn, unused: readonly string[] | undefined): Promise<{ meta: Metafile; bytes: number }> {
  const own = (path: string) => path.startsWith(join(REPO_ROOT, 'lib')) || path.startsWith(join(REPO_ROOT, 'functions', 'shared'));
  const plugin: Plugin = {
    name: 'unused-wiring',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === 'inner') return undefined;
        const r = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: 'inner' });
        return own(r.path) ? { path: r.path, sideEffects: false } : r;
      });
      // An unused SDK client becomes an empty CommonJS module: named imports of it still resolve.
      b.onResolve({ filter: /^@aws-sdk\/client-/ }, (args) => (unused!.includes(args.path) ? { path: args.path, namespace: 'unused-client' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'unused-client' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!unused!.includes(relative(REPO_ROOT, args.path))) return undefined;
        const names = [...readFileSync(args.path, 'utf8').matchAll(/^export (?:abstract )?(?:class|const|function) (\w+)/gm)].map((m) => m[1]);
        return { contents: names.map((n) => `export class ${n} {}`).join('\n'), loader: 'ts' };
      });
    },
  };
  const outdir = mkdtempSync(join(tmpdir(), 'bundle-analysis-'));
  try {
    const r = await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: [fn.entry],
      outfile: join(outdir, 'index.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_BANNER },
      alias: BUNDLE_ALIASES,
      metafile: true,
      logLevel: 'error',
      plugins: unused ? [plugin] : [],
    });
    return { meta: r.metafile, bytes: statSync(join(outdir, 'index.mjs')).size };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

async function main() {
  const outdir = mkdtempSync(join(tmpdir(), 'bundles-bench-'));
  try {
    const fns = synthesize(outdir)
      .filter((fn) => !ONLY || ONLY.includes(fn.name))
      .sort((a, b) => a.name.localeCompare(b.name));
    if (ONLY && fns.length !== ONLY.length) throw new Error(`BENCH_BUNDLE_FUNCTIONS names a function the app does not have: ${ONLY.join(', ')}`);
    const nodeVersion = spawnSync(NODE, ['--version']).stdout.toString().trim();
    console.log(`\n### Lambda bundles\n`);
    console.log(`${fns.length} functions from \`createServiceApp\` (cdk.json context), Node ${nodeVersion} (node_modules/.bin/node), ${RUNS} cold processes per figure.\n`);

    // Cold imports: every function and mode once per round, so drift on the machine hits all alike.
    const modes = { maps: true, plain: false } as const;
    const samples = new Map<string, Probe[]>();
    const add = (key: string, p: Probe) => samples.set(key, [...(samples.get(key) ?? []), p]);
    for (let i = 0; i < RUNS; i++) {
      add('baseline', probe(undefined, { PATH: '/usr/bin:/bin' }, outdir));
      for (const fn of fns) {
        for (const [mode, maps] of Object.entries(modes)) {
          const env = { ...fn.env };
          if (!maps) delete env.NODE_OPTIONS;
          add(`${fn.name}:${mode}`, probe(join(fn.dir, 'index.mjs'), env, fn.dir));
        }
      }
    }
    const stat = (key: string, pick: (p: Probe) => number | null | undefined) => {
      const xs = (samples.get(key) ?? []).map(pick).filter((x): x is number => typeof x === 'number');
      return xs.length ? median(xs) : undefined;
    };

    console.log(`Medians of ${RUNS} runs. *import*: ms from process start until the bundle's import resolved (Node's own start-up is the first row). *first trace*: ms to format the first \`new Error().stack\` with frames in the bundle; *later*: the same trace again.\n`);
    console.log('| function | index.mjs KiB | .map KiB | zod locales KiB | import ms (`--enable-source-maps`, as deployed) | import ms (no flag) | first trace ms | later trace ms | first trace ms (no flag) |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    console.log(`| (Node start-up, no bundle) | | | | ${fmt(stat('baseline', (p) => p.imported))} | | | | |`);
    for (const fn of fns) {
      const meta = metafileOf(fn.dir);
      const locales = meta ? [...inputsOf(meta)].filter(([k]) => k.includes('node_modules/zod/') && k.includes('/locales/')).reduce((s, [, b]) => s + b, 0) : undefined;
      const size = (f: string) => (existsSync(join(fn.dir, f)) ? statSync(join(fn.dir, f)).size : 0);
      console.log(
        `| ${fn.name} | ${kib(size('index.mjs'))} | ${kib(size('index.mjs.map'))} | ${locales === undefined ? '–' : kib(locales)} | ` +
          `${fmt(stat(`${fn.name}:maps`, (p) => p.imported))} | ${fmt(stat(`${fn.name}:plain`, (p) => p.imported))} | ` +
          `${fmt(stat(`${fn.name}:maps`, (p) => p.firstTraceMs))} | ${fmt(stat(`${fn.name}:maps`, (p) => p.secondTraceMs))} | ${fmt(stat(`${fn.name}:plain`, (p) => p.firstTraceMs))} |`,
      );
    }
    const sample = fns.map((fn) => samples.get(`${fn.name}:maps`)?.[0]?.frame).find(Boolean);
    console.log(`\nA frame of the bundle as a trace shows it (\`--enable-source-maps\`): \`${sample ?? 'none'}\``);

    if (!fns.every((fn) => metafileOf(fn.dir))) {
      console.log('\n(No esbuild metafile in the assets: bundle composition skipped.)');
      return;
    }

    console.log('\n#### What each bundle is made of (esbuild metafile, KiB in index.mjs, largest first)\n');
    console.log('| function | largest packages |');
    console.log('|---|---|');
    for (const fn of fns) {
      const top = byPackage(inputsOf(metafileOf(fn.dir)!)).slice(0, 8);
      console.log(`| ${fn.name} | ${top.map(([p, b]) => `${p} ${kib(b)}`).join(', ')} |`);
    }

    console.log('\n#### Bundled but not used (from the wiring in functions/shared/deps.ts)\n');
    console.log(
      'Per function, what esbuild drops when the adapters the deployed function cannot use are left out (listed with the reason) ' +
        "and the project's modules are declared free of side effects; KiB of index.mjs, largest first.\n",
    );
    console.log('| function | adapters it cannot use | KiB unused | modules (KiB) |');
    console.log('|---|---|---|---|');
    for (const fn of fns) {
      const real = inputsOf(metafileOf(fn.dir)!);
      const same = await analysisBuild(fn, undefined);
      if (same.bytes !== statSync(join(fn.dir, 'index.mjs')).size) {
        throw new Error(`the analysis build of ${fn.name} (${same.bytes} B) differs from the synthesized bundle: align analysisBuild with ServiceFunction`);
      }
      const inBundle = (m: string) => real.has(m) || [...real.keys()].some((k) => k.startsWith(`node_modules/${m}/`));
      const bundled = [...ADAPTERS, ...CLIENTS].filter((a) => inBundle(a.module));
      const unused = [...ADAPTERS, ...CLIENTS].filter((a) => !a.usedBy(fn));
      const lean = inputsOf((await analysisBuild(fn, unused.map((a) => a.module))).meta);
      // Per package for dependencies, per file for the project's own modules.
      const dropped = new Map<string, number>();
      for (const [k, b] of real) {
        const d = b - (lean.get(k) ?? 0);
        const key = k.startsWith('node_modules/') ? packageOf(k) : k;
        if (d > 0) dropped.set(key, (dropped.get(key) ?? 0) + d);
      }
      const diff = [...dropped].sort((a, b) => b[1] - a[1]);
      const total = diff.reduce((s, [, d]) => s + d, 0);
      const adapters = unused.filter((a) => bundled.includes(a)).map((a) => `${a.module.replace(/^lib\/.*\//, '')} (${a.why})`);
      const list = diff.filter(([, d]) => d >= 100).map(([k, d]) => `${k} ${kib(d)}`);
      const small = diff.length - list.length;
      console.log(`| ${fn.name} | ${adapters.join(', ') || '–'} | ${kib(total)} | ${list.join(', ') || '–'}${small ? `; ${small} more under 0.1` : ''} |`);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

await main();
