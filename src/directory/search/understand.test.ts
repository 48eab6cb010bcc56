// Reading places out of q (understand.ts) over the real gazetteer, in the directory's languages,
// and the names of places (data/place-names.ts) and districts (data/gazetteer.ts).
import { describe, expect, it } from 'vitest';
import { gazetteer, municipalityOf } from '../data/gazetteer.ts';
import { cityNamed, nearestNames } from '../data/place-names.ts';
import { editDistance, typosAllowed } from '../keywords/distance.ts';
import { nearWords, placeInQuery } from './understand.ts';

const none = { isListingName: () => false };
const read = (q: string) => {
  const r = placeInQuery(q, none);
  return r && { place: r.place.name, country: r.place.country, text: r.text, matched: r.matched };
};

describe('places in q', () => {
  it.each([
    ['plumber in Berlin', 'Berlin', 'DE', 'plumber'],
    ['Klempner Berlin', 'Berlin', 'DE', 'Klempner'],
    ['Zahnarzt München', 'München', 'DE', 'Zahnarzt'],
    ['Zahnarzt in Hamburg', 'Hamburg', 'DE', 'Zahnarzt'],
    ['dentist in Munich', 'München', 'DE', 'dentist'],
    ['dentiste à Paris', 'Paris', 'FR', 'dentiste'],
    ['plombier près de Lyon', 'Lyon', 'FR', 'plombier'],
    ['fontanero en Madrid', 'Madrid', 'ES', 'fontanero'],
    ['idraulico a Milano', 'Milano', 'IT', 'idraulico'],
    ['idraulico vicino a Roma', 'Roma', 'IT', 'idraulico'],
    ['loodgieter in Amsterdam', 'Amsterdam', 'NL', 'loodgieter'],
    ['bakker bij Utrecht', 'Utrecht', 'NL', 'bakker'],
    ['hydraulik w Warszawie', 'Warszawa', 'PL', 'hydraulik'],
    ['hotel w Bukareszcie', 'București', 'RO', 'hotel'],
    ['dentysta Kraków', 'Kraków', 'PL', 'dentysta'],
    ['canalizador em Lisboa', 'Lisboa', 'PT', 'canalizador'],
    ['canalizador Lisboa', 'Lisboa', 'PT', 'canalizador'],
    ['dentista no Porto', 'Porto', 'PT', 'dentista'],
    ['eletricista perto do Porto', 'Porto', 'PT', 'eletricista'],
    ['cabeleireiro na Amadora', 'Amadora', 'PT', 'cabeleireiro'],
    ['padaria nos arredores de Braga', 'Braga', 'PT', 'padaria'],
    ['farmácia em Varsóvia', 'Warszawa', 'PL', 'farmácia'],
    ['canalizador em Munique', 'München', 'DE', 'canalizador'],
    ['oficina automóvel em Colónia', 'Köln', 'DE', 'oficina automóvel'],
    ['plumber Lisbon', 'Lisboa', 'PT', 'plumber'],
    ['electrician in Brussels', 'Bruxelles', 'BE', 'electrician'],
    ['restaurant Bruxelles', 'Bruxelles', 'BE', 'restaurant'],
    ['Warsaw hairdresser', 'Warszawa', 'PL', 'hairdresser'],
    ['Restaurant Essen', 'Essen', 'DE', 'Restaurant'],
    ['Klempner in Tegel', 'Tegel', 'DE', 'Klempner'],
    ['dentist in Paris, France', 'Paris', 'FR', 'dentist'],
    ['plumber Berlin Germany', 'Berlin', 'DE', 'plumber'],
    ['Zahnarzt in München, Deutschland', 'München', 'DE', 'Zahnarzt'],
    ['Friseur Wien 1070', 'Wien', 'AT', 'Friseur'],
    ['Klempner in der Nähe von Berlin', 'Berlin', 'DE', 'Klempner'],
    ['Hotel Berlin Mitte', 'Mitte', 'DE', 'Hotel'],
    ['plumber in Berlin Mitte', 'Mitte', 'DE', 'plumber'],
  ])('"%s" is %s (%s) and "%s"', (q, place, country, text) => {
    expect(read(q)).toMatchObject({ place, country, text });
  });

  it('leaves trades, companies and words that are no place', () => {
    expect(read('plumber')).toBeUndefined();
    expect(read('my kitchen pipe is leaking')).toBeUndefined();
    expect(read('Essen bestellen')).toBeUndefined(); // a trade's word, nothing else naming a trade
    expect(read('Berliner Bäckerei')).toBeUndefined(); // an adjective, not the place
  });

  it('leaves a name that makes a trade phrase with the word beside it, unless introduced', () => {
    // "salon" is Salon-de-Provence (45,000 people) standing bare at the end
    expect(read('hair salon')).toBeUndefined();
    expect(read('beauty salon')).toBeUndefined();
    expect(read('hair salon in Salon-de-Provence')).toMatchObject({
      place: 'Salon-de-Provence',
      text: 'hair salon',
    });
    expect(read('coiffeur à Salon-de-Provence')).toMatchObject({
      place: 'Salon-de-Provence',
      text: 'coiffeur',
    });
    expect(read('hair salon Berlin')).toMatchObject({ place: 'Berlin', text: 'hair salon' });
  });

  it('leaves companies named so elsewhere', () => {
    // a listing elsewhere named so: the text names the company
    const paris = placeInQuery('Paris Bar', { isListingName: (w) => w.join(' ') === 'paris bar' });
    expect(paris).toBeUndefined();
    // the last place named wins, the company's name stays text
    const both = placeInQuery('Paris Bar Berlin', { isListingName: (w) => w.join(' ') === 'paris bar' });
    expect(both && { place: both.place.name, text: both.text }).toEqual({
      place: 'Berlin',
      text: 'Paris Bar',
    });
  });

  it('words after "near" that name no place are left for the streets', () => {
    expect(nearWords('dentist near Marienplatz')).toEqual({
      words: ['marienplatz'],
      matched: 'near Marienplatz',
      text: 'dentist',
    });
    expect(nearWords('Zahnarzt nahe Sendlinger Straße')?.words).toEqual(['sendlinger', 'strasse']);
    expect(nearWords('dentist in Berlin')).toBeUndefined();
  });

  it('a place alone leaves nothing to search, and radii follow the size', () => {
    const berlin = placeInQuery('Berlin', none)!;
    expect(berlin.text).toBe('');
    expect(berlin.radiusKm).toBeGreaterThan(15);
    expect(placeInQuery('Bäckerei in Tegel', none)!.radiusKm).toBe(3);
  });
});

describe('names of places', () => {
  it.each([
    ['Munich', 'München'],
    ['München', 'München'],
    ['munchen', 'München'],
    ['Monaco di Baviera', 'München'],
    ['Warsaw', 'Warszawa'],
    ['Warszawa', 'Warszawa'],
    ['Lisbon', 'Lisboa'],
    ['Lisboa', 'Lisboa'],
    ['Brussels', 'Bruxelles'],
    ['Bruxelles', 'Bruxelles'],
    ['Brussel', 'Bruxelles'],
    ['Cologne', 'Köln'],
    ['Vienna', 'Wien'],
  ])('city %s is %s', (name, local) => {
    expect(cityNamed(name)?.place.name).toBe(local);
  });

  it('a municipality takes in its districts; a district is itself', () => {
    const berlin = cityNamed('Berlin')!;
    expect(berlin.cities).toEqual(expect.arrayContaining(['berlin', 'tegel', 'lankwitz', 'kopenick']));
    const tegel = cityNamed('Tegel')!;
    expect(tegel.place.featureCode).toBe('PPLX');
    expect(municipalityOf(tegel.place).name).toBe('Berlin');
    expect(tegel.districts).toContain('tegel');
  });

  it('districts of GeoNames belong to their municipality', () => {
    const named = (name: string, country: string) =>
      gazetteer().find((p) => p.name === name && p.country === country)!;
    expect(municipalityOf(named('Kabaty', 'PL')).name).toBe('Warszawa');
    expect(municipalityOf(named('Vomero', 'IT')).name).toBe('Napoli');
    expect(municipalityOf(named('Floridsdorf', 'AT')).name).toBe('Wien');
    expect(municipalityOf(named('Berlin', 'DE')).name).toBe('Berlin');
  });

  it('an unknown name suggests the nearest', () => {
    expect(cityNamed('Munchn')).toBeUndefined();
    expect(nearestNames('Munchn').map((p) => p.name)).toContain('München');
    expect(nearestNames('Berln')[0]!.name).toBe('Berlin');
  });
});

describe('typos', () => {
  it('counts an edit, a swap of neighbours, and gives up past the limit', () => {
    expect(editDistance('plumbr', 'plumber', 2)).toBe(1);
    expect(editDistance('restuarant', 'restaurant', 2)).toBe(1);
    expect(editDistance('bakcerei', 'backerei', 2)).toBe(1);
    expect(editDistance('klempner', 'klempner', 2)).toBe(0);
    expect(editDistance('abc', 'xyzxyz', 2)).toBe(3);
    expect(editDistance('kitten', 'sitting', 3)).toBe(3);
  });

  it('allows one typo from 5 letters and two from 9', () => {
    expect([4, 5, 8, 9, 12].map(typosAllowed)).toEqual([0, 1, 1, 2, 2]);
  });
});
