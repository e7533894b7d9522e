import type { ActionType } from '../entities.js';
import type { PostCallAction } from './action.js';
import { contactUpdate } from './contact-update.js';
import { emailSummary } from './email-summary.js';
import { profileEnrichment } from './profile-enrichment.js';
import { smsCaller } from './sms-caller.js';
import { smsOwner } from './sms-owner.js';
import { webhook } from './webhook.js';

/**
 * Every action type and its implementation. The type is a mapped type over ACTION_TYPES, so an action
 * type without an implementation here (or an implementation of another type's config) does not compile.
 * Which of them are charged (held while billing is past due) is CHARGED_ACTIONS in entities.ts.
 */
export const ACTIONS: { readonly [T in ActionType]: PostCallAction<T> } = {
  sms_owner: smsOwner,
  sms_caller: smsCaller,
  email_summary: emailSummary,
  webhook,
  contact_update: contactUpdate,
  profile_enrichment: profileEnrichment,
};
