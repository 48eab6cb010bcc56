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

export function foldText(text: string): string {
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
