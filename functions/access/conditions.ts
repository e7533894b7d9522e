/** True when a single-item write failed on its condition (ElectroDB wraps the SDK's exception). */
export function isConditionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'ConditionalCheckFailedException') return true;
    if (typeof message === 'string' && message.includes('The conditional request failed')) return true;
    current = cause;
  }
  return false;
}
