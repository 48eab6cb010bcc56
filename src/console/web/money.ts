// Amounts in EUR as the console shows them.
import { h } from './dom.ts';

/** EUR as people read it: cents, or four decimals below a cent (the API's nine stay in the CSV and the tooltip). */
export function eurText(amount: number): string {
  const abs = Math.abs(amount);
  if (abs === 0 || abs >= 0.01) return `€${amount.toFixed(2)}`;
  if (abs >= 0.0001) return `€${amount.toFixed(4)}`;
  return amount > 0 ? '< €0.0001' : '> −€0.0001';
}

/** An amount of the API (a decimal string in EUR) as read, with the exact value as its tooltip. */
export function eurAmount(exact: string, attributes: Record<string, string> = {}): HTMLElement {
  return h('span', { ...attributes, title: `${exact} EUR`, 'data-exact': exact }, eurText(Number(exact)));
}

/** nano-EUR as the API's decimal string (nine decimals). */
export const nanoToEur = (nano: number): string => (nano / 1e9).toFixed(9);
export const eurToNano = (eur: string): number => Math.round(Number(eur) * 1e9);
