// Waiting for a background response (`background: true`) through the official SDK.
import type OpenAI from 'openai';
import { until } from './client.ts';

/** The response once it is no longer queued or in progress; fails after `ms`. */
export function ended(openai: OpenAI, id: string, ms: number): Promise<OpenAI.Responses.Response> {
  return until(
    `the response ${id} to end`,
    async () => {
      const response = await openai.responses.retrieve(id);
      return response.status === 'queued' || response.status === 'in_progress' ? undefined : response;
    },
    ms,
  );
}
