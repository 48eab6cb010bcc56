// The concierge's reading of the judged briefs (issue 32 point 7): how many of
// src/concierge/testing/judged-briefs.ts are read right in every member, and which members are
// wrong where not. Pure code, no server: `npm run bench:concierge-briefs [-- --out FILE.json]`.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BRIEFS, judge } from '../src/concierge/testing/judged-briefs.ts';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const started = performance.now();
const judged = BRIEFS.map(judge);
const ms = performance.now() - started;
const right = judged.filter((j) => j.wrong.length === 0).length;
const members = judged.flatMap((j) => j.wrong.map((w) => w.split(':')[0] ?? w));
const byMember = Object.fromEntries(
  [...new Set(members)].map((m) => [m, members.filter((x) => x === m).length]),
);
for (const j of judged.filter((x) => x.wrong.length > 0))
  console.log(`✗ ${j.brief}\n    ${j.wrong.join('\n    ')}`);
console.log(
  `briefs read right: ${right}/${judged.length} (${((100 * right) / judged.length).toFixed(0)} %); wrong members: ${JSON.stringify(byMember)}; ${ms.toFixed(0)} ms`,
);
if (values.out)
  writeFileSync(
    values.out,
    `${JSON.stringify({ right, total: judged.length, byMember, judged, ms }, null, 2)}\n`,
  );
