/**
 * The categories of personal data the redactor finds, and the token each becomes in stored text
 * (`[EMAIL_1]`, `[PHONE_NUMBER_2]`, …: numbered by first appearance within a call).
 */
export const PII_CATEGORIES = [
  'email',
  'phone_number',
  'credit_card',
  'bank_account',
  'government_id',
  'date_of_birth',
  'address',
  'person_name',
] as const;

export type PiiCategory = (typeof PII_CATEGORIES)[number];

export const isPiiCategory = (value: string): value is PiiCategory =>
  (PII_CATEGORIES as readonly string[]).includes(value);

/** The token's label: `EMAIL`, `PHONE_NUMBER`, … */
export const tokenLabel = (category: PiiCategory): string => category.toUpperCase();

/** What a line becomes when the redactor failed on it: never the raw text. */
export const REDACTION_FAILED = '[REDACTION_FAILED]';

/** Any token the redactor writes (so a second pass leaves them alone and numbers after them). */
export const TOKEN_PATTERN =
  /\[(EMAIL|PHONE_NUMBER|CREDIT_CARD|BANK_ACCOUNT|GOVERNMENT_ID|DATE_OF_BIRTH|ADDRESS|PERSON_NAME)_(\d+)\]/g;
