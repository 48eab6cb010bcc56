// `npm run dns:local`: a DNS server on 127.0.0.1 (UDP, port 5353 unless `--port N`) that serves
// the records of sending domains, for trying Sales on one machine without a real domain
// (docs/sales.md). It reads sending domains as the API returns them (one object, or a list page)
// on standard input and serves their `dns_records`; start the directory with
// `DNS_SERVERS=127.0.0.1:5353` and `verify` looks them up here. Names it does not hold answer
// NXDOMAIN. Stop it with Ctrl-C.
//
//   curl -s localhost:8081/v1/sending-domains/sd_... -H "Authorization: Bearer $API_KEY" \
//     | npm run --silent dns:local
import { text } from 'node:stream/consumers';
import { startTestDns } from '../contract-tests/support/dns.ts';

interface Record {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
}

const at = process.argv.indexOf('--port');
const port = at > 0 ? Number(process.argv[at + 1]) : 5353;
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('usage: npm run dns:local [-- --port N] < sending-domain.json');
  process.exit(2);
}
const input = JSON.parse(await text(process.stdin)) as { data?: unknown[]; dns_records?: Record[] };
const domains = (Array.isArray(input.data) ? input.data : [input]) as Array<{ dns_records?: Record[] }>;
const records = domains.flatMap((d) => d.dns_records ?? []);
if (records.length === 0) {
  console.error('no dns_records on standard input: pipe in a sending domain from the API');
  process.exit(2);
}
const dns = await startTestDns({ port });
for (const r of records) {
  dns.publish(r.name, r.type, r.value);
  console.log(
    `${r.type.padEnd(3)} ${r.name}  ${r.value.length > 60 ? `${r.value.slice(0, 57)}...` : r.value}`,
  );
}
console.log(
  `\nserving ${records.length} records on ${dns.server} (DNS_SERVERS=${dns.server}); Ctrl-C stops it`,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void dns.close().then(() => process.exit(0)));
}
