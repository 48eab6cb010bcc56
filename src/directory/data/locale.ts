// Per-country conventions for the demo directory: language, calling code, postal code format,
// address order, legal forms, common surnames and real, common street names.
import type { CountryCode } from '../../../generated/directory/client/types.gen.ts';

export interface CountryLocale {
  name: string;
  lang: string;
  callingCode: string;
  /** `9` a digit, `A` a letter, anything else literal. */
  postal: string;
  /** `number-first`: "12 Rue Victor Hugo"; `number-last`: "Hauptstraße 12". */
  order: 'number-first' | 'number-last';
  tld: string;
  legalForms: string[];
  surnames: string[];
  streets: string[];
}

export const LOCALES: Record<CountryCode, CountryLocale> = {
  AT: { name: 'Austria', lang: 'de', callingCode: '43', postal: '9999', order: 'number-last', tld: 'at', legalForms: ['GmbH', 'e.U.', 'OG', 'KG'], surnames: ['Gruber', 'Huber', 'Bauer', 'Wagner', 'Müller', 'Pichler', 'Steiner', 'Moser', 'Mayer', 'Hofer', 'Leitner', 'Berger'], streets: ['Hauptstraße', 'Bahnhofstraße', 'Kirchengasse', 'Schulgasse', 'Feldgasse', 'Landstraße', 'Dorfstraße', 'Lindengasse'] },
  BE: { name: 'Belgium', lang: 'fr', callingCode: '32', postal: '9999', order: 'number-last', tld: 'be', legalForms: ['SRL', 'BV', 'SA', 'NV'], surnames: ['Peeters', 'Janssens', 'Maes', 'Jacobs', 'Mertens', 'Willems', 'Dubois', 'Lambert', 'Dupont', 'Claes', 'Goossens', 'Wouters'], streets: ['Rue de la Station', 'Kerkstraat', 'Stationsstraat', 'Rue de l’Église', 'Dorpstraat', 'Chaussée de Bruxelles', 'Nieuwstraat', 'Rue du Moulin'] },
  BG: { name: 'Bulgaria', lang: 'bg', callingCode: '359', postal: '9999', order: 'number-last', tld: 'bg', legalForms: ['EOOD', 'OOD', 'AD'], surnames: ['Ivanov', 'Georgiev', 'Dimitrov', 'Petrov', 'Nikolov', 'Hristov', 'Stoyanov', 'Todorov'], streets: ['ulitsa Vasil Levski', 'bulevard Bulgaria', 'ulitsa Rakovski', 'ulitsa Hristo Botev', 'bulevard Tsar Osvoboditel', 'ulitsa Shipka'] },
  CY: { name: 'Cyprus', lang: 'el', callingCode: '357', postal: '9999', order: 'number-last', tld: 'com.cy', legalForms: ['Ltd'], surnames: ['Georgiou', 'Konstantinou', 'Christodoulou', 'Ioannou', 'Charalambous', 'Nikolaou', 'Andreou', 'Michael'], streets: ['Makariou Avenue', 'Ledras Street', 'Archbishop Kyprianou Street', 'Anexartisias Street', 'Griva Digeni Avenue', 'Onasagorou Street'] },
  CZ: { name: 'Czechia', lang: 'cs', callingCode: '420', postal: '999 99', order: 'number-last', tld: 'cz', legalForms: ['s.r.o.', 'a.s.'], surnames: ['Novák', 'Svoboda', 'Novotný', 'Dvořák', 'Černý', 'Procházka', 'Kučera', 'Veselý', 'Horák', 'Němec'], streets: ['Nádražní', 'Masarykova', 'Husova', 'Palackého', 'Komenského', 'Školní', 'Jiráskova', 'Smetanova'] },
  DE: { name: 'Germany', lang: 'de', callingCode: '49', postal: '99999', order: 'number-last', tld: 'de', legalForms: ['GmbH', 'GmbH & Co. KG', 'e.K.', 'UG (haftungsbeschränkt)', 'OHG'], surnames: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann', 'Koch', 'Richter', 'Klein', 'Wolf', 'Keller', 'Huber'], streets: ['Hauptstraße', 'Bahnhofstraße', 'Schulstraße', 'Gartenstraße', 'Dorfstraße', 'Lindenstraße', 'Bergstraße', 'Kirchstraße', 'Goethestraße', 'Waldstraße', 'Schillerstraße', 'Am Markt'] },
  DK: { name: 'Denmark', lang: 'da', callingCode: '45', postal: '9999', order: 'number-last', tld: 'dk', legalForms: ['ApS', 'A/S', 'I/S'], surnames: ['Nielsen', 'Jensen', 'Hansen', 'Pedersen', 'Andersen', 'Christensen', 'Larsen', 'Sørensen'], streets: ['Vestergade', 'Østergade', 'Nørregade', 'Søndergade', 'Algade', 'Storegade', 'Kirkevej', 'Skolevej'] },
  EE: { name: 'Estonia', lang: 'et', callingCode: '372', postal: '99999', order: 'number-last', tld: 'ee', legalForms: ['OÜ', 'AS'], surnames: ['Tamm', 'Saar', 'Sepp', 'Mägi', 'Kask', 'Kukk', 'Rebane', 'Ilves'], streets: ['Pärnu maantee', 'Tartu maantee', 'Narva maantee', 'Pikk', 'Kesk', 'Rüütli', 'Kooli', 'Aia'] },
  ES: { name: 'Spain', lang: 'es', callingCode: '34', postal: '99999', order: 'number-last', tld: 'es', legalForms: ['S.L.', 'S.A.', 'S.L.U.'], surnames: ['García', 'Rodríguez', 'González', 'Fernández', 'López', 'Martínez', 'Sánchez', 'Pérez', 'Gómez', 'Martín', 'Jiménez', 'Ruiz'], streets: ['Calle Mayor', 'Calle Real', 'Avenida de la Constitución', 'Calle Nueva', 'Plaza de España', 'Calle de la Iglesia', 'Calle del Sol', 'Avenida de Andalucía'] },
  FI: { name: 'Finland', lang: 'fi', callingCode: '358', postal: '99999', order: 'number-last', tld: 'fi', legalForms: ['Oy', 'Ky', 'Tmi'], surnames: ['Korhonen', 'Virtanen', 'Mäkinen', 'Nieminen', 'Mäkelä', 'Hämäläinen', 'Laine', 'Heikkinen'], streets: ['Mannerheimintie', 'Kauppakatu', 'Hämeenkatu', 'Koulukatu', 'Rantatie', 'Kirkkokatu', 'Asemakatu', 'Puistokatu'] },
  FR: { name: 'France', lang: 'fr', callingCode: '33', postal: '99999', order: 'number-first', tld: 'fr', legalForms: ['SARL', 'SAS', 'EURL', 'SA'], surnames: ['Martin', 'Bernard', 'Thomas', 'Petit', 'Robert', 'Richard', 'Durand', 'Dubois', 'Moreau', 'Laurent', 'Simon', 'Michel', 'Lefebvre', 'Garnier'], streets: ['Rue de la République', 'Rue Victor Hugo', 'Avenue Jean Jaurès', 'Rue Pasteur', 'Rue de l’Église', 'Boulevard Gambetta', 'Rue Nationale', 'Place du Marché', 'Rue du Général de Gaulle', 'Rue des Écoles'] },
  GR: { name: 'Greece', lang: 'el', callingCode: '30', postal: '999 99', order: 'number-last', tld: 'gr', legalForms: ['I.K.E.', 'E.P.E.', 'A.E.', 'O.E.'], surnames: ['Papadopoulos', 'Papadakis', 'Georgiou', 'Oikonomou', 'Vasileiou', 'Nikolaidis', 'Karagiannis', 'Pappas'], streets: ['Odos Ermou', 'Leoforos Vasilissis Sofias', 'Odos Athinas', 'Odos Egnatia', 'Odos Tsimiski', 'Leoforos Syngrou', 'Odos Stadiou', 'Odos Panepistimiou'] },
  HR: { name: 'Croatia', lang: 'hr', callingCode: '385', postal: '99999', order: 'number-last', tld: 'hr', legalForms: ['d.o.o.', 'j.d.o.o.', 'obrt'], surnames: ['Horvat', 'Kovačević', 'Babić', 'Marić', 'Jurić', 'Novak', 'Kovačić', 'Knežević'], streets: ['Ilica', 'Vukovarska ulica', 'Ulica kralja Zvonimira', 'Trg bana Jelačića', 'Zagrebačka ulica', 'Ulica Ivana Gundulića', 'Savska cesta', 'Obala'] },
  HU: { name: 'Hungary', lang: 'hu', callingCode: '36', postal: '9999', order: 'number-last', tld: 'hu', legalForms: ['Kft.', 'Bt.', 'Zrt.'], surnames: ['Nagy', 'Kovács', 'Tóth', 'Szabó', 'Horváth', 'Varga', 'Kiss', 'Molnár'], streets: ['Kossuth Lajos utca', 'Petőfi Sándor utca', 'Rákóczi út', 'Ady Endre utca', 'Fő utca', 'Széchenyi utca', 'Táncsics Mihály utca', 'Dózsa György út'] },
  IE: { name: 'Ireland', lang: 'en', callingCode: '353', postal: 'A99 A9A9', order: 'number-first', tld: 'ie', legalForms: ['Ltd', 'DAC', 'Teoranta'], surnames: ['Murphy', 'Kelly', 'O’Sullivan', 'Walsh', 'Smith', 'O’Brien', 'Byrne', 'Ryan', 'O’Connor', 'O’Neill'], streets: ['Main Street', 'Church Street', 'Bridge Street', 'O’Connell Street', 'High Street', 'Patrick Street', 'Castle Street', 'Mill Road'] },
  IT: { name: 'Italy', lang: 'it', callingCode: '39', postal: '99999', order: 'number-last', tld: 'it', legalForms: ['S.r.l.', 'S.n.c.', 'S.p.A.', 'S.a.s.'], surnames: ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco', 'Bruno', 'Gallo'], streets: ['Via Roma', 'Via Garibaldi', 'Via Mazzini', 'Corso Vittorio Emanuele II', 'Via Dante Alighieri', 'Via Cavour', 'Piazza della Repubblica', 'Via Verdi', 'Via Marconi', 'Via XX Settembre'] },
  LT: { name: 'Lithuania', lang: 'lt', callingCode: '370', postal: 'LT-99999', order: 'number-last', tld: 'lt', legalForms: ['UAB', 'MB', 'IĮ'], surnames: ['Kazlauskas', 'Jankauskas', 'Petrauskas', 'Stankevičius', 'Vasiliauskas', 'Žukauskas', 'Butkus', 'Paulauskas'], streets: ['Gedimino prospektas', 'Vilniaus gatvė', 'Laisvės alėja', 'Pilies gatvė', 'Kauno gatvė', 'Mokyklos gatvė', 'Sodų gatvė', 'Liepų gatvė'] },
  LU: { name: 'Luxembourg', lang: 'fr', callingCode: '352', postal: 'L-9999', order: 'number-first', tld: 'lu', legalForms: ['S.à r.l.', 'S.A.', 'SARL-S'], surnames: ['Schmit', 'Muller', 'Weber', 'Wagner', 'Hoffmann', 'Thill', 'Schmitz', 'Klein'], streets: ['Grand-Rue', 'Rue de la Gare', 'Avenue de la Liberté', 'Route d’Arlon', 'Rue Principale', 'Boulevard Royal', 'Rue de l’Église', 'Rue du Marché'] },
  LV: { name: 'Latvia', lang: 'lv', callingCode: '371', postal: 'LV-9999', order: 'number-last', tld: 'lv', legalForms: ['SIA', 'AS', 'IK'], surnames: ['Bērziņš', 'Kalniņš', 'Ozoliņš', 'Jansons', 'Ozols', 'Liepiņš', 'Krūmiņš', 'Balodis'], streets: ['Brīvības iela', 'Elizabetes iela', 'Tērbatas iela', 'Skolas iela', 'Rīgas iela', 'Dzirnavu iela', 'Lāčplēša iela', 'Baznīcas iela'] },
  MT: { name: 'Malta', lang: 'en', callingCode: '356', postal: 'AAA 9999', order: 'number-first', tld: 'com.mt', legalForms: ['Ltd'], surnames: ['Borg', 'Camilleri', 'Vella', 'Farrugia', 'Zammit', 'Galea', 'Micallef', 'Grech'], streets: ['Republic Street', 'Merchants Street', 'Triq il-Kbira', 'Tower Road', 'Triq San Pawl', 'Main Street', 'Triq il-Knisja', 'Strait Street'] },
  NL: { name: 'Netherlands', lang: 'nl', callingCode: '31', postal: '9999 AA', order: 'number-last', tld: 'nl', legalForms: ['B.V.', 'V.O.F.', 'N.V.'], surnames: ['de Jong', 'Jansen', 'de Vries', 'van den Berg', 'van Dijk', 'Bakker', 'Janssen', 'Visser', 'Smit', 'Meijer', 'de Boer', 'Mulder'], streets: ['Kerkstraat', 'Dorpsstraat', 'Schoolstraat', 'Molenstraat', 'Stationsweg', 'Hoofdstraat', 'Markt', 'Julianastraat', 'Wilhelminastraat', 'Nieuwstraat'] },
  PL: { name: 'Poland', lang: 'pl', callingCode: '48', postal: '99-999', order: 'number-last', tld: 'pl', legalForms: ['sp. z o.o.', 's.c.', 'sp.j.', 'S.A.'], surnames: ['Nowak', 'Kowalski', 'Wiśniewski', 'Wójcik', 'Kowalczyk', 'Kamiński', 'Lewandowski', 'Zieliński', 'Szymański', 'Woźniak', 'Dąbrowski', 'Kozłowski'], streets: ['ulica Mickiewicza', 'ulica Kościuszki', 'ulica Słowackiego', 'ulica Sienkiewicza', 'ulica Piłsudskiego', 'ulica Kolejowa', 'ulica Polna', 'ulica Długa', 'ulica Lipowa', 'ulica Ogrodowa'] },
  PT: { name: 'Portugal', lang: 'pt', callingCode: '351', postal: '9999-999', order: 'number-last', tld: 'pt', legalForms: ['Lda.', 'S.A.', 'Unipessoal Lda.'], surnames: ['Silva', 'Santos', 'Ferreira', 'Pereira', 'Oliveira', 'Costa', 'Rodrigues', 'Martins', 'Sousa', 'Fernandes'], streets: ['Rua Direita', 'Avenida da Liberdade', 'Rua da Igreja', 'Rua 25 de Abril', 'Rua do Comércio', 'Largo do Município', 'Rua Augusta', 'Rua de Santa Catarina'] },
  RO: { name: 'Romania', lang: 'ro', callingCode: '40', postal: '999999', order: 'number-last', tld: 'ro', legalForms: ['S.R.L.', 'S.A.', 'PFA'], surnames: ['Popa', 'Popescu', 'Pop', 'Radu', 'Dumitru', 'Stan', 'Stoica', 'Gheorghe', 'Matei', 'Ciobanu'], streets: ['Strada Mihai Eminescu', 'Bulevardul Unirii', 'Strada Republicii', 'Calea Victoriei', 'Strada Avram Iancu', 'Strada Libertății', 'Strada Mihai Viteazu', 'Bulevardul Independenței'] },
  SE: { name: 'Sweden', lang: 'sv', callingCode: '46', postal: '999 99', order: 'number-last', tld: 'se', legalForms: ['AB', 'HB', 'KB'], surnames: ['Andersson', 'Johansson', 'Karlsson', 'Nilsson', 'Eriksson', 'Larsson', 'Olsson', 'Persson', 'Svensson', 'Gustafsson'], streets: ['Storgatan', 'Drottninggatan', 'Kungsgatan', 'Skolgatan', 'Kyrkogatan', 'Järnvägsgatan', 'Nygatan', 'Sveavägen'] },
  SI: { name: 'Slovenia', lang: 'sl', callingCode: '386', postal: '9999', order: 'number-last', tld: 'si', legalForms: ['d.o.o.', 's.p.', 'd.d.'], surnames: ['Novak', 'Horvat', 'Kovačič', 'Krajnc', 'Zupančič', 'Potočnik', 'Kovač', 'Mlakar'], streets: ['Slovenska cesta', 'Prešernova ulica', 'Cankarjeva ulica', 'Trubarjeva cesta', 'Glavni trg', 'Tržaška cesta', 'Celovška cesta', 'Šolska ulica'] },
  SK: { name: 'Slovakia', lang: 'sk', callingCode: '421', postal: '999 99', order: 'number-last', tld: 'sk', legalForms: ['s.r.o.', 'a.s.'], surnames: ['Horváth', 'Kováč', 'Varga', 'Tóth', 'Nagy', 'Baláž', 'Szabó', 'Molnár'], streets: ['Hlavná ulica', 'Štúrova', 'Námestie SNP', 'Obchodná', 'Hviezdoslavova', 'Školská', 'Nová ulica', 'Mierová'] },
};

/** Local names of first-level regions where the gazetteer's (English) names differ. */
export const LOCAL_REGION_NAMES: Record<string, string> = {
  'DE.01': 'Baden-Württemberg',
  'DE.02': 'Bayern',
  'DE.16': 'Berlin',
  'DE.11': 'Brandenburg',
  'DE.03': 'Bremen',
  'DE.04': 'Hamburg',
  'DE.05': 'Hessen',
  'DE.12': 'Mecklenburg-Vorpommern',
  'DE.06': 'Niedersachsen',
  'DE.07': 'Nordrhein-Westfalen',
  'DE.08': 'Rheinland-Pfalz',
  'DE.09': 'Saarland',
  'DE.13': 'Sachsen',
  'DE.14': 'Sachsen-Anhalt',
  'DE.10': 'Schleswig-Holstein',
  'DE.15': 'Thüringen',
  'AT.01': 'Burgenland',
  'AT.02': 'Kärnten',
  'AT.03': 'Niederösterreich',
  'AT.04': 'Oberösterreich',
  'AT.05': 'Salzburg',
  'AT.06': 'Steiermark',
  'AT.07': 'Tirol',
  'AT.08': 'Vorarlberg',
  'AT.09': 'Wien',
  'IT.09': 'Lombardia',
  'IT.07': 'Lazio',
  'IT.16': 'Toscana',
  'IT.04': 'Campania',
  'IT.12': 'Piemonte',
  'IT.15': 'Sicilia',
  'IT.20': 'Veneto',
  'IT.05': 'Emilia-Romagna',
  'IT.13': 'Puglia',
  'ES.29': 'Comunidad de Madrid',
  'ES.56': 'Cataluña',
  'ES.51': 'Andalucía',
  'ES.60': 'Comunitat Valenciana',
  'PL.78': 'Mazowieckie',
  'PL.77': 'Małopolskie',
  'PL.72': 'Dolnośląskie',
  'PL.83': 'Śląskie',
  'PL.86': 'Wielkopolskie',
  'PL.82': 'Pomorskie',
  'PL.74': 'Łódzkie',
  'NL.07': 'Noord-Holland',
  'NL.11': 'Zuid-Holland',
  'NL.09': 'Utrecht',
  'NL.06': 'Noord-Brabant',
  'FR.11': 'Île-de-France',
  'BE.BRU': 'Bruxelles-Capitale',
  'BE.VLG': 'Vlaanderen',
  'BE.WAL': 'Wallonie',
};

export const EU_COUNTRIES = Object.keys(LOCALES) as CountryCode[];

/** Local names of large cities whose GeoNames name is the English exonym. */
export const LOCAL_CITY_NAMES: Record<string, string> = {
  'DE:Munich': 'München',
  'DE:Cologne': 'Köln',
  'DE:Nuremberg': 'Nürnberg',
  'DE:Hanover': 'Hannover',
  'AT:Vienna': 'Wien',
  'IT:Rome': 'Roma',
  'IT:Milan': 'Milano',
  'IT:Naples': 'Napoli',
  'IT:Turin': 'Torino',
  'IT:Florence': 'Firenze',
  'IT:Venice': 'Venezia',
  'IT:Genoa': 'Genova',
  'IT:Padua': 'Padova',
  'CZ:Prague': 'Praha',
  'PL:Warsaw': 'Warszawa',
  'PL:Krakow': 'Kraków',
  'PL:Wroclaw': 'Wrocław',
  'PL:Lodz': 'Łódź',
  'PL:Poznan': 'Poznań',
  'PL:Gdansk': 'Gdańsk',
  'BE:Brussels': 'Bruxelles',
  'BE:Ghent': 'Gent',
  'BE:Bruges': 'Brugge',
  'BE:Antwerp': 'Antwerpen',
  'PT:Lisbon': 'Lisboa',
  'RO:Bucharest': 'București',
  'GR:Athens': 'Athína',
  'DK:Copenhagen': 'København',
  'NL:The Hague': 'Den Haag',
  'SE:Gothenburg': 'Göteborg',
  'ES:Seville': 'Sevilla',
  'ES:Saragossa': 'Zaragoza',
  'LV:Riga': 'Rīga',
  'CY:Nicosia': 'Lefkosía',
};
