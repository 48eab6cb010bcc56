// The trade of a model's brief reading checked against the brief's words (trades.ts): kept when
// the brief names it or, naming none, has words of it; else the rules' trade, the model's listed
// in `dropped` with the reason. The model's answers are written here as a model would give them;
// contract-tests/concierge-model-reading.test.ts asks a real upstream through our Responses API.
import { describe, expect, it } from 'vitest';
import { checkedUnderstanding } from './model-brief.ts';
import { BRIEFS, modelBriefAnswer, TODAY } from './testing/judged-briefs.ts';
import { understand } from './understand.ts';

const answer = (activity: string) => modelBriefAnswer({ activity });

const read = (brief: string, activity: string) =>
  checkedUnderstanding(answer(activity), brief, {}, TODAY, understand(brief, {}, null, TODAY));

describe("the trade of a model's brief reading", () => {
  it('refuses a locksmith for plumbers, and plans on the plumbers the brief asks for', () => {
    const u = read('Find three plumbers in Paris to fix a leaking pipe.', '95.29');
    expect(u.trade).toMatchObject({ activity: '43.22', term: 'plumbers' });
    expect(u.dropped).toEqual([
      { field: 'trade.activity', value: '95.29', reason: 'the brief names another trade (43.22)' },
    ]);
    // naming no trade, the brief's words are the job's: a leaking pipe is no demolition
    expect(read('Un tuyau fuit sous l’évier de la cuisine à Paris.', '43.11').dropped).toEqual([
      { field: 'trade.activity', value: '43.11', reason: 'no word of the brief is of that trade' },
    ]);
  });

  it('keeps a trade the brief supports where the rules read another', () => {
    // the rules read "flat" as an estate agent's; "rewired" is a form of the electricians' "rewiring"
    const brief = 'We need our flat rewired in Lyon next week, three quotes please.';
    expect(understand(brief, {}, null, TODAY).trade?.activity).toBe('68.31');
    expect(read(brief, '43.21')).toMatchObject({ trade: { activity: '43.21' }, dropped: [] });
    // a class with words of its own (a bookshop, not the fashion concept's boutique)
    expect(read('Cerchiamo una libreria a Milano per un ordine di libri.', '47.61')).toMatchObject({
      trade: { activity: '47.61', term: 'bookshops' },
      dropped: [],
    });
  });

  it('in every language of the judged briefs: keeps the right trade, refuses one the brief does not support', () => {
    for (const judged of BRIEFS) {
      const right = read(judged.brief, judged.activity);
      expect(right.trade?.activity, judged.brief).toBe(judged.activity);
      expect(right.dropped, judged.brief).toEqual([]);
      const wrong = ['86.23', '56.10', '95.29'].find((c) => !c.startsWith(judged.activity))!;
      const refused = read(judged.brief, wrong);
      expect(refused.trade?.activity, judged.brief).toBe(
        understand(judged.brief, {}, null, TODAY).trade?.activity,
      );
      expect(
        refused.dropped.map((d) => [d.field, d.value]),
        judged.brief,
      ).toEqual([['trade.activity', wrong]]);
    }
  });

  it('holds in trades and languages beyond the judged set', () => {
    const cases: [string, string, string][] = [
      ['Busco un cerrajero en Madrid, he perdido las llaves.', '95.29', '43.22'],
      ['Szukamy trzech hydraulików w Krakowie do naprawy kranu.', '43.22', '80.20'],
      ['Wij zoeken een schilder in Utrecht om de woonkamer te schilderen.', '43.34', '43.22'],
      ['Unsere Gastherme macht Geräusche und es gibt kein Warmwasser, Wien.', '43.22', '43.21'],
      ['Procuro um dentista em Lisboa, tenho dor de dentes.', '86.23', '43.22'],
      ['Il nostro giardino ha bisogno di potatura, a Torino.', '81.30', '43.11'],
    ];
    for (const [brief, right, wrong] of cases) {
      expect(read(brief, right), brief).toMatchObject({ trade: { activity: right }, dropped: [] });
      expect(
        read(brief, wrong).dropped.map((d) => d.field),
        brief,
      ).toEqual(['trade.activity']);
    }
  });
});
