/**
 * Check digits and formats of structured identifiers: a candidate that fails its check is not that
 * identifier (a random digit string passes Luhn one time in ten, a TFN's check one in eleven).
 */

const digitsOf = (value: string): number[] => [...value].map((c) => c.charCodeAt(0) - 48);

/** Luhn (payment cards): 13 to 19 digits whose issuer prefix is a card network's. */
export function isCardNumber(digits: string): boolean {
  if (!/^\d{13,19}$/.test(digits)) return false;
  if (!/^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6)/.test(digits)) return false;
  let sum = 0;
  const d = digitsOf(digits);
  for (let i = d.length - 1, double = false; i >= 0; i -= 1, double = !double) {
    let v = d[i]!;
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
  }
  return sum % 10 === 0;
}

/** An Australian tax file number: 9 digits (8 for some old ones), weighted sum divisible by 11. */
export function isTfn(digits: string): boolean {
  const weights =
    digits.length === 9
      ? [1, 4, 3, 7, 5, 8, 6, 9, 10]
      : digits.length === 8
        ? [10, 7, 8, 4, 6, 3, 5, 1]
        : undefined;
  if (!weights || !/^\d+$/.test(digits) || /^0+$/.test(digits)) return false;
  const sum = digitsOf(digits).reduce((acc, v, i) => acc + v * weights[i]!, 0);
  return sum % 11 === 0;
}

/** An Australian Medicare card number: 10 digits (11 with the person's number), first 2–6, check 9th. */
export function isMedicare(digits: string): boolean {
  if (!/^[2-6]\d{9,10}$/.test(digits)) return false;
  const d = digitsOf(digits);
  const weights = [1, 3, 7, 9, 1, 3, 7, 9];
  const sum = weights.reduce((acc, w, i) => acc + w * d[i]!, 0);
  return sum % 10 === d[8];
}

/** A US social security number's parts: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function isSsn(digits: string): boolean {
  const m = /^(\d{3})(\d{2})(\d{4})$/.exec(digits);
  if (!m) return false;
  const [, area, group, serial] = m;
  return area !== '000' && area !== '666' && !area!.startsWith('9') && group !== '00' && serial !== '0000';
}

/** An IBAN (spaces removed, upper case): country, check digits, and mod 97 of the rearranged value = 1. */
export function isIban(value: string): boolean {
  const v = value.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v)) return false;
  const rearranged = v.slice(4) + v.slice(0, 4);
  let remainder = 0;
  for (const c of rearranged) {
    const code = c >= 'A' && c <= 'Z' ? String(c.charCodeAt(0) - 55) : c;
    for (const digit of code) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/**
 * An Australian BSB: six digits whose first names a bank's state code pattern (0–9 all used), written
 * `062-000` or `062 000` or `062000`. Alone, six digits are too common to be one: the caller checks
 * the context (a `BSB` or `account` said before) or the hyphenated form.
 */
export const isBsb = (digits: string): boolean => /^\d{6}$/.test(digits) && !/^0{6}$/.test(digits);

/** A US ABA routing number: 9 digits, 3-7-1 weighted sum divisible by 10. */
export function isAbaRouting(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  const d = digitsOf(digits);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0 && !/^0+$/.test(digits);
}
