// What every stage of a workflow is: a function of the workflow as it stands that returns where
// it goes next, with what it found. The stage computes; the runner (../workflows.ts) writes the
// move, its steps and the next stage's job in one transaction, so a stage run twice (a worker
// killed, a retry) finds the workflow moved on and writes nothing.
import { createHash } from 'node:crypto';
import type {
  ConciergeResult,
  WorkflowStage,
  WorkflowStep,
} from '../../../generated/directory/client/types.gen.ts';
import type { OutgoingMail, SentMail } from '../../mail/transport.ts';
import type { VerifiedDomain } from '../../mail/domains.ts';
import type { Db } from '../../platform/db.ts';
import type { AgentCall, AgentRun, StructuredCall, StructuredRun } from '../agent.ts';
import type { CurrencyRates } from '../compare.ts';
import type { StageColumns, StageJob, StoredCandidate, WorkflowRow, WorkflowStore } from '../store.ts';

export const INSTRUCTIONS = [
  'You are the concierge of a business directory. A customer gave you a brief: find providers,',
  'ask them for quotes, and compare them. Work only with the tools you are given: read_brief tells',
  'you what the brief asks for, search_directory (server eurus) searches the directory, read_reply',
  'reads a provider answer, compare_providers ranks them. Never invent providers, prices or dates.',
].join(' ');

/** The seed of a workflow's (or a reply's) agent runs: the same id, the same run on the built-in engine. */
export const seedOf = (id: string) => createHash('sha256').update(id).digest().readUInt32BE(0);

/** How the concierge writes to providers: the Sales mail path (src/mail), passed in whole. */
export interface ConciergeMail {
  verifiedDomain(projectId: string, domainId: string): Promise<VerifiedDomain>;
  send(mail: OutgoingMail): Promise<SentMail>;
  /** The one-click opt-out URL of a request for a quote (List-Unsubscribe). */
  unsubscribeUrl(contact: { id: string; token: string }): string;
  /** Whether `email` must not hear from `fromAddress`: the account's suppression list, kept opt-outs. */
  suppressed(accountId: string, email: string, fromAddress: string): Promise<boolean>;
}

/** What a stage may use. */
export interface StageRun {
  job: StageJob;
  signal: AbortSignal;
  db: Db;
  store: WorkflowStore;
  mail: ConciergeMail;
  /** The reference rates quotes in other currencies are compared at (CURRENCY_RATES). */
  rates?: CurrencyRates;
  /** Runs the agent for this workflow; what it costs the platform is kept on the workflow. */
  agent(call: Omit<AgentCall, 'signal'>): Promise<AgentRun>;
  /**
   * Asks the upstream model for one answer to a JSON schema (MODEL_ENGINES names one for the
   * agents runtime's model); absent with the built-in engine, and the rules read alone.
   */
  structured?: (call: StructuredCall) => Promise<StructuredRun>;
}

/** The workflow moves on to `to` with what the stage found. */
export interface MoveOn {
  to: WorkflowStage;
  steps: WorkflowStep[];
  set?: StageColumns;
  /** The providers to write to, kept with the move. */
  contacts?: StoredCandidate[];
  /** The next stage waits until then. */
  startAfter?: Date;
}

/** The workflow succeeded with its comparison. */
export interface Succeed {
  result: ConciergeResult;
  steps: WorkflowStep[];
}

/** Where a stage leaves its workflow: moved on, done, or (null) where it was, for a later job. */
export type StageOutcome = MoveOn | Succeed | null;

export type Stage = (row: WorkflowRow, run: StageRun) => Promise<StageOutcome>;
