/** A key's first letter in capitals (`calls` → `Calls`): how construct ids are spelled from keys. */
export const pascal = (key: string): string => key.charAt(0).toUpperCase() + key.slice(1);
