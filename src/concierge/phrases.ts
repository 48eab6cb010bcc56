// The comparison's words in each language of the brief: the summary, the pros and cons, the
// assumptions of a total and why a total cannot be known. One table; numbers, money, percents and
// dates are written as the language writes them (`6.480,00 €`, `19 %`, `2. Dezember 2026`), dates as
// the requests for quotes write them.
import { dayText, LOCALES as LOCALE, momentText } from './rfq.ts';
import type { Language } from './understand.ts';

/** Money as the language writes it: `6.480,00 €` (de), `€6,480.00` (en). */
export function money(language: Language, amount: string, currency: string): string {
  try {
    return new Intl.NumberFormat(LOCALE[language], { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${number(language, Number(amount), 2)} ${currency}`;
  }
}

/** A range of money, or one amount when there is no upper end. */
export function moneyRange(language: Language, low: string, high: string | null, currency: string): string {
  return high === null
    ? money(language, low, currency)
    : `${money(language, low, currency)}–${money(language, high, currency)}`;
}

/** A plain number: `4,6` (de), `4.6` (en); `digits` fixes the decimals. */
export function number(language: Language, n: number, digits?: number): string {
  return new Intl.NumberFormat(LOCALE[language], {
    maximumFractionDigits: digits ?? 2,
    ...(digits === undefined ? {} : { minimumFractionDigits: digits }),
  }).format(n);
}

/** An exchange rate as a decimal string, every decimal it has: `0,2351` (de), `0.2351` (en). */
export function rateText(language: Language, rate: string): string {
  return new Intl.NumberFormat(LOCALE[language], { maximumFractionDigits: 8 }).format(Number(rate));
}

/** A rate in percent as a decimal string (`19`, `5.5`): `19 %` (de), `19%` (en). */
export function percent(language: Language, rate: string): string {
  return new Intl.NumberFormat(LOCALE[language], { style: 'percent', maximumFractionDigits: 2 }).format(
    Number(rate) / 100,
  );
}

/** A day (YYYY-MM-DD) as the letters to providers write it, French and Italian firsts as written: `1er décembre 2026`. */
export function day(language: Language, iso: string): string {
  if (!/^\d{4}-\d{2}-\d{2}/.test(iso)) return iso;
  const text = dayText(iso.slice(0, 10), language);
  if (language === 'fr') return text.replace(/^1 /, '1er ');
  if (language === 'it') return text.replace(/^1 /, '1º ');
  return text;
}

/** A moment (RFC 3339) as the letters to providers write it, in the time zone of the brief's country. */
export function moment(language: Language, rfc3339: string, country: string | null): string {
  const at = new Date(rfc3339);
  return Number.isNaN(at.getTime()) ? rfc3339 : momentText(at, language, country);
}

/** The name of a country (ISO 3166-1 alpha-2) in the language. */
export function countryName(language: Language, country: string): string {
  return new Intl.DisplayNames([LOCALE[language]], { type: 'region' }).of(country) ?? country;
}

const plural = (n: number, forms: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }) =>
  forms[new Intl.PluralRules('pl-PL').select(n)] ?? forms.other;

// Italian elides `dal` before a vowel: `dall'8 dicembre`, `dall'11 dicembre`.
const itFrom = (d: string) => (/^(8|11) /.test(d) ? `dall’${d}` : `dal ${d}`);
// French elides `de` before a vowel: `d'Annecy`.
const frOf = (place: string) =>
  /^[aeiouyàâéèêîïôûAEIOUYÀÂÉÈÊÎÏÔÛ]/.test(place) ? `d’${place}` : `de ${place}`;

export interface Phrases {
  // the summary
  quoted: (quoted: number, asked: number) => string;
  compared: (n: number) => string;
  recommend: string;
  /** What follows a label: `: `, and ` : ` in French. */
  colon: string;
  total: string;
  inclVat: string;
  from: (day: string) => string;
  rating: (r: string, n: number) => string;
  none: string;
  silent: string;
  fewer: (asked: number, compared: number) => string;
  // pros and cons; money comes formatted, `total` with its "incl. VAT"
  lowest: (total: string) => string;
  totalIs: (total: string) => string;
  dearer: (by: string, total: string, lowest: string) => string;
  otherCurrency: (currency: string) => string;
  /** A converted total: what it comes to, at what rate of one unit of the quote's currency, of what day. */
  converted: (total: string, rate: string, currency: string, date: string | null) => string;
  unknownTotal: (why: string) => string;
  unsaid: string;
  includes: (what: string) => string;
  excludes: (what: string) => string;
  estimate: string;
  rated: (r: string, n: number) => string;
  ratedOnly: (r: string, n: number) => string;
  noReviews: string;
  fewReviews: (n: number) => string;
  distance: (km: string, place: string | null) => string;
  availableBefore: (from: string, deadline: string) => string;
  availableAfter: (from: string, deadline: string) => string;
  available: (from: string) => string;
  answeredWithin: (hours: number | null) => string;
  declined: string;
  noPrice: string;
  siteVisit: string;
  noAnswerBy: (when: string) => string;
  noAnswer: string;
  claimed: string;
  usuallyAnswers: (hours: number) => string;
  providers: string;
  within: (km: number, place: string) => string;
  foundOnly: (asked: number, found: number, what: string) => string;
  notWritten: (asked: number, unwritten: number, shortlisted: number) => string;
  // the assumptions of a total and why one cannot be known
  rangeUpper: string;
  hoursStated: (quote: string) => string;
  quantityStated: (quote: string) => string;
  estimateSaid: string;
  feeNet: (label: string) => string;
  vatStated: (rate: string) => string;
  vatAssumed: (rate: string, country: string | null, quote: string | null) => string;
  vatUnknown: string;
  exempt: (quote: string | null) => string;
  rateWithoutHours: (rate: string) => string;
  fromOnly: (amount: string) => string;
  perUnit: (amount: string, unit: string | null) => string;
  feeWithoutPrice: (label: string) => string;
  feeCurrency: (label: string, currency: string | null) => string;
  noRate: (country: string | null) => string;
  // the labels of a breakdown
  vatLabel: (rate: string) => string;
  perHour: (rate: string, hours: string) => string;
  perUnitTimes: (price: string, unit: string, quantity: string) => string;
}

export const PHRASES: Record<Language, Phrases> = {
  en: {
    quoted: (q, a) => `${q} of ${a} providers sent a quote.`,
    compared: (n) => `Compared ${n} provider${n === 1 ? '' : 's'} on the directory's data.`,
    recommend: 'Recommended',
    colon: ': ',
    total: 'total',
    inclVat: 'incl. VAT',
    from: (d) => `available from ${d}`,
    rating: (r, n) => `rated ${r} from ${n} reviews`,
    none: 'No provider fits the brief well enough to recommend.',
    silent: 'No answer',
    fewer: (a, n) => `${a} were asked for; only ${n} could be compared.`,
    lowest: (t) => `Lowest total: ${t}`,
    totalIs: (t) => `Total ${t}`,
    dearer: (by, t, l) => `${by} dearer than the lowest total (${t} against ${l} incl. VAT)`,
    otherCurrency: (c) => `Quoted in ${c}, not compared by price`,
    converted: (t, r, c, d) => `${t} in the comparison: 1 ${c} at €${r}${d ? ` (rate of ${d})` : ''}`,
    unknownTotal: (why) => `Total unknown: ${why}`,
    unsaid: 'the reply does not say',
    includes: (w) => `Includes ${w}`,
    excludes: (w) => `Excludes ${w}`,
    estimate: 'The price is an estimate',
    rated: (r, n) => `Rated ${r} from ${n} reviews`,
    ratedOnly: (r, n) => `Rated only ${r} from ${n} reviews`,
    noReviews: 'No reviews yet',
    fewReviews: (n) => `Only ${n} review${n === 1 ? '' : 's'}`,
    distance: (km, p) => (p ? `${km} km from ${p}` : `${km} km away`),
    availableBefore: (f, d) => `Available from ${f}, before the deadline (${d})`,
    availableAfter: (f, d) => `Available only from ${f}, after the deadline (${d})`,
    available: (f) => `Available from ${f}`,
    answeredWithin: (h) => `Answered within ${h === null ? 'the hour' : `${h} hours`}`,
    declined: 'Declined the job',
    noPrice: 'Answered without a price',
    siteVisit: 'Wants to see the job before pricing it',
    noAnswerBy: (w) => `Did not answer by ${w}`,
    noAnswer: 'Did not answer',
    claimed: 'Claimed listing: the company keeps its profile up to date',
    usuallyAnswers: (h) => `Usually answers within ${h} hour${h === 1 ? '' : 's'}`,
    providers: 'providers',
    within: (km, p) => ` within ${km} km of ${p}`,
    foundOnly: (a, f, w) => `Asked for ${a}; the search found only ${f} (${w})`,
    notWritten: (a, u, s) => `Asked for ${a}; ${u} of the ${s} shortlisted could not be written to`,
    rangeUpper: 'A range: ranked on its upper end',
    hoursStated: (q) => `The hours the reply states: "${q}"`,
    quantityStated: (q) => `The quantity the reply states: "${q}"`,
    estimateSaid: 'The reply calls the price an estimate',
    feeNet: (l) => `The ${l} taken as before VAT, like the price`,
    vatStated: (r) => `VAT ${r} added, at the rate the reply states`,
    vatAssumed: (r, c, q) =>
      `VAT ${r} added${c ? ` (the standard rate in ${c})` : ''}: the reply says "${q ?? 'before VAT'}" without a rate`,
    vatUnknown:
      'The reply does not say whether VAT is included: taken as included, as prices to consumers in the EU must be',
    exempt: (q) => `No VAT: "${q ?? 'exempt'}"`,
    rateWithoutHours: (r) => `A rate of ${r} per hour, without the hours of work`,
    fromOnly: (a) => `Only a starting price: from ${a}`,
    perUnit: (a, u) => `A price of ${a} per ${u ?? 'unit'}, without the quantity`,
    feeWithoutPrice: (l) => `${l} extra, without a price`,
    feeCurrency: (l, c) => `${l} in ${c ?? 'another currency'}`,
    noRate: (c) => `Prices before VAT, and no VAT rate is known for ${c ?? 'the provider'}`,
    vatLabel: (r) => `VAT ${r}`,
    perHour: (r, h) => `${r} per hour × ${h} hours`,
    perUnitTimes: (r, u, q) => `${r} per ${u} × ${q} ${u}`,
  },
  de: {
    quoted: (q, a) => `${q} von ${a} Anbietern haben ein Angebot geschickt.`,
    compared: (n) => `${n} Anbieter anhand der Verzeichnisdaten verglichen.`,
    recommend: 'Empfehlung',
    colon: ': ',
    total: 'Gesamtpreis',
    inclVat: 'inkl. MwSt.',
    from: (d) => `verfügbar ab ${d}`,
    rating: (r, n) => `Bewertung ${r} aus ${n} Bewertungen`,
    none: 'Kein Anbieter passt gut genug, um ihn zu empfehlen.',
    silent: 'Keine Antwort',
    fewer: (a, n) => `${a} Anbieter waren gewünscht; nur ${n} konnten verglichen werden.`,
    lowest: (t) => `Günstigster Gesamtpreis: ${t}`,
    totalIs: (t) => `Gesamtpreis ${t}`,
    dearer: (by, t, l) => `${by} teurer als der günstigste Gesamtpreis (${t} gegenüber ${l} inkl. MwSt.)`,
    otherCurrency: (c) => `Angebot in ${c}, beim Preis nicht verglichen`,
    converted: (t, r, c, d) => `${t} im Vergleich: 1 ${c} zu ${r} €${d ? ` (Kurs vom ${d})` : ''}`,
    unknownTotal: (why) => `Gesamtpreis unbekannt: ${why}`,
    unsaid: 'die Antwort nennt ihn nicht',
    includes: (w) => `Im Preis enthalten: ${w}`,
    excludes: (w) => `Nicht im Preis enthalten: ${w}`,
    estimate: 'Der Preis ist nur geschätzt',
    rated: (r, n) => `Bewertung ${r} aus ${n} Bewertungen`,
    ratedOnly: (r, n) => `Bewertung nur ${r} aus ${n} Bewertungen`,
    noReviews: 'Noch keine Bewertungen',
    fewReviews: (n) => `Nur ${n} Bewertung${n === 1 ? '' : 'en'}`,
    distance: (km, p) => (p ? `${km} km von ${p} entfernt` : `${km} km entfernt`),
    availableBefore: (f, d) => `Verfügbar ab ${f}, vor der Frist (${d})`,
    availableAfter: (f, d) => `Erst ab ${f} verfügbar, nach der Frist (${d})`,
    available: (f) => `Verfügbar ab ${f}`,
    answeredWithin: (h) => `Antwort innerhalb ${h === null ? 'einer Stunde' : `von ${h} Stunden`}`,
    declined: 'Hat den Auftrag abgelehnt',
    noPrice: 'Hat ohne Preis geantwortet',
    siteVisit: 'Will die Arbeit vor Ort sehen, bevor er einen Preis nennt',
    noAnswerBy: (w) => `Keine Antwort bis ${w}`,
    noAnswer: 'Keine Antwort',
    claimed: 'Vom Unternehmen gepflegter Eintrag: das Profil ist aktuell',
    usuallyAnswers: (h) => `Antwortet meist innerhalb ${h === 1 ? 'einer Stunde' : `von ${h} Stunden`}`,
    providers: 'Anbieter',
    within: (km, p) => ` im Umkreis von ${km} km um ${p}`,
    foundOnly: (a, f, w) => `${a} Anbieter gewünscht; die Suche hat nur ${f} gefunden (${w})`,
    notWritten: (a, u, s) =>
      `${a} Anbieter gewünscht; ${u} der ${s} ausgewählten konnten nicht angeschrieben werden`,
    rangeUpper: 'Eine Preisspanne: gewertet wird ihr oberes Ende',
    hoursStated: (q) => `Die Stunden laut Antwort: „${q}“`,
    quantityStated: (q) => `Die Menge laut Antwort: „${q}“`,
    estimateSaid: 'Die Antwort nennt den Preis eine Schätzung',
    feeNet: (l) => `${l} wie der Preis als Nettobetrag (zzgl. MwSt.) gerechnet`,
    vatStated: (r) => `MwSt. ${r} hinzugerechnet, zum Satz laut Antwort`,
    vatAssumed: (r, c, q) =>
      `MwSt. ${r} hinzugerechnet${c ? ` (Regelsatz ${c})` : ''}: die Antwort nennt „${q ?? 'zzgl. MwSt.'}“ ohne Steuersatz`,
    vatUnknown:
      'Die Antwort sagt nicht, ob die MwSt. enthalten ist: als enthalten gerechnet, wie es Preise für Verbraucher in der EU sein müssen',
    exempt: (q) => `Keine MwSt.: „${q ?? 'steuerfrei'}“`,
    rateWithoutHours: (r) => `Ein Stundensatz von ${r}, ohne die Zahl der Stunden`,
    fromOnly: (a) => `Nur ein Ab-Preis: ab ${a}`,
    perUnit: (a, u) => `Ein Preis von ${a} pro ${u ?? 'Einheit'}, ohne die Menge`,
    feeWithoutPrice: (l) => `${l} kommt hinzu, ohne Preisangabe`,
    feeCurrency: (l, c) => `${l} in ${c ?? 'einer anderen Währung'}`,
    noRate: (c) => `Preise zzgl. MwSt., und für ${c ?? 'das Land des Anbieters'} ist kein Steuersatz bekannt`,
    vatLabel: (r) => `MwSt. ${r}`,
    perHour: (r, h) => `${r} pro Stunde × ${h} Std.`,
    perUnitTimes: (r, u, q) => `${r} pro ${u} × ${q} ${u}`,
  },
  fr: {
    quoted: (q, a) => `${q} prestataires sur ${a} ont envoyé un devis.`,
    compared: (n) => `${n} prestataires comparés sur les données de l'annuaire.`,
    recommend: 'Recommandation',
    colon: ' : ',
    total: 'total',
    inclVat: 'TTC',
    from: (d) => `disponible à partir du ${d}`,
    rating: (r, n) => `note ${r} sur ${n} avis`,
    none: 'Aucun prestataire ne correspond assez bien pour être recommandé.',
    silent: 'Sans réponse',
    fewer: (a, n) => `${a} prestataires demandés ; seuls ${n} ont pu être comparés.`,
    lowest: (t) => `Total le plus bas : ${t}`,
    totalIs: (t) => `Total : ${t}`,
    dearer: (by, t, l) => `${by} de plus que le total le plus bas (${t} contre ${l} TTC)`,
    otherCurrency: (c) => `Devis en ${c}, prix non comparé`,
    converted: (t, r, c, d) => `${t} dans la comparaison : 1 ${c} à ${r} €${d ? ` (cours du ${d})` : ''}`,
    unknownTotal: (why) => `Total inconnu : ${why}`,
    unsaid: 'la réponse ne le précise pas',
    includes: (w) => `Comprend : ${w}`,
    excludes: (w) => `Non compris : ${w}`,
    estimate: 'Le prix est une estimation',
    rated: (r, n) => `Note ${r} sur ${n} avis`,
    ratedOnly: (r, n) => `Note de seulement ${r} sur ${n} avis`,
    noReviews: 'Aucun avis pour l’instant',
    fewReviews: (n) => `Seulement ${n} avis`,
    distance: (km, p) => (p ? `À ${km} km ${frOf(p)}` : `À ${km} km`),
    availableBefore: (f, d) => `Disponible à partir du ${f}, avant l’échéance (${d})`,
    availableAfter: (f, d) => `Disponible seulement à partir du ${f}, après l’échéance (${d})`,
    available: (f) => `Disponible à partir du ${f}`,
    answeredWithin: (h) => `A répondu en moins ${h === null ? 'd’une heure' : `de ${h} heures`}`,
    declined: 'A décliné la demande',
    noPrice: 'A répondu sans donner de prix',
    siteVisit: 'Souhaite voir le chantier avant de chiffrer',
    noAnswerBy: (w) => `Aucune réponse au ${w}`,
    noAnswer: 'Aucune réponse',
    claimed: 'Fiche gérée par l’entreprise : le profil est tenu à jour',
    usuallyAnswers: (h) => `Répond en général en moins ${h === 1 ? 'd’une heure' : `de ${h} heures`}`,
    providers: 'prestataires',
    within: (km, p) => ` dans un rayon de ${km} km autour ${frOf(p)}`,
    foundOnly: (a, f, w) => `${a} demandés ; la recherche n’en a trouvé que ${f} (${w})`,
    notWritten: (a, u, s) => `${a} demandés ; ${u} des ${s} présélectionnés n’ont pas pu être contactés`,
    rangeUpper: 'Une fourchette : classée sur sa borne haute',
    hoursStated: (q) => `Les heures indiquées dans la réponse : « ${q} »`,
    quantityStated: (q) => `La quantité indiquée dans la réponse : « ${q} »`,
    estimateSaid: 'La réponse présente le prix comme une estimation',
    feeNet: (l) => `« ${l} » compté HT, comme le prix`,
    vatStated: (r) => `TVA de ${r} ajoutée, au taux indiqué dans la réponse`,
    vatAssumed: (r, c, q) =>
      `TVA de ${r} ajoutée${c ? ` (taux normal, ${c})` : ''} : la réponse indique « ${q ?? 'HT'} » sans taux`,
    vatUnknown:
      'La réponse ne dit pas si la TVA est comprise : prix compté TTC, comme doivent l’être les prix aux consommateurs dans l’UE',
    exempt: (q) => `Pas de TVA : « ${q ?? 'exonéré'} »`,
    rateWithoutHours: (r) => `Un taux de ${r} de l’heure, sans le nombre d’heures`,
    fromOnly: (a) => `Seulement un prix de départ : à partir de ${a}`,
    perUnit: (a, u) => `Un prix de ${a} par ${u ?? 'unité'}, sans la quantité`,
    feeWithoutPrice: (l) => `${l} en sus, sans prix`,
    feeCurrency: (l, c) => `${l} en ${c ?? 'une autre devise'}`,
    noRate: (c) => `Prix HT, et aucun taux de TVA connu pour ${c ?? 'le pays du prestataire'}`,
    vatLabel: (r) => `TVA ${r}`,
    perHour: (r, h) => `${r} de l’heure × ${h} h`,
    perUnitTimes: (r, u, q) => `${r} par ${u} × ${q} ${u}`,
  },
  es: {
    quoted: (q, a) => `${q} de ${a} proveedores enviaron un presupuesto.`,
    compared: (n) => `${n} proveedores comparados con los datos del directorio.`,
    recommend: 'Recomendación',
    colon: ': ',
    total: 'total',
    inclVat: 'IVA incluido',
    from: (d) => `disponible desde el ${d}`,
    rating: (r, n) => `valoración ${r} de ${n} opiniones`,
    none: 'Ningún proveedor encaja lo bastante para recomendarlo.',
    silent: 'Sin respuesta',
    fewer: (a, n) => `Se pidieron ${a}; solo se pudieron comparar ${n}.`,
    lowest: (t) => `Total más bajo: ${t}`,
    totalIs: (t) => `Total: ${t}`,
    dearer: (by, t, l) => `${by} más caro que el total más bajo (${t} frente a ${l}, IVA incluido)`,
    otherCurrency: (c) => `Presupuesto en ${c}, sin comparar por precio`,
    converted: (t, r, c, d) => `${t} en la comparación: 1 ${c} a ${r} €${d ? ` (cambio del ${d})` : ''}`,
    unknownTotal: (why) => `Total desconocido: ${why}`,
    unsaid: 'la respuesta no lo indica',
    includes: (w) => `Incluye ${w}`,
    excludes: (w) => `No incluye ${w}`,
    estimate: 'El precio es una estimación',
    rated: (r, n) => `Valoración ${r} de ${n} opiniones`,
    ratedOnly: (r, n) => `Valoración de solo ${r} en ${n} opiniones`,
    noReviews: 'Aún sin opiniones',
    fewReviews: (n) => `Solo ${n} ${n === 1 ? 'opinión' : 'opiniones'}`,
    distance: (km, p) => (p ? `A ${km} km de ${p}` : `A ${km} km`),
    availableBefore: (f, d) => `Disponible desde el ${f}, antes del plazo (${d})`,
    availableAfter: (f, d) => `Disponible solo desde el ${f}, después del plazo (${d})`,
    available: (f) => `Disponible desde el ${f}`,
    answeredWithin: (h) => `Respondió en menos de ${h === null ? 'una hora' : `${h} horas`}`,
    declined: 'Rechazó el trabajo',
    noPrice: 'Respondió sin dar precio',
    siteVisit: 'Quiere ver el trabajo antes de dar precio',
    noAnswerBy: (w) => `Sin respuesta antes del ${w}`,
    noAnswer: 'Sin respuesta',
    claimed: 'Ficha gestionada por la empresa: mantiene su perfil al día',
    usuallyAnswers: (h) => `Suele responder en menos de ${h === 1 ? 'una hora' : `${h} horas`}`,
    providers: 'proveedores',
    within: (km, p) => ` en un radio de ${km} km de ${p}`,
    foundOnly: (a, f, w) => `Se pidieron ${a}; la búsqueda solo encontró ${f} (${w})`,
    notWritten: (a, u, s) => `Se pidieron ${a}; no se pudo escribir a ${u} de los ${s} preseleccionados`,
    rangeUpper: 'Una horquilla de precios: se clasifica por su extremo superior',
    hoursStated: (q) => `Las horas que indica la respuesta: «${q}»`,
    quantityStated: (q) => `La cantidad que indica la respuesta: «${q}»`,
    estimateSaid: 'La respuesta presenta el precio como una estimación',
    feeNet: (l) => `«${l}» contado sin IVA, como el precio`,
    vatStated: (r) => `IVA del ${r} añadido, al tipo que indica la respuesta`,
    vatAssumed: (r, c, q) =>
      `IVA del ${r} añadido${c ? ` (tipo general en ${c})` : ''}: la respuesta dice «${q ?? 'más IVA'}» sin indicar el tipo`,
    vatUnknown:
      'La respuesta no dice si el IVA está incluido: se cuenta como incluido, como deben estarlo los precios a consumidores en la UE',
    exempt: (q) => `Sin IVA: «${q ?? 'exento'}»`,
    rateWithoutHours: (r) => `Una tarifa de ${r} por hora, sin las horas de trabajo`,
    fromOnly: (a) => `Solo un precio inicial: desde ${a}`,
    perUnit: (a, u) => `Un precio de ${a} por ${u ?? 'unidad'}, sin la cantidad`,
    feeWithoutPrice: (l) => `${l} aparte, sin precio`,
    feeCurrency: (l, c) => `${l} en ${c ?? 'otra moneda'}`,
    noRate: (c) => `Precios sin IVA, y no se conoce el tipo de IVA de ${c ?? 'el país del proveedor'}`,
    vatLabel: (r) => `IVA ${r}`,
    perHour: (r, h) => `${r} por hora × ${h} h`,
    perUnitTimes: (r, u, q) => `${r} por ${u} × ${q} ${u}`,
  },
  it: {
    quoted: (q, a) => `${q} fornitori su ${a} hanno inviato un preventivo.`,
    compared: (n) => `${n} fornitori confrontati sui dati dell'elenco.`,
    recommend: 'Consiglio',
    colon: ': ',
    total: 'totale',
    inclVat: 'IVA inclusa',
    from: (d) => `disponibile ${itFrom(d)}`,
    rating: (r, n) => `valutazione ${r} su ${n} recensioni`,
    none: 'Nessun fornitore è abbastanza adatto da consigliare.',
    silent: 'Nessuna risposta',
    fewer: (a, n) => `Ne erano stati chiesti ${a}; solo ${n} confrontati.`,
    lowest: (t) => `Totale più basso: ${t}`,
    totalIs: (t) => `Totale: ${t}`,
    dearer: (by, t, l) => `${by} in più rispetto al totale più basso (${t} contro ${l} IVA inclusa)`,
    otherCurrency: (c) => `Preventivo in ${c}, prezzo non confrontato`,
    converted: (t, r, c, d) => `${t} nel confronto: 1 ${c} a ${r} €${d ? ` (cambio del ${d})` : ''}`,
    unknownTotal: (why) => `Totale sconosciuto: ${why}`,
    unsaid: 'la risposta non lo indica',
    includes: (w) => `Comprende ${w}`,
    excludes: (w) => `Escluso: ${w}`,
    estimate: 'Il prezzo è una stima',
    rated: (r, n) => `Valutazione ${r} su ${n} recensioni`,
    ratedOnly: (r, n) => `Valutazione di appena ${r} su ${n} recensioni`,
    noReviews: 'Ancora nessuna recensione',
    fewReviews: (n) => `Solo ${n} ${n === 1 ? 'recensione' : 'recensioni'}`,
    distance: (km, p) => (p ? `A ${km} km da ${p}` : `A ${km} km`),
    availableBefore: (f, d) => `Disponibile ${itFrom(f)}, prima della scadenza (${d})`,
    availableAfter: (f, d) => `Disponibile solo ${itFrom(f)}, dopo la scadenza (${d})`,
    available: (f) => `Disponibile ${itFrom(f)}`,
    answeredWithin: (h) => `Ha risposto entro ${h === null ? 'un’ora' : `${h} ore`}`,
    declined: 'Ha rifiutato il lavoro',
    noPrice: 'Ha risposto senza un prezzo',
    siteVisit: 'Vuole vedere il lavoro prima di fare un prezzo',
    noAnswerBy: (w) => `Nessuna risposta entro la scadenza (${w})`,
    noAnswer: 'Nessuna risposta',
    claimed: 'Scheda gestita dall’azienda: il profilo è aggiornato',
    usuallyAnswers: (h) => `Di solito risponde entro ${h === 1 ? 'un’ora' : `${h} ore`}`,
    providers: 'fornitori',
    within: (km, p) => ` entro ${km} km da ${p}`,
    foundOnly: (a, f, w) => `Ne erano stati chiesti ${a}; la ricerca ne ha trovati solo ${f} (${w})`,
    notWritten: (a, u, s) =>
      `Ne erano stati chiesti ${a}; non è stato possibile scrivere a ${u} dei ${s} selezionati`,
    rangeUpper: 'Una forbice di prezzo: classificata sul valore più alto',
    hoursStated: (q) => `Le ore indicate nella risposta: «${q}»`,
    quantityStated: (q) => `La quantità indicata nella risposta: «${q}»`,
    estimateSaid: 'La risposta indica il prezzo come una stima',
    feeNet: (l) => `«${l}» considerato al netto dell’IVA, come il prezzo`,
    vatStated: (r) => `IVA al ${r} aggiunta, all’aliquota indicata nella risposta`,
    vatAssumed: (r, c, q) =>
      `IVA al ${r} aggiunta${c ? ` (aliquota ordinaria, ${c})` : ''}: la risposta dice «${q ?? '+ IVA'}» senza aliquota`,
    vatUnknown:
      'La risposta non dice se l’IVA è inclusa: considerata inclusa, come devono esserlo i prezzi ai consumatori nell’UE',
    exempt: (q) => `Senza IVA: «${q ?? 'esente'}»`,
    rateWithoutHours: (r) => `Una tariffa di ${r} all’ora, senza le ore di lavoro`,
    fromOnly: (a) => `Solo un prezzo di partenza: a partire da ${a}`,
    perUnit: (a, u) => `Un prezzo di ${a} per ${u ?? 'unità'}, senza la quantità`,
    feeWithoutPrice: (l) => `${l} a parte, senza prezzo`,
    feeCurrency: (l, c) => `${l} in ${c ?? 'un’altra valuta'}`,
    noRate: (c) =>
      `Prezzi al netto dell’IVA, e nessuna aliquota IVA nota per ${c ?? 'il paese del fornitore'}`,
    vatLabel: (r) => `IVA ${r}`,
    perHour: (r, h) => `${r} all’ora × ${h} h`,
    perUnitTimes: (r, u, q) => `${r} per ${u} × ${q} ${u}`,
  },
  nl: {
    quoted: (q, a) => `${q} van de ${a} aanbieders stuurden een offerte.`,
    compared: (n) => `${n} aanbieders vergeleken op de gegevens van de gids.`,
    recommend: 'Aanbeveling',
    colon: ': ',
    total: 'totaal',
    inclVat: 'incl. btw',
    from: (d) => `beschikbaar vanaf ${d}`,
    rating: (r, n) => `beoordeling ${r} uit ${n} reviews`,
    none: 'Geen aanbieder past goed genoeg om aan te bevelen.',
    silent: 'Geen antwoord',
    fewer: (a, n) => `${a} gevraagd; slechts ${n} konden worden vergeleken.`,
    lowest: (t) => `Laagste totaal: ${t}`,
    totalIs: (t) => `Totaal: ${t}`,
    dearer: (by, t, l) => `${by} duurder dan het laagste totaal (${t} tegen ${l} incl. btw)`,
    otherCurrency: (c) => `Offerte in ${c}, niet op prijs vergeleken`,
    converted: (t, r, c, d) => `${t} in de vergelijking: 1 ${c} tegen € ${r}${d ? ` (koers van ${d})` : ''}`,
    unknownTotal: (why) => `Totaal onbekend: ${why}`,
    unsaid: 'het antwoord zegt het niet',
    includes: (w) => `Inclusief ${w}`,
    excludes: (w) => `Exclusief ${w}`,
    estimate: 'De prijs is een schatting',
    rated: (r, n) => `Beoordeling ${r} uit ${n} reviews`,
    ratedOnly: (r, n) => `Beoordeling slechts ${r} uit ${n} reviews`,
    noReviews: 'Nog geen reviews',
    fewReviews: (n) => `Slechts ${n} review${n === 1 ? '' : 's'}`,
    distance: (km, p) => (p ? `${km} km van ${p}` : `${km} km verderop`),
    availableBefore: (f, d) => `Beschikbaar vanaf ${f}, vóór de deadline (${d})`,
    availableAfter: (f, d) => `Pas beschikbaar vanaf ${f}, na de deadline (${d})`,
    available: (f) => `Beschikbaar vanaf ${f}`,
    answeredWithin: (h) => `Antwoordde binnen ${h === null ? 'het uur' : `${h} uur`}`,
    declined: 'Heeft de klus afgewezen',
    noPrice: 'Antwoordde zonder prijs',
    siteVisit: 'Wil de klus eerst zien voordat er een prijs komt',
    noAnswerBy: (w) => `Geen antwoord vóór ${w}`,
    noAnswer: 'Geen antwoord',
    claimed: 'Vermelding beheerd door het bedrijf: het profiel is actueel',
    usuallyAnswers: (h) => `Antwoordt meestal binnen ${h} uur`,
    providers: 'aanbieders',
    within: (km, p) => ` binnen ${km} km van ${p}`,
    foundOnly: (a, f, w) => `${a} gevraagd; de zoekopdracht vond er maar ${f} (${w})`,
    notWritten: (a, u, s) =>
      `${a} gevraagd; ${u} van de ${s} geselecteerde aanbieders konden niet worden aangeschreven`,
    rangeUpper: 'Een prijsvork: gerangschikt op de bovengrens',
    hoursStated: (q) => `De uren die het antwoord noemt: “${q}”`,
    quantityStated: (q) => `De hoeveelheid die het antwoord noemt: “${q}”`,
    estimateSaid: 'Het antwoord noemt de prijs een schatting',
    feeNet: (l) => `“${l}” net als de prijs als exclusief btw gerekend`,
    vatStated: (r) => `${r} btw bijgeteld, tegen het tarief uit het antwoord`,
    vatAssumed: (r, c, q) =>
      `${r} btw bijgeteld${c ? ` (het algemene tarief in ${c})` : ''}: het antwoord zegt “${q ?? 'excl. btw'}” zonder tarief`,
    vatUnknown:
      'Het antwoord zegt niet of de btw inbegrepen is: als inbegrepen gerekend, zoals prijzen voor consumenten in de EU moeten zijn',
    exempt: (q) => `Geen btw: “${q ?? 'vrijgesteld'}”`,
    rateWithoutHours: (r) => `Een uurtarief van ${r}, zonder het aantal uren`,
    fromOnly: (a) => `Alleen een vanafprijs: vanaf ${a}`,
    perUnit: (a, u) => `Een prijs van ${a} per ${u ?? 'eenheid'}, zonder de hoeveelheid`,
    feeWithoutPrice: (l) => `${l} komt erbij, zonder prijs`,
    feeCurrency: (l, c) => `${l} in ${c ?? 'een andere valuta'}`,
    noRate: (c) =>
      `Prijzen exclusief btw, en geen btw-tarief bekend voor ${c ?? 'het land van de aanbieder'}`,
    vatLabel: (r) => `btw ${r}`,
    perHour: (r, h) => `${r} per uur × ${h} uur`,
    perUnitTimes: (r, u, q) => `${r} per ${u} × ${q} ${u}`,
  },
  pl: {
    quoted: (q, a) => `${q} z ${a} wykonawców przesłało ofertę.`,
    compared: (n) => `Porównano ${n} wykonawców na podstawie danych katalogu.`,
    recommend: 'Rekomendacja',
    colon: ': ',
    total: 'razem',
    inclVat: 'brutto',
    from: (d) => `dostępny od ${d}`,
    rating: (r, n) => `ocena ${r} z ${n} opinii`,
    none: 'Żaden wykonawca nie pasuje wystarczająco, by go polecić.',
    silent: 'Brak odpowiedzi',
    fewer: (a, n) => `Poproszono o ${a}; porównano tylko ${n}.`,
    lowest: (t) => `Najniższa łączna cena: ${t}`,
    totalIs: (t) => `Łączna cena: ${t}`,
    dearer: (by, t, l) => `O ${by} drożej niż najniższa łączna cena (${t} wobec ${l} brutto)`,
    otherCurrency: (c) => `Oferta w ${c}, bez porównania ceny`,
    converted: (t, r, c, d) => `${t} w porównaniu: 1 ${c} po ${r} €${d ? ` (kurs z ${d})` : ''}`,
    unknownTotal: (why) => `Łączna cena nieznana: ${why}`,
    unsaid: 'odpowiedź tego nie podaje',
    includes: (w) => `W cenie: ${w}`,
    excludes: (w) => `Poza ceną: ${w}`,
    estimate: 'Cena jest szacunkowa',
    rated: (r, n) => `Ocena ${r} z ${n} opinii`,
    ratedOnly: (r, n) => `Ocena tylko ${r} z ${n} opinii`,
    noReviews: 'Brak opinii',
    fewReviews: (n) => `Tylko ${n} ${plural(n, { one: 'opinia', few: 'opinie', other: 'opinii' })}`,
    distance: (km, p) => (p ? `Odległość: ${km} km (${p})` : `Odległość: ${km} km`),
    availableBefore: (f, d) => `Wolny termin od ${f}, przed wymaganą datą (${d})`,
    availableAfter: (f, d) => `Wolny termin dopiero od ${f}, po wymaganej dacie (${d})`,
    available: (f) => `Wolny termin od ${f}`,
    answeredWithin: (h) => `Odpowiedź w ciągu ${h === null ? 'godziny' : `${h} godzin`}`,
    declined: 'Odmowa przyjęcia zlecenia',
    noPrice: 'Odpowiedź bez ceny',
    siteVisit: 'Chce obejrzeć zlecenie przed wyceną',
    noAnswerBy: (w) => `Brak odpowiedzi do ${w}`,
    noAnswer: 'Brak odpowiedzi',
    claimed: 'Wpis zarządzany przez firmę: profil jest aktualny',
    usuallyAnswers: (h) => `Zwykle odpowiada w ciągu ${h === 1 ? 'godziny' : `${h} godzin`}`,
    providers: 'wykonawcy',
    within: (km, p) => ` w promieniu ${km} km, miejsce: ${p}`,
    foundOnly: (a, f, w) => `Poproszono o ${a}; wyszukiwanie znalazło tylko ${f} (${w})`,
    notWritten: (a, u, s) => `Poproszono o ${a}; do ${u} z ${s} wybranych nie udało się napisać`,
    rangeUpper: 'Przedział cen: uwzględniono górną granicę',
    hoursStated: (q) => `Liczba godzin podana w odpowiedzi: „${q}”`,
    quantityStated: (q) => `Ilość podana w odpowiedzi: „${q}”`,
    estimateSaid: 'Odpowiedź podaje cenę jako szacunkową',
    feeNet: (l) => `„${l}” przyjęto jako kwotę netto, tak jak cenę`,
    vatStated: (r) => `Doliczono VAT ${r}, według stawki z odpowiedzi`,
    vatAssumed: (r, c, q) =>
      `Doliczono VAT ${r}${c ? ` (stawka podstawowa, ${c})` : ''}: odpowiedź podaje „${q ?? 'netto'}” bez stawki`,
    vatUnknown:
      'Odpowiedź nie mówi, czy cena zawiera VAT: przyjęto, że zawiera, bo tak muszą ceny dla konsumentów w UE',
    exempt: (q) => `Bez VAT: „${q ?? 'zwolniony z VAT'}”`,
    rateWithoutHours: (r) => `Stawka ${r} za godzinę, bez liczby godzin`,
    fromOnly: (a) => `Tylko cena wyjściowa: od ${a}`,
    perUnit: (a, u) => `Cena ${a} za ${u ?? 'jednostkę'}, bez ilości`,
    feeWithoutPrice: (l) => `${l} dodatkowo, bez ceny`,
    feeCurrency: (l, c) => `${l} w ${c ?? 'innej walucie'}`,
    noRate: (c) => `Ceny netto i brak znanej stawki VAT (kraj: ${c ?? 'wykonawcy'})`,
    vatLabel: (r) => `VAT ${r}`,
    perHour: (r, h) => `${r} za godzinę × ${h} h`,
    perUnitTimes: (r, u, q) => `${r} za ${u} × ${q} ${u}`,
  },
};
