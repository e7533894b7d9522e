/**
 * Registers the demo webhook receiver (lib/local/demo-receiver.ts) with the local stack: every module
 * in this folder is imported before the stack starts its services.
 */
import '../demo-receiver.js';
