// duckgate against the official MCP TypeScript SDK, over stdio.
//
// Usage: tsx check_typescript.ts DUCKGATE_BINARY DATABASE
//
// Two generations of the SDK, both from the npm registry:
//
// - `@modelcontextprotocol/client` (v2, the line that implements 2026-07-28):
//   pinned to 2026-07-28 (`versionNegotiation: { mode: { pin: '2026-07-28' } }`: the connect-time
//   `server/discover` must offer it, no fallback), negotiated (`mode: 'auto'`, must settle on
//   2026-07-28), and pinned to 2025-11-25 over `initialize` (`mode: 'legacy'` with
//   `supportedProtocolVersions: ['2025-11-25']`);
// - `@modelcontextprotocol/sdk` (v1; its newest release stops at 2025-11-25 and has no 2026-07-28
//   and no way to pin another revision): `initialize` at 2025-11-25.
//
// Each session lists the tools (the order duckgate documents), calls list_tables, describe_table
// (a foreign key's target is an object), query and plot,
// and validates each result's structuredContent against the tool's outputSchema with Ajv.
// Prints one line per session and a closing `typescript-sdk: N passed, N failed`; exits 1 on a
// failure.

import { readFileSync } from 'node:fs';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

const TOOL_ORDER = [
  'list_tables',
  'describe_table',
  'query',
  'plot',
  'sample_rows',
  'explain_query',
  'search_schema',
  'list_relationships',
  'server_info',
];
const ALL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];

type Tool = { name: string; outputSchema?: Record<string, unknown> };
type CallResult = { structuredContent?: unknown; isError?: boolean; content?: unknown[] };

/// What both SDK generations' clients offer for these checks.
interface SdkClient {
  listTools(): Promise<{ tools: Tool[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listPrompts(): Promise<{ prompts: { name: string; description?: string }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: { content: { type: string; text?: string } }[] }>;
  getNegotiatedProtocolVersion?(): string | undefined;
  getServerVersion(): { name: string } | undefined;
  close(): Promise<void>;
}

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function packageVersion(name: string): string {
  const manifest = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(manifest, 'utf8')).version as string;
}

async function exercise(client: SdkClient, expectedVersion: string): Promise<void> {
  const negotiated = client.getNegotiatedProtocolVersion?.();
  expect(negotiated === expectedVersion, `negotiated ${negotiated}, wanted ${expectedVersion}`);
  expect(client.getServerVersion()?.name === 'duckgate', `serverInfo: ${JSON.stringify(client.getServerVersion())}`);

  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  expect(JSON.stringify(names) === JSON.stringify(TOOL_ORDER), `tool order: ${names}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validators = new Map(
    tools.map((tool) => {
      expect(tool.outputSchema !== undefined, `${tool.name} has no outputSchema`);
      return [tool.name, ajv.compile(tool.outputSchema)] as const;
    }),
  );
  let lastContent: unknown[] = [];
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, any>> => {
    const result = (await client.callTool({ name, arguments: args })) as CallResult;
    lastContent = result.content ?? [];
    const structured = result.structuredContent;
    expect(typeof structured === 'object' && structured !== null, `${name}: no structuredContent`);
    const validate = validators.get(name)!;
    expect(validate(structured) === true, `${name}: ${ajv.errorsText(validate.errors)}`);
    expect(result.isError === ((structured as any).status === 'error' || (structured as any).status === 'refused'), `${name}: isError ${result.isError}`);
    return structured as Record<string, any>;
  };

  const tables = await call('list_tables', {});
  expect(tables.status === 'success', `list_tables: ${JSON.stringify(tables)}`);
  const described = await call('describe_table', { table_name: 'cgm_readings' });
  const device = described.data?.columns?.find((c: Record<string, any>) => c.name === 'device_id');
  expect(
    described.status === 'success' && device?.references?.table === 'devices' && device?.references?.column === 'device_id',
    `describe_table: ${JSON.stringify(device)}`,
  );
  const query = await call('query', { sql: 'SELECT count(*) AS n FROM cgm_readings' });
  expect(query.status === 'success' && query.data.row_count === 1, `query: ${JSON.stringify(query)}`);
  const chart = await call('plot', { sql: 'SELECT read_at, glucose_mg_dl FROM cgm_readings', kind: 'agp' });
  expect(chart.status === 'success' && chart.data.summary.rows.length === 24, `plot: ${JSON.stringify(chart).slice(0, 300)}`);
  const image = lastContent[0] as { type?: string; mimeType?: string; data?: string };
  expect(image?.type === 'image' && image.mimeType === 'image/png', `plot content: ${JSON.stringify(image).slice(0, 200)}`);
  expect(Buffer.from(image.data ?? '', 'base64').subarray(0, 4).toString('latin1') === '\x89PNG', 'plot: the image is not a PNG');
  const refused = await call('query', { sql: 'DROP TABLE cgm_readings' });
  expect(refused.status === 'refused', `refused query: ${JSON.stringify(refused)}`);

  // The starter prompts: both listed, each naming the tools it uses, and each one's text.
  const { prompts } = await client.listPrompts();
  const promptNames = prompts.map((prompt) => prompt.name);
  expect(JSON.stringify(promptNames) === JSON.stringify(['glucose_review', 'last_night']), `prompts: ${promptNames}`);
  for (const prompt of prompts) {
    for (const tool of ['list_tables', 'describe_table', 'query', 'plot']) {
      expect(prompt.description?.includes(tool) === true, `${prompt.name} does not name ${tool}`);
    }
    const got = await client.getPrompt({ name: prompt.name, arguments: prompt.name === 'glucose_review' ? { days: '14' } : {} });
    const text = got.messages[0]?.content?.text ?? '';
    expect(text.includes('plot with kind'), `${prompt.name}: ${text.slice(0, 200)}`);
  }
}

const serverParams = (exe: string, db: string) => ({
  command: exe,
  args: ['serve', '--db', db],
  // Only warnings from the server on stderr (the start-up line repeats for every session).
  env: { ...(process.env as Record<string, string>), DUCKGATE_LOG: 'warn' },
});

async function v2Session(exe: string, db: string, mode: 'pin' | 'auto' | 'legacy', expected: string): Promise<void> {
  const options =
    mode === 'pin'
      ? { versionNegotiation: { mode: { pin: '2026-07-28' } } }
      : mode === 'auto'
        ? { versionNegotiation: { mode: 'auto' as const } }
        : { supportedProtocolVersions: [expected] };
  const client = new ClientV2({ name: 'duckgate-sdk-compat', version: '0' }, options);
  await client.connect(new StdioV2(serverParams(exe, db)));
  try {
    if (mode !== 'legacy') {
      expect(client.getProtocolEra() === 'modern', `era ${client.getProtocolEra()}`);
      const discovered = client.getDiscoverResult();
      expect(
        JSON.stringify(discovered?.supportedVersions) === JSON.stringify(ALL_VERSIONS),
        `server/discover supportedVersions: ${JSON.stringify(discovered?.supportedVersions)}`,
      );
    } else {
      expect(client.getProtocolEra() === 'legacy', `era ${client.getProtocolEra()}`);
    }
    await exercise(client as unknown as SdkClient, expected);
  } finally {
    await client.close();
  }
}

async function v1Session(exe: string, db: string): Promise<void> {
  const client = new ClientV1({ name: 'duckgate-sdk-compat', version: '0' });
  const transport = new StdioV1(serverParams(exe, db));
  // v1 keeps the negotiated revision to itself; it hands it to a transport that asks for it.
  let negotiated: string | undefined;
  Object.assign(transport, { setProtocolVersion: (version: string) => (negotiated = version) });
  await client.connect(transport);
  try {
    const view: SdkClient = {
      listTools: () => client.listTools(),
      callTool: (params) => client.callTool(params),
      listPrompts: () => client.listPrompts(),
      getPrompt: (params) => client.getPrompt(params),
      getServerVersion: () => client.getServerVersion(),
      getNegotiatedProtocolVersion: () => negotiated,
      close: () => client.close(),
    };
    await exercise(view, '2025-11-25');
  } finally {
    await client.close();
  }
}

async function main(): Promise<number> {
  const [exe, db] = process.argv.slice(2);
  if (!exe || !db) {
    console.error('usage: tsx check_typescript.ts DUCKGATE_BINARY DATABASE');
    return 2;
  }
  const v2 = packageVersion('@modelcontextprotocol/client');
  const v1 = packageVersion('@modelcontextprotocol/sdk');
  console.log(`typescript-sdk: @modelcontextprotocol/client ${v2}, @modelcontextprotocol/sdk ${v1}, ajv ${packageVersion('ajv')}, node ${process.versions.node}`);
  const runs: [string, () => Promise<void>][] = [
    [`@modelcontextprotocol/client ${v2}: 2026-07-28 pinned (server/discover)`, () => v2Session(exe, db, 'pin', '2026-07-28')],
    [`@modelcontextprotocol/client ${v2}: 2026-07-28 negotiated (mode 'auto')`, () => v2Session(exe, db, 'auto', '2026-07-28')],
    [`@modelcontextprotocol/client ${v2}: 2025-11-25 pinned (initialize)`, () => v2Session(exe, db, 'legacy', '2025-11-25')],
    [`@modelcontextprotocol/sdk ${v1}: 2025-11-25 (initialize; no 2026-07-28 in v1)`, () => v1Session(exe, db)],
  ];
  let passed = 0;
  let failed = 0;
  for (const [label, run] of runs) {
    const what = `${label}: list_tables, describe_table, query, plot (PNG image), outputSchema, prompts`;
    try {
      await Promise.race([
        run(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 120 s')), 120_000).unref()),
      ]);
      passed += 1;
      console.log(`ok   typescript-sdk ${what}`);
    } catch (error) {
      failed += 1;
      console.log(`FAIL typescript-sdk ${what}`);
      console.log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
  }
  console.log(`typescript-sdk: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
