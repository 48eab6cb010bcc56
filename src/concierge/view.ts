// A workflow as the API shows it, and the steps of its log.
import type {
  ConciergeContact,
  QuoteReading,
  Workflow,
  WorkflowStage,
  WorkflowStep,
} from '../../generated/directory/client/types.gen.ts';
import { isoSeconds, nowSeconds } from '../platform/clock.ts';
import { formatEur } from '../platform/metering.ts';
import type { ContactRow, WorkflowRow } from './store.ts';

export const isFinal = (status: string) =>
  status === 'succeeded' || status === 'failed' || status === 'cancelled';

export function step(
  stage: WorkflowStage | null,
  kind: WorkflowStep['kind'],
  message: string,
  agent: string | null = null,
): WorkflowStep {
  return { at: nowSeconds(), stage, kind, message, agent_response_id: agent };
}

/** The step that says what an answer was read to say. */
export function readingMessage(name: string, reading: QuoteReading): string {
  if (reading.declined) return `${name} declined the job.`;
  const vat = { gross: ' incl. VAT', net: ' before VAT', exempt: ' without VAT', unknown: '' }[
    reading.vat.basis
  ];
  const price =
    reading.amount === null
      ? reading.no_price_reason === 'site_visit'
        ? 'gave no price before seeing the job'
        : 'gave no price'
      : `quoted ${reading.price_type === 'from' ? 'from ' : ''}${reading.amount}${reading.amount_high ? `-${reading.amount_high}` : ''} ${reading.currency ?? ''}${reading.price_type === 'hourly' ? ' per hour' : reading.price_type === 'per_unit' && reading.unit ? ` per ${reading.unit}` : ''}${vat}`;
  const parts = [
    price,
    ...(reading.hours
      ? [
          `${reading.hours.low === reading.hours.high ? reading.hours.low : `${reading.hours.low}-${reading.hours.high}`} hours`,
        ]
      : []),
    ...(reading.quantity
      ? [
          `${reading.quantity.value}${reading.quantity.high !== reading.quantity.value ? `–${reading.quantity.high}` : ''} ${reading.quantity.unit}`,
        ]
      : []),
    ...reading.fees.map((f) =>
      f.amount === null ? `${f.label} extra` : `${f.label} ${f.amount} ${f.currency ?? ''}`.trim(),
    ),
    ...(reading.available_from ? [`available from ${reading.available_from}`] : []),
  ];
  return `${name} ${parts.join(', ')}.`;
}

function contactOf(row: ContactRow): ConciergeContact {
  return {
    listing_id: row.listing_id,
    name: row.name,
    email: row.email,
    status: row.status === 'sending' ? 'pending' : row.status,
    message_id: row.message_id,
    sent_at: row.sent_at === null ? null : Number(row.sent_at),
    reply: row.reply
      ? {
          received_at: row.reply.received_at,
          from: row.reply.from,
          subject: row.reply.subject,
          reading: row.reading,
        }
      : null,
  };
}

export function workflowOf(row: WorkflowRow, contacts: ContactRow[]): Workflow {
  const h = row.hints;
  return {
    id: row.id,
    object: 'workflow',
    status: row.status,
    stage: row.status === 'running' ? row.stage : null,
    brief: row.brief,
    location: h.location ?? null,
    near: h.near ?? null,
    radius_km: h.radius_km ?? null,
    country: (h.country ?? null) as Workflow['country'],
    activity: h.activity ?? null,
    max_providers: h.max_providers ?? null,
    contact: row.contact,
    sender:
      row.from_address && row.sending_domain_id
        ? {
            sending_domain_id: row.sending_domain_id,
            address: row.from_address,
            name: row.from_name ?? row.from_address,
          }
        : null,
    respond_by: row.respond_by === null ? null : isoSeconds(Number(row.respond_by)),
    deadline: h.deadline ?? null,
    complexity: row.complexity,
    price: formatEur(Number(row.price_nano)),
    billed:
      row.billed_nano === null || row.billed_nano === undefined ? null : formatEur(Number(row.billed_nano)),
    currency: 'EUR',
    webhook_endpoint_id: row.webhook_endpoint_id,
    // understandings stored before `when`, `description` and `read_by` existed have none
    understanding: row.understanding
      ? {
          ...row.understanding,
          when: row.understanding.when ?? null,
          description: row.understanding.description ?? null,
          read_by: row.understanding.read_by ?? 'rules',
          dropped: row.understanding.dropped ?? [],
        }
      : null,
    shortlist: row.shortlist,
    contacts: contacts.sort((a, b) => a.position - b.position).map(contactOf),
    steps: row.steps,
    result: row.result,
    error: row.error,
    metadata: row.metadata,
    created: Number(row.created),
    started_at: row.started_at === null ? null : Number(row.started_at),
    completed_at: row.completed_at === null ? null : Number(row.completed_at),
  };
}
