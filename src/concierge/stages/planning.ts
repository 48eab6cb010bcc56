// Planning: the brief read for its trade, place, number of providers and deadline, by code, and
// handed to the agent as the answer of its `read_brief` tool.
import { understand } from '../understand.ts';
import { step } from '../view.ts';
import { INSTRUCTIONS, seedOf, type Stage } from './stage.ts';

export const plan: Stage = async (row, run) => {
  const u = understand(
    row.brief,
    row.hints,
    row.hints.resolved ?? null,
    new Date(Number(row.created) * 1000),
  );
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
  }${u.requirements.length > 0 ? `; asks for ${u.requirements.join(', ')}` : ''}.`;
  return {
    to: 'searching',
    steps: [step('planning', 'planned', message, agent.responseId)],
    set: { understanding: u },
  };
};
