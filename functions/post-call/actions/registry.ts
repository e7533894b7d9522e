import type { ActionType } from '../entities.js';
import type { PostCallAction, WrittenAction } from './action.js';

/**
 * Every action type and where its implementation is. The type is a mapped type over ACTION_TYPES, so
 * an action type without an implementation here (or an implementation of another type's config) does
 * not compile. Each is loaded by the first message of its type (a container running webhooks never
 * loads the SMS or enrichment code). Which of them are charged (held while billing is past due) is
 * CHARGED_ACTIONS in entities.ts.
 */
export const ACTIONS: { readonly [T in ActionType]: () => Promise<PostCallAction<T>> } = {
  sms_owner: async () => (await import('./sms-owner.js')).smsOwner,
  sms_caller: async () => (await import('./sms-caller.js')).smsCaller,
  email_summary: async () => (await import('./email-summary.js')).emailSummary,
  webhook: async () => (await import('./webhook.js')).webhook,
  contact_update: async () => (await import('./contact-update.js')).contactUpdate,
  profile_enrichment: async () => (await import('./profile-enrichment.js')).profileEnrichment,
};

/**
 * The written actions (action.ts WrittenAction): their whole effect is written with the run's result
 * in one transaction, without a claim first. The others are claimed, run, then completed.
 */
export const WRITTEN_ACTIONS: { readonly [T in ActionType]?: () => Promise<WrittenAction<T>> } = {
  webhook: async () => (await import('./webhook.js')).webhookWritten,
};
