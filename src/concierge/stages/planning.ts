// Planning: the brief read for its trade, place, number of providers and deadline, by code (and,
// with an upstream model, by the model, each part checked by code), and handed to the agent as
// the answer of its `read_brief` tool.
import { BRIEF_INSTRUCTIONS, BRIEF_SCHEMA, briefInput, checkedUnderstanding } from '../model-brief.ts';
import { type Understanding, understand } from '../understand.ts';
import { step } from '../view.ts';
import type { StructuredRun } from '../agent.ts';
import type { WorkflowRow } from '../store.ts';
import { INSTRUCTIONS, seedOf, type Stage, type StageRun } from './stage.ts';

/** The model's reading of a brief must come in this long; a slow upstream and the rules read alone. */
export const BRIEF_MODEL_TIMEOUT_MS = 30_000;

export const plan: Stage = async (row, run) => {
  const today = new Date(Number(row.created) * 1000);
  const rules = understand(row.brief, row.hints, row.hints.resolved ?? null, today);
  const u = await modelReading(row, run, rules, today);
  const agent = await run.agent({
    instructions: INSTRUCTIONS,
    input: row.brief,
    tools: [
      {
        type: 'function',
        name: 'read_brief',
        description:
          'What the brief asks for: its language, the trade, the place, how many providers, the deadline.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
    ],
    toolChoice: { type: 'function', name: 'read_brief' },
    answer: () => JSON.stringify(u),
    seed: seedOf(row.id),
    metadata: { workflow_id: row.id, stage: 'planning' },
  });
  const message = `Read the brief (${u.language}): ${
    u.trade ? `${u.trade.term} (${u.trade.activity})` : 'no trade the directory knows'
  }${u.place ? ` near ${u.place.name} within ${u.radius_km} km` : ', no place'}; ${u.max_providers} provider(s)${
    u.deadline ? `; deadline ${u.deadline}` : ''
  }${u.requirements.length > 0 ? `; asks for ${u.requirements.join(', ')}` : ''}.${
    u.read_by === 'model'
      ? ` Read by the model${u.dropped.length > 0 ? `; the rules' reading kept for ${[...new Set(u.dropped.map((d) => d.field))].join(', ')}` : ''}.`
      : ''
  }`;
  return {
    to: 'searching',
    steps: [step('planning', 'planned', message, agent.responseId)],
    set: { understanding: u },
  };
};

/** The model's reading checked part by part, or the rules' when there is no model or it failed. */
async function modelReading(
  row: WorkflowRow,
  run: StageRun,
  rules: Understanding,
  today: Date,
): Promise<Understanding> {
  if (run.structured === undefined) return rules;
  // a stage run again checks the model's first answer: asked again, it may read the brief otherwise
  let reading = row.brief_reading ?? null;
  if (reading === null) {
    let answer: StructuredRun;
    try {
      answer = await run.structured({
        instructions: BRIEF_INSTRUCTIONS,
        input: briefInput(row.brief, today),
        name: 'brief_reading',
        schema: BRIEF_SCHEMA as unknown as Record<string, unknown>,
        seed: seedOf(row.id),
        metadata: { workflow_id: row.id, stage: 'planning' },
        signal: AbortSignal.any([run.signal, AbortSignal.timeout(BRIEF_MODEL_TIMEOUT_MS)]),
      });
    } catch (err) {
      if (run.signal.aborted) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      return {
        ...rules,
        dropped: [
          { field: 'understanding', value: '', reason: `the model did not answer: ${reason}`.slice(0, 200) },
        ],
      };
    }
    reading = await run.store.keepBriefReading(row.id, { text: answer.text, response_id: answer.responseId });
  }
  return checkedUnderstanding(reading.text, row.brief, row.hints, today, rules);
}
