// Comparing: the answers not read yet are read in code, the providers ranked by `compare` (price,
// rating, distance, availability, answer time) and handed to the agent as the answer of its
// `compare_providers` tool; the workflow then succeeds with the ranking.
import type { WorkflowStep } from '../../../generated/directory/client/types.gen.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { compare, type Outcome } from '../compare.ts';
import { readQuote } from '../quotes.ts';
import { readingMessage, step } from '../view.ts';
import { INSTRUCTIONS, seedOf, type Stage } from './stage.ts';

export const compareProviders: Stage = async (row, run) => {
  const u = row.understanding;
  const contacts = await run.store.contactsOf(run.db, row.id);
  const steps: WorkflowStep[] = [];
  for (const c of contacts) {
    // an answer that came in as the waiting ended, or read before readings had VAT and fees:
    // read now, in code
    if (c.reply && (c.reading === null || !('vat' in c.reading))) {
      c.reading = readQuote(c.reply.text, new Date(c.reply.received_at * 1000), u?.place?.country ?? null);
      await run.store.read(run.db, c.id, c.reading);
      steps.push(step('comparing', 'reply_read', readingMessage(c.name, c.reading)));
    }
  }
  const outcomes = new Map<string, Outcome>(
    contacts.map((c) => [
      c.listing_id,
      {
        contacted: c.sent_at !== null,
        sent_at: c.sent_at === null ? null : Number(c.sent_at),
        replied_at: c.reply?.received_at ?? null,
        reading: c.reading,
      },
    ]),
  );
  const candidates = row.candidates.filter((c) => !row.contact || outcomes.get(c.listing_id)?.contacted);
  const result = compare(candidates, outcomes, {
    contact: row.contact,
    language: u?.language ?? 'en',
    deadline: u?.deadline ?? null,
    respondBy: row.respond_by === null ? null : isoSeconds(Number(row.respond_by)),
    tradeTerm: u?.trade?.term ?? null,
    placeName: u?.place?.name ?? null,
    country: u?.place?.country ?? null,
    askedFor: u?.max_providers ?? row.candidates.length,
    shortlisted: row.candidates.length,
    radiusKm: u?.radius_km ?? 25,
    ...(run.rates ? { rates: run.rates } : {}),
  });
  const agent = await run.agent({
    instructions: INSTRUCTIONS,
    input: `Compare the ${candidates.length} providers for this brief and recommend one: ${row.brief}`,
    tools: [
      {
        type: 'function',
        name: 'compare_providers',
        description:
          'Ranks the providers on price, rating, distance, availability and answer time, with reasons.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
    ],
    toolChoice: { type: 'function', name: 'compare_providers' },
    answer: () => JSON.stringify(result),
    seed: seedOf(row.id),
    metadata: { workflow_id: row.id, stage: 'comparing' },
  });
  const quoted = result.providers.filter((p) => p.quote !== null).length;
  steps.push(
    step(
      'comparing',
      'compared',
      row.contact
        ? `Compared ${result.providers.length} provider${result.providers.length === 1 ? '' : 's'}, ${quoted} with a quote; ${result.no_answer.length} did not answer.${result.shortfall ? ` ${result.shortfall}.` : ''}`
        : `Compared ${result.providers.length} provider${result.providers.length === 1 ? '' : 's'} on the directory's data.${result.shortfall ? ` ${result.shortfall}.` : ''}`,
      agent.responseId,
    ),
  );
  return { result, steps };
};
