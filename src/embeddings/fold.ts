// Accent and case folding shared by the embedding engine and the directory's text columns:
// `München` and `MUNCHEN` both become `munchen`, `Łódź` becomes `lodz`, `Straße` `strasse`.
const SPECIAL: Record<string, string> = {
  ß: 'ss',
  ł: 'l',
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};

/** Anything but printable ASCII: only such text can hold accents or marks to drop (NFD leaves ASCII be). */
const NON_ASCII = /[^ -~]/;

export function foldText(text: string): string {
  // the common case (the gazetteer's 94,000 places fold their names at every start): the same
  // answer as below, without the normalization and the two replaces
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[ßłøæœđðþıħ]/g, (c) => SPECIAL[c] ?? c);
}

/** Folded words: letters and digits only. */
export function tokenize(text: string): string[] {
  return foldText(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}
