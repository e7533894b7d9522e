/**
 * Credits are stored as integers of a sub-unit fine enough for every rule of docs/billing.md:
 * one credit is 60 units, so 20 credits a minute is exactly 20 units a second and 5 credits a
 * minute for memories exactly 5 units a second. Money is integer cents of AUD.
 */
export const UNITS_PER_CREDIT = 60;

export const creditsToUnits = (credits: number): number => Math.round(credits * UNITS_PER_CREDIT);
export const unitsToCredits = (units: number): number => units / UNITS_PER_CREDIT;

/** Credits for display: units / 60 rounded to 2 decimals (the units stay exact in the ledger). */
export const displayCredits = (units: number): number => Math.round((units / UNITS_PER_CREDIT) * 100) / 100;

/** Every price is in AUD (docs/billing.md). */
export const CURRENCY = 'aud';
/** One extra credit costs 0.01 AUD. */
export const EXTRA_CREDIT_PRICE_CENTS = 1;
/** An extra phone number costs 10 AUD per monthly billing cycle. */
export const EXTRA_NUMBER_PRICE_CENTS = 1000;

export const centsToAud = (cents: number): number => cents / 100;
