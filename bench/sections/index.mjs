// The benchmark's sections, in the order they run. A section is a module exporting `name`, `title` and
// `run(ctx)` (ctx: lib/context.mjs) that resolves to
//   { summary: [{ metric, value, unit, digits?, target?, ok? }], tables?: [{ title?, headers, rows }], data? }
// `summary` lines make the final table; `data` goes to bench/results/latest.json under the section's name.
// Sections share the processes under test through ctx (started once, on first use).
import * as apitokenMeVsJwt from './apitoken-me-vs-jwt.mjs';
import * as importReports from './import.mjs';
import * as importLongText from './import-long-text.mjs';
import * as ingest from './ingest.mjs';
import * as jwtMeVsBare from './jwt-me-vs-bare.mjs';
import * as live from './live.mjs';
import * as retention from './retention.mjs';
import * as loginLatency from './login-latency.mjs';
import * as testHealth from './test-health.mjs';
import * as testsPaging from './tests-paging.mjs';
import * as triage from './triage.mjs';
import * as web from './web.mjs';

export const sections = [
  jwtMeVsBare,
  apitokenMeVsJwt,
  loginLatency,
  ingest,
  importReports,
  importLongText,
  live,
  web,
  testsPaging,
  testHealth,
  triage,
  retention,
];
