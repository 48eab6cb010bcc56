// Providers' answers to the requests for quotes, as the inbound listener hands them over: each
// carries its request's token in the address it was sent to (`q-<token>@`, the Reply-To), else
// refers to the request's Message-ID (`<cq_...>`). The first answer of a provider is kept and read
// (a durable job: the agent's `read_reply`); a bounce ends the request, a hard one suppresses the
// address; an out-of-office is no answer.
import type { QuoteReading } from '../../generated/directory/client/types.gen.ts';
import { type InboundMail, InboundRejected } from '../mail/inbound.ts';
import type { JobContext } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { suppress } from '../sales/suppressions.ts';
import {
  type AgentCall,
  AgentFailed,
  type AgentRun,
  type StructuredCall,
  type StructuredRun,
} from './agent.ts';
import { checkedReading, READING_INSTRUCTIONS, READING_SCHEMA } from './model-reading.ts';
import { readQuote } from './quotes.ts';
import { INSTRUCTIONS, seedOf } from './stages/stage.ts';
import type { ContactRow, WorkflowRow, WorkflowStore } from './store.ts';
import { readingMessage, step } from './view.ts';

/** The Reply-To of a request for a quote: `q-` and its token. */
const REPLY_ADDRESS = /^q-([a-z2-7]{20})@/;

const tokenIn = (mail: InboundMail) =>
  mail.recipients.map((r) => REPLY_ADDRESS.exec(r)?.[1]).find((t) => t !== undefined);

const referredIds = (mail: InboundMail) =>
  [mail.inReplyTo, ...mail.references, mail.bounce?.originalMessageId].filter((x): x is string => !!x);

/** Whether an inbound message is an answer to (or a bounce of) one of our requests for quotes. */
export function isAnswer(mail: InboundMail): boolean {
  return tokenIn(mail) !== undefined || referredIds(mail).some((x) => x.startsWith('<cq_'));
}

export interface AnswersDeps {
  store: WorkflowStore;
  /** Runs the agent for a workflow, its cost kept on the workflow. */
  agent(row: WorkflowRow, call: AgentCall): Promise<AgentRun>;
  logger: Logger;
  /** Attempts of a read after the first before the comparison reads the answer in code. */
  retries: number;
  /**
   * Asks the upstream model for its reading of an answer (MODEL_ENGINES names one for the agents
   * runtime's model); absent with the built-in engine, which cannot read, and the rules read alone.
   */
  structured?: (row: WorkflowRow, call: StructuredCall) => Promise<StructuredRun>;
}

export class Answers {
  readonly #deps: AnswersDeps;

  constructor(deps: AnswersDeps) {
    this.#deps = deps;
  }

  /** Stores the first answer of a provider (or a bounce) and has it read; resolves once stored. */
  async onMail(mail: InboundMail): Promise<void> {
    const { store } = this.#deps;
    const token = tokenIn(mail);
    const contact = await store.contactAnswered(token ? { token } : { messageIds: referredIds(mail) });
    if (!contact) throw new InboundRejected(550, '5.1.1 no such request for a quote');
    if (mail.kind === 'auto_reply') return; // an out-of-office is no answer
    if (mail.kind === 'bounce') return this.#bounced(contact, mail);
    const reply = {
      received_at: Math.floor(mail.receivedAt.getTime() / 1000),
      from: mail.from.address,
      subject: mail.subject.slice(0, 300),
      text: mail.text.slice(0, 100_000),
      message_id: mail.messageId,
    };
    const stored = await store.transaction(async (tx) => {
      const updated = await store.replied(tx, contact.id, reply);
      if (!updated) return false;
      await store.addSteps(tx, contact.workflow_id, [
        step('awaiting_replies', 'reply_received', `${contact.name} answered (${mail.from.address}).`),
      ]);
      if (updated.running) await store.queueRead(tx, contact.id);
      return true;
    });
    if (!stored)
      this.#deps.logger.info(
        { contact: contact.id },
        'a further answer of a provider kept out (the first one counts)',
      );
  }

  async #bounced(contact: ContactRow, mail: InboundMail): Promise<void> {
    const { store } = this.#deps;
    await store.transaction(async (tx) => {
      if (!(await store.bounced(tx, contact.id, mail.bounce?.diagnostic ?? mail.classifiedBy))) return;
      if (mail.bounce?.permanent) await suppress(tx, contact.account_id, contact.email, 'hard_bounce', null);
      await store.addSteps(tx, contact.workflow_id, [
        step(
          'awaiting_replies',
          'not_contacted',
          `The request to ${contact.name} bounced: ${mail.classifiedBy}.`,
        ),
      ]);
    });
    await store.endWaitIfAnswered(contact.workflow_id);
  }

  /** The read job: the agent reads an answer for price, availability and conditions. */
  async read(contactId: string, ctx: JobContext): Promise<void> {
    const { store } = this.#deps;
    const contact = await store.contact(contactId);
    if (!contact?.reply || contact.reading !== null) return;
    const row = await store.load(contact.workflow_id);
    if (!row || row.status !== 'running') return;
    // providers are near the brief's place: its country's currency and VAT
    const received = new Date(contact.reply.received_at * 1000);
    const rules = readQuote(contact.reply.text, received, row.understanding?.place?.country ?? null);
    const reading = await this.#modelReading(row, contact, rules, received, ctx.signal);
    let run: AgentRun;
    try {
      run = await this.#deps.agent(row, readCall(contact, reading, ctx.signal));
    } catch (err) {
      if (ctx.retryCount < this.#deps.retries && !(err instanceof AgentFailed)) throw err;
      // the comparison reads it in code then
      this.#deps.logger.warn({ err, contact: contactId }, 'reading an answer with the agent failed');
      return;
    }
    await store.transaction(async (tx) => {
      if (!(await store.read(tx, contactId, reading, run.responseId))) return;
      await store.addSteps(tx, row.id, [
        step('awaiting_replies', 'reply_read', readingMessage(contact.name, reading), run.responseId),
      ]);
    });
    await store.endWaitIfAnswered(row.id);
  }

  /** The model's reading checked against the answer, or the rules' when there is no model or it failed. */
  async #modelReading(
    row: WorkflowRow,
    contact: ContactRow,
    rules: QuoteReading,
    received: Date,
    signal: AbortSignal,
  ): Promise<QuoteReading> {
    const ask = this.#deps.structured;
    const text = contact.reply?.text;
    if (ask === undefined || text === undefined) return rules;
    try {
      const run = await ask(row, {
        instructions: READING_INSTRUCTIONS,
        input: text.slice(0, 8000),
        name: 'quote_reading',
        schema: READING_SCHEMA as unknown as Record<string, unknown>,
        seed: seedOf(contact.id),
        metadata: { workflow_id: contact.workflow_id, stage: 'awaiting_replies' },
        signal,
      });
      return checkedReading(run.text, text, received, rules);
    } catch (err) {
      this.#deps.logger.warn(
        { err, contact: contact.id },
        'the model could not read an answer; the rules read it',
      );
      return rules;
    }
  }
}

function readCall(contact: ContactRow, reading: QuoteReading, signal: AbortSignal): AgentCall {
  return {
    instructions: INSTRUCTIONS,
    input: `Read the answer of ${contact.name} for its price, availability and conditions.`,
    tools: [
      {
        type: 'function',
        name: 'read_reply',
        description:
          "Reads a provider's answer: the price and currency, the first day they can start, their conditions, whether they decline.",
        parameters: {
          type: 'object',
          properties: {
            contact_id: { type: 'string', const: contact.id, description: 'The request answered.' },
          },
          required: ['contact_id'],
          additionalProperties: false,
        },
      },
    ],
    toolChoice: { type: 'function', name: 'read_reply' },
    answer: () =>
      JSON.stringify({ ...reading, provider: contact.name, reply: contact.reply?.text.slice(0, 4000) }),
    seed: seedOf(contact.id),
    metadata: { workflow_id: contact.workflow_id, stage: 'awaiting_replies' },
    signal,
  };
}
