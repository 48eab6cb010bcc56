// The words a provider's answer uses, in English, German, French, Spanish, Italian, Dutch,
// Polish and Portuguese, folded (lower case, accents off: src/concierge/dates.ts `fold`), as
// regular expressions: what says VAT is in or on top of a price, what names a fee, an hourly
// rate, a total, a "from" price, what the price includes or leaves out, a refusal, a validity.
// quotes.ts reads an answer with them.

/** A word or phrase standing on its own (not inside a longer word). */
export const words = (alternatives: string): string =>
  String.raw`(?<![\p{L}\p{N}])(?:${alternatives})(?![\p{L}\p{N}])`;
export const re = (source: string, flags = 'u'): RegExp => new RegExp(source, flags);

export const VAT_WORD = String.raw`mwst\.?|mehrwertsteuer|ust\.?|umsatzsteuer|vat|tva|iva|btw|podatek vat|podatkiem vat|podatku vat|ptu|moms|alv|dph|afa|fpa|pvm|dds`;
const PERCENT = String.raw`\d{1,2}(?:[.,]\d{1,2})?\s?%`;
/** The VAT word with what may stand beside it: "19 % MwSt.", "gesetzl. MwSt.", "VAT at 20%". */
const VAT = String.raw`(?:(?:der\s+|die\s+|la\s+|el\s+|l'|de\s+|the\s+)?(?:${PERCENT}\s*)?(?:gesetzl(?:iche[rn]?|\.)?\s*|legal\s+|applicable\s+)?(?:${VAT_WORD})(?:\s*(?:\(?${PERCENT}\)?|(?:at|von|de|al|a|à|van|w wysokosci)\s*${PERCENT}))?)`;

/** Says the amount before it (or the whole answer) includes VAT. */
export const GROSS = re(
  words(
    String.raw`(?:incl\.?|inkl\.?|including|inclusive(?:\s+of)?|inclusief|inklusive|einschl\.?|einschliesslich|inc\.?|with|mit|con|com|z|wraz\s+z|y\s+compris|incluyendo|incluido|incluida|incluindo|compreso|compresa|comprensivo\s+di)\s*${VAT}|${VAT}\s*(?:inclus[ea]?|incluid[oa]s?|included|is\s+included|inbegriffen|enthalten|inklusive|inbegrepen|inclusa|incluso|compres[oa]|comprise?|wliczon[yae]|w\s+cenie|incl\.?|inkl\.?|incluida|incluído)|ttc|toutes\s+taxes\s+comprises|brutto|gross|ivat[oai]|ivati|all\s+taxes\s+included`,
  ),
  'gu',
);

/** Says VAT comes on top of the amount before it (or of the whole answer's prices). */
export const NET = re(
  words(
    String.raw`(?:plus|\+|zzgl\.?|zuzugl\.?|zuzuglich|exkl\.?|exklusive|excl\.?|excluding|exclusive\s+of|ex\.?|ohne|before|hors|mas|sin|mais|sem|piu|oltre|escluso|esclusa|exclusief|exclusive|zonder|bez|acresce|acrescido\s+de|netto\s+plus|net\s+of)\s*${VAT}|${VAT}\s*(?:not\s+included|is\s+not\s+included|extra|on\s+top|comes\s+on\s+top|to\s+be\s+added|will\s+be\s+added|nicht\s+(?:enthalten|inbegriffen|inklusive)|kommt\s+hinzu|kommt\s+dazu|en\s+sus|non\s+comprise?|non\s+incluse?|no\s+incluid[oa]|aparte|a\s+parte|escluso|esclusa|non\s+inclusa|niet\s+inbegrepen|apart|niewliczon[yae]|nie\s+wliczon[yae]|nao\s+incluid[oa]|acresce)|ht|h\.t\.|hors\s+taxes|netto|imponibile|nett|net(?=\s*(?:price|preis|prijs|amount|total|[:=]|\d|€|eur))`,
  ),
  'gu',
);

/** Says the provider charges no VAT (small businesses, exemptions). */
export const EXEMPT = re(
  String.raw`kleinunternehmer|§\s?19\s?ustg|keine\s+(?:mwst|umsatzsteuer|ust)|ohne\s+ausweis\s+der\s+(?:umsatzsteuer|mwst)|no\s+vat\s+(?:is\s+)?charged|not\s+vat[- ]registered|vat[- ]exempt|exempt\s+from\s+vat|tva\s+non\s+applicable|art\.?\s*293\s*b|exent[oa]\s+de\s+iva|esente\s+(?:da\s+)?iva|esenzione\s+iva|regime\s+forfettario|vrijgesteld\s+van\s+btw|kleineondernemersregeling|(?<![\p{L}])kor(?![\p{L}])|zwolnion[ya]\s+(?:z|od)\s+vat|zw\.\s*vat|isent[oa]\s+de\s+iva|iva\s+isent[oa]`,
  'gu',
);

/** A VAT rate stated: group 1 or 2 is the percent. */
export const VAT_RATE = re(
  String.raw`(${PERCENT.replace(String.raw`\s?%`, '')})\s?%\s*(?:gesetzl(?:iche[rn]?|\.)?\s*)?(?:${VAT_WORD})|(?:${VAT_WORD})\s*(?:rate\s+(?:of\s+)?|satz\s+(?:von\s+)?|a\s+|al\s+|à\s+|de\s+|von\s+|of\s+|at\s+|van\s+|w\s+wysokosci\s+|\(|:\s*)?(\d{1,2}(?:[.,]\d{1,2})?)\s?%`,
  'gu',
);

export const FEE_KINDS = ['call_out', 'travel', 'disposal', 'materials', 'surcharge', 'other'] as const;
export type FeeKind = (typeof FEE_KINDS)[number];

/** Labels of costs besides the price, by kind. */
export const FEES: [FeeKind, RegExp][] = [
  [
    'call_out',
    re(
      words(
        String.raw`call[- ]?out(?:\s+(?:fee|charge))?|attendance\s+fee|visit\s+fee|service\s+call(?:\s+fee)?|anfahrt(?:spauschale|skosten|sgebuhr)?|fahrtkosten|fahrtpauschale|wegegeld|frais\s+de\s+deplacement|deplacement|forfait\s+(?:de\s+)?deplacement|desplazamiento|gastos\s+de\s+desplazamiento|salida|diritto\s+(?:fisso\s+)?di\s+chiamata|costo\s+(?:di\s+)?uscita|uscita|chiamata|voorrijkosten|voorrijden|dojazd(?:u)?|koszt(?:y)?\s+dojazdu|deslocac(?:ao|oes)|deslocamento|taxa\s+de\s+desloca(?:cao|mento)`,
      ),
      'gu',
    ),
  ],
  [
    'travel',
    re(
      words(
        String.raw`travel(?:\s+(?:costs?|expenses|fee|time))?|trip\s+charge|mileage|kilometergeld|kilometerpauschale|reisekosten|frais\s+de\s+route|kilometraje|trasferta|spese\s+di\s+viaggio|reiskosten|kilometervergoeding|koszty\s+podrozy|despesas\s+de\s+viagem`,
      ),
      'gu',
    ),
  ],
  [
    'disposal',
    re(
      words(
        String.raw`disposal|waste\s+removal|removal\s+of\s+the\s+old(?:\s+\w+)?|skip\s+hire|entsorgung(?:skosten|spauschale)?|evacuation(?:\s+des\s+gravats)?|enlevement(?:\s+de\s+l'ancien(?:ne)?(?:\s+\w+)?)?|retirada(?:\s+de\s+escombros)?|gestion\s+de\s+residuos|smaltimento|afvoer(?:kosten)?|afvalverwerking|utylizacj[aei]|wywoz(?:u)?|remoc(?:ao)|recolha\s+de\s+entulho`,
      ),
      'gu',
    ),
  ],
  [
    'materials',
    re(
      words(
        String.raw`materials?(?:kosten)?|spare\s+parts|parts|ersatzteile|fournitures|pieces(?:\s+detachees)?|materiales|piezas|materiale|materiali|ricambi|pezzi|materiaal|materialen|onderdelen|materialy|materialow|czesci|materiais|pecas`,
      ),
      'gu',
    ),
  ],
  [
    'surcharge',
    re(
      words(
        String.raw`(?:weekend|emergency|night|urgent|express)\s+(?:surcharge|fee|rate)|surcharge|zuschlag|notdienstzuschlag|wochenendzuschlag|nachtzuschlag|majoration|supplement(?:\s+d'urgence)?|recargo|plus\s+de\s+urgencia|maggiorazione|supplemento|toeslag|spoedtoeslag|doplata|sobretaxa|acrescimo`,
      ),
      'gu',
    ),
  ],
];

/** Labels of the work itself (labour), beside materials: the price of the work. */
export const LABOUR = re(
  words(
    String.raw`labou?r(?:\s+costs?)?|workmanship|arbeitslohn|arbeitskosten|arbeitszeit|lohnkosten|main[- ]d'?oeuvre|mano\s+de\s+obra|manodopera|arbeidsloon|arbeidskosten|robocizna|koszt\s+robocizny|mao\s+de\s+obra`,
  ),
  'gu',
);

/** Labels of a total ("Gesamt", "total TTC", "in totaal"). */
export const TOTAL = re(
  words(
    String.raw`total(?:\s+price|\s+cost|\s+amount|\s+ttc|\s+ht)?|grand\s+total|in\s+total|altogether|all[- ]in|gesamt(?:preis|betrag|summe|kosten)?|insgesamt|summe|endpreis|endbetrag|montant\s+total|au\s+total|en\s+total|importe\s+total|precio\s+total|totale|complessivo|in\s+totale|totaal(?:prijs|bedrag)?|in\s+totaal|razem|lacznie|suma|w\s+sumie|valor\s+total|no\s+total|custo\s+total`,
  ),
  'gu',
);

/** Words that call an amount the price asked for. */
export const PRICE = re(
  words(
    String.raw`price|quote|quotation|offer|estimate|cost|costs|charge|fixed|flat\s+rate|we\s+can\s+do\s+it\s+for|preis|festpreis|pauschal(?:preis)?|angebot|kosten|kostet|betrag|kostenvoranschlag|prix|devis|forfait|montant|cout|coute|tarif|precio|presupuesto|importe|coste|cuesta|prezzo|preventivo|importo|costa|prijs|offerte|bedrag|kost|cena|wycena|oferta|koszt|kosztuje|kwota|preco|orcamento|valor|custo|custa`,
  ),
  'gu',
);

/** Amounts near these words are not the offer: deposits, discounts, shop prices, the customer's budget. */
export const NOT_OFFER = re(
  words(
    String.raw`deposit|down\s+payment|advance(?:\s+payment)?|anzahlung|vorauszahlung|acompte|arrhes|anticipo|senal|acconto|caparra|aanbetaling|voorschot|zaliczk[ai]|zadatek|sinal|adiantamento|discount|rabatt|nachlass|skonto|remise|rabais|descuento|sconto|korting|rabat|upust|desconto|im\s+handel|retail|in\s+the\s+shop|in\s+shops|market\s+price|list\s+price|listenpreis|uvp|neupreis|prix\s+public|prix\s+catalogue|pvp|prezzo\s+di\s+listino|adviesprijs|cena\s+katalogowa|preco\s+de\s+tabela|budget|budzet|presupuesto\s+maximo|your\s+budget|ihr\s+budget|votre\s+budget|su\s+presupuesto|il\s+vostro\s+budget|uw\s+budget|tip|trinkgeld|pourboire|propina|mancia|fooi|napiwek|gorjeta|invoice\s+(?:no|nr)|rechnung\s+nr|iban|tel\.?|telefon|phone|fax|kontonummer`,
  ),
  'gu',
);

/** An hourly rate: the unit right after the amount ("/h", "pro Stunde", "de l'heure"). */
export const PER_HOUR_AFTER = re(
  String.raw`^\s?(?:/\s?(?:h|hr|hrs|std\.?|stunde|hora|ora|uur|godz\.?|heure|hour)|per\s+(?:hour|hr|h|uur|ora|stunde)|an\s+hour|a\s+hour|the\s+hour|hourly|pro\s+(?:stunde|std\.?|h)|je\s+(?:stunde|std\.?)|die\s+stunde|(?:de\s+)?l'heure|par\s+heure|(?:por|la)\s+hora|(?:all'|l')ora|(?:al|per)\s+ora|za\s+godzin[eę]|(?:a|à)\s+hora|p\.?\s?h\.?)(?![\p{L}])`,
  'u',
);
/** An hourly rate named before its amount ("Stundensatz", "taux horaire"). */
export const HOURLY_LABEL = re(
  words(
    String.raw`hourly\s+rate|rate\s+per\s+hour|per\s+hour|stundensatz|stundenlohn|stundenverrechnungssatz|stundenpreis|taux\s+horaire|tarif\s+horaire|precio\s+(?:por|de\s+la)\s+hora|tarifa\s+(?:por\s+hora|horaria)|tariffa\s+oraria|costo\s+orario|prezzo\s+orario|uurtarief|uurloon|uurprijs|stawka\s+godzinowa|stawka\s+za\s+godzin[eę]|preco\s+(?:por|a)\s+hora|valor\s+(?:por\s+)?hora`,
  ),
  'gu',
);
/** A price per unit of something else: "/m²", "pro Stück", "per day". Group 1 names the unit. */
export const PER_UNIT_AFTER = re(
  String.raw`^\s?(?:(?:ht|ttc|hors\s+taxes?|netto|brutto|net|gross)\s+)?(?:/|per|pro|je|le|la|par|por|al|a|à|za|il|the)\s?(m²|m2|qm|sqm|square\s+met(?:re|er)|lfm|laufmeter|met(?:re|er)|mq|metro(?:\s+(?:cuadrado|quadrato))?|vierkante\s+meter|metr|m(?![\p{L}\d])|piece|stuck|stück|unidad|pezzo|stuk|sztuk[eę]|unidade|day|tag|jour|dia|giorno|dag|dzien|radiator|heizkorper|window|fenster|point|steckdose|socket)(?![\p{L}])`,
  'u',
);

/** A "from" price: the amount after is the least it costs. */
export const FROM_BEFORE = re(
  String.raw`(?<![\p{L}])(?:from|starting\s+(?:at|from)|at\s+least|ab|mindestens|a\s+partir\s+de|des|au\s+moins|desde|como\s+minimo|a\s+partire\s+da|minimo|almeno|vanaf|minstens|od|co\s+najmniej|minimum|pelo\s+menos)\s*$`,
  'u',
);
/** An estimate, not a fixed price ("about", "ca.", "environ"). */
export const ABOUT_BEFORE = re(
  String.raw`(?<![\p{L}])(?:about|around|approx\.?|approximately|roughly|an\s+estimated|estimated|circa|ca\.?|etwa|ungefahr|rund|voraussichtlich|geschatzt|environ|approximativement|aux\s+alentours\s+de|unos|unas|aproximadamente|alrededor\s+de|intorno\s+a|all'incirca|indicativamente|ongeveer|rond|zo'n|naar\s+schatting|okolo|mniej\s+wiecej|szacunkowo|cerca\s+de|por\s+volta\s+de)\s*$`,
  'u',
);
/** A cap ("at most", "höchstens", "fino a"): the amount is the most it costs. */
export const MAX_BEFORE = re(
  String.raw`(?<![\p{L}])(?:at\s+most|max\.?|maximum|up\s+to|no\s+more\s+than|hochstens|maximal|bis\s+zu|au\s+maximum|maximum|como\s+maximo|hasta|al\s+massimo|fino\s+a|maximaal|hooguit|maksymalnie|maks\.?|no\s+maximo|ate)\s*$`,
  'u',
);
/** Joins the two ends of a range ("300-400", "300 bis 400", "entre 300 et 400"). */
export const RANGE_JOIN = String.raw`\s*(?:-|–|—|to|till|bis|a|à|y|al|e|tot|do|ate|and|und|et|i|en)\s*`;
export const RANGE_OPEN = re(
  String.raw`(?<![\p{L}])(?:between|zwischen|entre|tra|fra|tussen|miedzy|pomiedzy|from|von|de|desde|da|dal|van|od|ca\.?|circa|about|around|etwa|environ|unos|ongeveer|okolo)\s*$`,
  'u',
);

/** Hours of work: group 1 (and 2 for a range) the number. */
/** The kinds of unit a price per unit and a stated quantity share (folded), so "pro m²" meets "ca. 20 m²". */
export const UNIT_KINDS: [string, RegExp][] = [
  [
    'area',
    re(
      String.raw`^(?:m²|m2|qm|sqm|square\s+met(?:re|er)s?|mq|metros?\s+cuadrados?|metro\s+quadrato|metri\s+quadrati|vierkante\s+meters?|metr(?:ow|y|a)?\s+kw\w*)$`,
    ),
  ],
  ['length', re(String.raw`^(?:m|lfm|laufmeter|met(?:re|er)s?|metros?|metri|metr(?:ow|y|a)?|mb)$`)],
  ['piece', re(String.raw`^(?:stuck|stk\.?|pieces?|unidad(?:es)?|pezz[oi]|stuks?|sztuk[aiey]?|unidades?)$`)],
  ['day', re(String.raw`^(?:days?|tag(?:e|en)?|jours?|dias?|giorn[oi]|dag(?:en)?|dni|dzien)$`)],
];
/**
 * A quantity as an answer states it: "ca. 20 m²", "environ 30 m²", "about 12 m", "8 Stück"; or a
 * range, group 2 its upper end: "15–20 m²", "15 bis 20 qm", "between 15 and 20 square metres".
 */
export const QUANTITY = re(
  String.raw`(?<![\d.,])(\d{1,5}(?:[.,]\d{1,2})?)(?:\s?(?:-|–|—|to|and|bis|und|a|à|et|y|e|tot|en|do|i)\s?(\d{1,5}(?:[.,]\d{1,2})?))?\s?(m²|m2|qm|sqm|square\s+met(?:re|er)s?|mq|metros?\s+cuadrados?|metro\s+quadrato|metri\s+quadrati|vierkante\s+meters?|metr(?:ow|y|a)?\s+kw\w*|lfm|laufmeter|met(?:re|er)s?|metros?|metri|metr(?:ow|y|a)?|mb|m|stuck|stk\.?|pieces?|unidad(?:es)?|pezz[oi]|stuks?|sztuk[aiey]?|unidades?|days?|tage?n?|jours?|dias?|giorn[oi]|dagen|dag|dni|dzien)(?![\p{L}\p{N}])`,
  'gu',
);
export const HOURS = re(
  String.raw`(?<![\d.,])(\d{1,2}(?:[.,]\d{1,2})?)(?:\s*(?:-|–|to|bis|a|à|tot|do|ate|or|oder|ou|o|of|lub)\s*(\d{1,2}(?:[.,]\d{1,2})?))?\s*(?:hours?|hrs?|h|std\.?|stunden|stunde|heures?|horas?|ore|ora|uur|godzin[ya]?|godz\.?|arbeitsstunden|man[- ]hours|mannstunden)(?![\p{L}])`,
  'gu',
);
/** Before an hour count, words that make it something else than the work's length. */
export const NOT_WORK_HOURS = re(
  String.raw`(?<![\p{L}])(?:within|in\s+under|innerhalb(?:\s+von)?|binnen|sous|en\s+moins\s+de|dans\s+les|en\s+las?\s+proximas|en\s+menos\s+de|entro|nelle\s+prossime|binnen|w\s+ciagu|em|dentro\s+de|nas\s+proximas|um|at|a|à|alle|om|o|as|às|every|alle|opening|offnungszeiten|24\s*/|reply|answer|antwort|reponse|respuesta|risposta|antwoord|odpowiedz|resposta)\s*$`,
  'u',
);

/** A list of what the price includes follows. */
export const INCLUDES = re(
  words(
    String.raw`including|included\s+are|incl\.?|inclusive\s+of|covers|inkl\.?|inklusive|einschl\.?|einschliesslich|inbegriffen\s+sind|enthalten\s+sind|y\s+compris|comprenant|incluant|incluyendo|incluye|incluido|incluida|comprensivo\s+di|compreso|compresi|comprende|inclusa|incluso|inclusi|inclusief|inclusief|met\s+inbegrip\s+van|w\s+tym|wraz\s+z|lacznie\s+z|lącznie\s+z|incluindo|inclui|com`,
  ),
  'gu',
);
/** What stands after a list of included things ("Entsorgung inklusive", "déplacement compris"). */
export const INCLUDED_AFTER = re(
  String.raw`^\s*(?:is\s+|are\s+|ist\s+|sind\s+|est\s+|sont\s+|esta\s+|estan\s+|e\s+|sono\s+|is\s+|zijn\s+|jest\s+|sa\s+|esta\s+|estao\s+)?(?:included|inklusive|inbegriffen|enthalten|inkl\.?|compris|comprise|compris(?:es)?|inclus|incluse?s?|incluid[oa]s?|inclus[oa]|inclusi|compres[oa]|compresi|inbegrepen|wliczon[yae]|w\s+cenie|incluíd[oa]s?)(?![\p{L}])`,
  'u',
);
/** A list of what costs extra follows ("plus", "zzgl.", "en sus de"). */
export const CHARGED = re(
  words(
    String.raw`plus|\+|zzgl\.?|zuzuglich|zuzugl\.?|zusatzlich|additionally|on\s+top\s+of\s+that|en\s+plus|en\s+sus|mas|ademas|piu|in\s+aggiunta|oltre\s+a|daarnaast|plus\s+nog|dodatkowo|mais|acrescem`,
  ),
  'gu',
);
/** What stands after things that cost extra ("is extra", "wird gesondert berechnet"). */
export const CHARGED_AFTER = re(
  String.raw`^\s*(?:is\s+|are\s+|will\s+be\s+|would\s+be\s+|ist\s+|sind\s+|wird\s+|werden\s+|est\s+|sont\s+|sera\s+|seront\s+|se\s+|es\s+|son\s+|e\s+|viene\s+|vengono\s+|wordt\s+|worden\s+|jest\s+|sa\s+|e\s+|sao\s+)?(?:extra|charged\s+(?:separately|extra|on\s+top)|billed\s+separately|on\s+top|additional|payable\s+on\s+top|kommt\s+hinzu|kommen\s+hinzu|gesondert\s+berechnet|separat\s+berechnet|extra\s+berechnet|zusatzlich|factur[ée]e?s?\s+en\s+(?:plus|sus)|en\s+sus|en\s+supplement|cobra\s+aparte|cobran\s+aparte|aparte|a\s+parte|fatturat[oaie]\s+a\s+parte|a\s+carico\s+del\s+cliente|apart\s+(?:berekend|gefactureerd)|extra\s+(?:berekend|in\s+rekening)|platne\s+osobno|dodatkowo(?:\s+platne)?|(?:cobrad[oa]s?|faturad[oa]s?)\s+a\s+parte|à\s+parte)(?![\p{L}])`,
  'u',
);
/** A list of what the price leaves out follows ("excluding", "ohne", "hors"). */
export const EXCLUDES = re(
  words(
    String.raw`excluding|excl\.?|exclusive\s+of|not\s+including|without|exkl\.?|exklusive|ohne|hors|sans|sin|sem|escluso|esclusi|esclusa|senza|exclusief|zonder|bez|nie\s+obejmuje|nao\s+inclui|excepto|except`,
  ),
  'gu',
);
/** What stands after things the price leaves out ("not included", "nicht enthalten"). */
export const EXCLUDED_AFTER = re(
  String.raw`^\s*(?:is\s+|are\s+|ist\s+|sind\s+|est\s+|sont\s+|no\s+esta\s+|no\s+estan\s+|non\s+e\s+|non\s+sono\s+|is\s+|zijn\s+|nie\s+jest\s+|nao\s+esta\s+)?(?:not\s+included|not\s+part\s+of\s+(?:the|this)\s+(?:quote|offer|price)|nicht\s+(?:enthalten|inbegriffen|inklusive|im\s+preis)|non\s+compris(?:es?)?|non\s+inclus(?:es?)?|no\s+incluid[oa]s?|no\s+incluye|non\s+inclus[oa]|non\s+compres[oa]|escluso|esclusa|esclusi|niet\s+inbegrepen|niet\s+inbegrepen|nie\s+wliczon[yae]|niewliczon[yae]|nie\s+jest\s+wliczon[yae]|nao\s+incluid[oa]s?|não\s+incluíd[oa]s?)(?![\p{L}])`,
  'u',
);
/** Joins items of a list. */
export const LIST_JOIN = re(
  String.raw`\s*(?:,|&|/|\band\b|\bund\b|\bsowie\b|\bet\b|\by\b|\be\b|\ben\b|\bi\b|\boraz\b|\bor\b|\boder\b)\s*`,
  'u',
);

/** The provider cannot take the job. */
export const DECLINE = re(
  String.raw`fully\s+booked|no\s+capacity|not\s+able\s+to|unable\s+to|cannot\s+take|can't\s+take|can\s+not\s+take|cannot\s+(?:do|help|offer|accept)|can't\s+(?:do|help|offer|accept)|have\s+to\s+decline|must\s+decline|(?:we|i)\s+decline|not\s+available|no\s+longer\s+(?:do|offer)|don't\s+do|do\s+not\s+do|keine\s+kapazitat|ausgebucht|leider\s+(?:nicht|keine|absagen)|mussen\s+(?:ihnen\s+)?(?:leider\s+)?absagen|konnen\s+(?:den\s+auftrag\s+)?leider\s+nicht|nicht\s+moglich|nehmen\s+keine|pas\s+disponible|sommes\s+complets|ne\s+pouvons\s+pas|ne\s+sommes\s+pas\s+en\s+mesure|ne\s+faisons\s+pas|malheureusement|no\s+podemos|no\s+tenemos\s+disponibilidad|estamos\s+completos|lamentablemente|no\s+realizamos|non\s+possiamo|non\s+siamo\s+in\s+grado|purtroppo|siamo\s+al\s+completo|non\s+effettuiamo|helaas|kunnen\s+(?:wij\s+|we\s+)?(?:niet|geen)|geen\s+tijd|volgeboekt|niet\s+mogelijk|niestety|nie\s+mozemy|nie\s+jestesmy\s+w\s+stanie|brak\s+wolnych\s+terminow|nie\s+wykonujemy|infelizmente|nao\s+podemos|nao\s+temos\s+disponibilidade|sem\s+disponibilidade|nao\s+fazemos`,
  'u',
);

/** The provider wants to see the job before pricing it. */
export const SITE_VISIT = re(
  String.raw`site\s+visit|visit\s+(?:first|before)|see\s+it\s+first|need\s+to\s+see|have\s+a\s+look|take\s+a\s+look|inspection|besichtigung|vor[- ]ort[- ]termin|vor\s+ort\s+(?:ansehen|anschauen|begutachten)|erst\s+(?:ansehen|anschauen)|begutachtung|visite\s+(?:prealable|technique|sur\s+place)|voir\s+sur\s+place|passer\s+voir|visita\s+(?:previa|tecnica|de\s+valoracion)|ver\s+el\s+trabajo|sopralluogo|vedere\s+di\s+persona|bezichtiging|komen\s+kijken|eerst\s+(?:bekijken|kijken)|ogledzin[ya]?|wizj[ai]\s+lokaln[aej]|obejrzec|visita\s+ao\s+local|ver\s+no\s+local`,
  'u',
);

/** How long an offer holds, or until when: group 1 a number with group 2 its unit. */
export const VALIDITY = re(
  String.raw`(?<![\p{L}])(?:valid[oae]?|stands|holds|good|gultig|gilt|bindend|verbindlich|valable|valide|valido|valida|validez|validita|geldig|wazn[ay]|obowiazuje|validade)(?![\p{L}])(?:\s+(?:for|until|till|through|bis(?:\s+zum)?|fur|jusqu'au|pendant|durant|hasta(?:\s+el)?|durante|por|fino\s+al|per|tot(?:\s+en\s+met)?|gedurende|voor|do|przez|ate|de))?\s*(?:(\d{1,3})\s*(days?|weeks?|months?|tage?n?|wochen?|monate?n?|jours?|semaines?|mois|dias|semanas?|meses?|mes|giorni|settimane|mesi|mese|dagen|weken|maanden?|dni|tygodni[ea]?|miesiac[ey]?|miesiecy))?`,
  'u',
);
/** A duration followed by a validity word ("30 Tage gültig", "30 dagen geldig"). */
export const VALIDITY_AFTER = re(
  String.raw`(\d{1,3})\s*(days?|weeks?|months?|tage?n?|wochen?|monate?n?|jours?|semaines?|mois|dias|semanas?|meses?|giorni|settimane|mesi|dagen|weken|maanden?|dni|tygodni[ea]?|miesiac[ey]?|miesiecy)\s+(?:valid|gultig|valable|validos?|valid[oe]|geldig|wazn[ay])`,
  'u',
);

/** Words around a date that make it the first day the provider can come. */
export const AVAILABLE = re(
  String.raw`availab|can\s+(?:start|come|begin|do)|could\s+(?:start|come|begin|do)|start|begin|earliest|free\s+(?:from|on)|appointment|slot|from|on\s+(?:the\s+)?|(?<![\p{L}])ab(?![\p{L}])|fruhestens|verfugbar|termin|konnen\s+(?:am|ab)|kommen|zeit\s+(?:am|ab)|beginnen|anfangen|disponib|a\s+partir|des\s+le|intervenir|passer|commencer|desde|podemos|empezar|comenzar|pasar|possiamo|iniziare|venire|(?<![\p{L}])dal(?![\p{L}])|vanaf|beschikbaar|kunnen|langskomen|beginnen|(?<![\p{L}])od(?![\p{L}])|dostepn|mozemy|przyjsc|zaczac|rozpoczac|comecar|ir\s+(?:a|no)|(?<![\p{L}])am(?![\p{L}])|(?<![\p{L}])le(?![\p{L}])|(?<![\p{L}])el(?![\p{L}])|(?<![\p{L}])il(?![\p{L}])|(?<![\p{L}])op(?![\p{L}])`,
  'u',
);

/** What kind of cost a label names, or null. */
export function feeKindOf(folded: string): FeeKind | null {
  for (const [kind, pattern] of FEES) {
    pattern.lastIndex = 0;
    if (pattern.test(folded)) return kind;
  }
  return null;
}

/** Whether a folded phrase names VAT. */
export const isVat = (folded: string): boolean => re(words(VAT_WORD)).test(folded);
