import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRIM_SOURCE_MAP = fileURLToPath(new URL('./trim-source-map.ts', import.meta.url));
/** Module aliases of the deployed bundles (esbuild resolves them from the project root). */
export const BUNDLE_ALIASES = {
  '@aws-sdk/credential-provider-node': './functions/shared/lambda-credentials.ts',
  zod: './functions/shared/zod-bundle-entry.ts',
  // esbuild applies the alias above to subpaths too: `zod/v4/core` (which zod-validation-error imports)
  // gets the same core without locales. A dependency importing another zod subpath needs a line here.
  'zod/v4/core': './functions/shared/zod-core-exports.ts',
  // jsonld's node document loader requires this HTTP client, which imports undici (~410 KB) and ky; our
  // loaders are offline and never call it (lib/jsonld/loader.ts). No function fetches through it.
  '@digitalbazaar/http-client': './functions/shared/no-http-client.ts',
} as const;

/** ESM bundles need `require` for the CommonJS dependencies they carry (jsonld, the Digital Bazaar suites, parts of the SDK). */
export const ESM_REQUIRE_BANNER = "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);";

/** Largest bundle (index.mjs) a function may have: cold starts grow with it. Held by an infra test. */
export const BUNDLE_BUDGET_BYTES = 600_000;
/**
 * Functions allowed more, each with its reason. The OID4VCI issuer carries the OpenID libraries, which
 * `import z from 'zod'`: the whole of zod's namespace ships (179 KB, its locales already cut by the
 * alias above), on top of three SDK clients. Its cold import is measured in docs/benchmarks.md. The
 * email worker carries nodemailer's MIME composer, the QR encoder and the SES client next to the
 * issuance code; it is a queue worker, where a cold start delays no caller (684,515 bytes
 * measured once the QR code's PNG was written by lib/qr/png.ts instead of pngjs). The
 * OID4VP admin group checks definitions against the DIF Presentation Exchange v2 schema (pex's compiled
 * validator, not its 2 MB entry point), compiles their filters with ajv and parses DCQL. The verifier
 * carries the OpenID libraries' whole zod namespace like the issuer, plus ajv (definition filters are
 * re-checked on what wallets disclose), DCQL matching and the KMS client. Both OID4VP groups compile
 * patterns with RE2 (re2js, ~160 KB minified, most of it Unicode tables): a tenant's pattern runs on
 * wallet input, and V8's backtracking engine would let one value block the function (docs/oid4vp.md, "Definitions, requests and the two kinds of wallet": patterns).
 * The JSON-LD admin group checks each context file with jsonld's own context processing (jsonld is
 * 116 KB of its 598,434 bytes, its HTTP client aliased away): 1.6 KB under the common budget left no
 * room for the shared code to grow. Since JSON-LD credentials are offered there, it also carries the
 * signing stack's checks (@digitalbazaar/vc and the suites, rdf-canonize: an offer is checked as fully as
 * its signature will be): 817,673 bytes measured. The issuing worker (credential-issuer) carries the
 * same stack with the KMS client and signs (808,592 bytes), and the AnonCreds issuing half (CL signatures on
 * BigInt: +32,109 bytes, 803,952 → 836,061 measured with esbuild's deployed options); it is a queue worker, where a cold start
 * delays a holder's credential by the import, not a caller's request.
 */
export const BUNDLE_BUDGET_OVERRIDES: Readonly<Record<string, number>> = { 'oid4vci-issuer': 760_000, 'email-worker': 700_000, oid4vp: 920_000, 'oid4vp-verifier': 1_080_000, jsonld: 860_000, 'credential-issuer': 860_000 };

export interface ServiceFunctionProps {
  /** Repository root; the entry is `functions/<name>/handler.ts` unless `entry` says otherwise. */
  readonly root: string;
  readonly name: string;
  /** Entry file relative to the root (workers: `functions/workers/<name>.ts`). */
  readonly entry?: string;
  readonly description: string;
  readonly environment: Record<string, string>;
  readonly memorySize?: number;
  readonly timeout?: Duration;
  /** Instances reserved for (and the most allowed to) this function: lib/service/api-settings.ts RESERVED_CONCURRENCY. */
  readonly reservedConcurrency?: number;
  /**
   * Files shipped next to the handler (name -> content, or a file to copy): configuration too large for
   * Lambda's 4 KB of environment, such as the publication agreement's text, and static files read at
   * run time that must not be bundled into the code, such as the API reference renderer's.
   */
  readonly files?: Readonly<Record<string, string | { readonly copyFrom: string }>>;
}

/**
 * A Lambda function with the project's defaults: nodejs22.x on arm64, bundled by the local esbuild
 * (never Docker) as minified ESM with source maps, its own log group, and its own role holding no
 * managed policy: callers grant exactly what each function needs.
 */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.name} function`,
    });
    logGroup.grantWrite(this.role);
    this.fn = new NodejsFunction(this, 'Fn', {
      entry: join(props.root, props.entry ?? join('functions', props.name, 'handler.ts')),
      handler: 'handler',
      projectRoot: props.root,
      depsLockFilePath: join(props.root, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      description: props.description,
      role: this.role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      // X-Ray: each invocation's init and run under the API stage's trace, with no library in the bundle
      // (Powertools Tracer would add ~125 KB: docs/deploying.md, "Observability").
      tracing: lambda.Tracing.ACTIVE,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        // Maps without the sources, and (trim-source-map.ts) only our own files mapped: traces through
        // our code stay mapped, and Node's first trace decodes a few percent of the mappings.
        sourcesContent: false,
        // `-c bundleMetafile=true`: esbuild's index.meta.json beside each bundle, for bundle analysis.
        metafile: [true, 'true'].includes(this.node.tryGetContext('bundleMetafile')),
        mainFields: ['module', 'main'],
        // Bundle the SDK too: the versions we test are the versions that run (measured: externalizing it
        // doubles cold imports). Its credential chain is the one part Lambda never uses: see lambda-credentials.ts.
        externalModules: [],
        esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([from, to]) => [`--alias:${from}`, to])),
        banner: ESM_REQUIRE_BANNER,
        commandHooks: afterBundling(props.files ?? {}),
      },
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) have no resource-level permissions.',
    });
    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions::AwsSolutions-L1',
      reason: 'nodejs22.x is the chosen runtime (every npm script, tests included, runs on Node 22 from the `node` devDependency); moving up is a deliberate, tested change.',
    });
  }
}

/**
 * After esbuild: trims the source map (with the Node running the synth, 22 under every npm script), then
 * copies the extra files — written or checked at synth time — into the bundle (the asset hash covers all).
 */
function afterBundling(files: Readonly<Record<string, string | { readonly copyFrom: string }>>) {
  let dir: string | undefined;
  const sources = Object.entries(files).map(([name, file]) => {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`bundled file name ${name} must be a plain file name`);
    if (typeof file !== 'string') {
      if (!existsSync(file.copyFrom)) throw new Error(`bundled file ${name}: ${file.copyFrom} does not exist`);
      return [name, file.copyFrom] as const;
    }
    dir ??= mkdtempSync(join(tmpdir(), 'fn-files-'));
    writeFileSync(join(dir, name), file);
    return [name, join(dir, name)] as const;
  });
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_input: string, output: string) => [
      `"${process.execPath}" "${TRIM_SOURCE_MAP}" "${join(output, 'index.mjs.map')}"`,
      ...sources.map(([name, from]) => `cp "${from}" "${join(output, name)}"`),
    ],
  };
}
