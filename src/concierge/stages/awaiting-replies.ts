// Awaiting replies: a job due at `respond_by` ends the wait; another, sent early once every
// provider contacted has answered or bounced (../answers.ts), ends it sooner. Answers that come
// in meanwhile are stored and read as they arrive, outside this stage.
import { isoSeconds, nowSeconds } from '../../platform/clock.ts';
import { step } from '../view.ts';
import type { Stage } from './stage.ts';

export const awaitReplies: Stage = async (row, run) => {
  const early = run.job.early === true;
  if (early && (await run.store.awaited(row.id)) > 0) return null;
  return {
    to: 'comparing',
    steps: [
      step(
        'awaiting_replies',
        'note',
        early
          ? 'Every provider contacted has answered.'
          : `Stopped waiting at ${isoSeconds(Number(row.respond_by ?? nowSeconds()))}.`,
      ),
    ],
  };
};
