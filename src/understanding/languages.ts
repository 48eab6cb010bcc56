// The 24 official languages of the EU, the one list every reader of people's text goes by: what
// the understanding module knows is kept per language, and adding a language is adding its data.
export const EU_LANGUAGES = [
  { code: 'bg', name: 'Bulgarian', script: 'Cyrl' },
  { code: 'cs', name: 'Czech', script: 'Latn' },
  { code: 'da', name: 'Danish', script: 'Latn' },
  { code: 'de', name: 'German', script: 'Latn' },
  { code: 'el', name: 'Greek', script: 'Grek' },
  { code: 'en', name: 'English', script: 'Latn' },
  { code: 'es', name: 'Spanish', script: 'Latn' },
  { code: 'et', name: 'Estonian', script: 'Latn' },
  { code: 'fi', name: 'Finnish', script: 'Latn' },
  { code: 'fr', name: 'French', script: 'Latn' },
  { code: 'ga', name: 'Irish', script: 'Latn' },
  { code: 'hr', name: 'Croatian', script: 'Latn' },
  { code: 'hu', name: 'Hungarian', script: 'Latn' },
  { code: 'it', name: 'Italian', script: 'Latn' },
  { code: 'lt', name: 'Lithuanian', script: 'Latn' },
  { code: 'lv', name: 'Latvian', script: 'Latn' },
  { code: 'mt', name: 'Maltese', script: 'Latn' },
  { code: 'nl', name: 'Dutch', script: 'Latn' },
  { code: 'pl', name: 'Polish', script: 'Latn' },
  { code: 'pt', name: 'Portuguese', script: 'Latn' },
  { code: 'ro', name: 'Romanian', script: 'Latn' },
  { code: 'sk', name: 'Slovak', script: 'Latn' },
  { code: 'sl', name: 'Slovenian', script: 'Latn' },
  { code: 'sv', name: 'Swedish', script: 'Latn' },
] as const;

export type LanguageCode = (typeof EU_LANGUAGES)[number]['code'];
