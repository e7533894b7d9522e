import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { api, type Json } from '../../helpers/http.js';
import { tokenFor } from '../../helpers/tokens.js';
import { emailOutboxPath, readEmailOutbox } from '../../../functions/providers/email/local-outbox.js';

/** Shared steps of the access e2e tests: real tokens, real routes, nothing stubbed. */

/** A fresh address per test run, so tests never see each other's users. */
export const uniqueEmail = (label: string, domain = 'example.com') =>
  `${label}-${randomUUID().slice(0, 8)}@${domain}`;

export interface User {
  email: string;
  token: string;
  userId: string;
}

export async function user(label: string, domain?: string): Promise<User> {
  const email = uniqueEmail(label, domain);
  const token = await tokenFor(email);
  const verified = await api('GET', '/api/v1/auth/verify', { token });
  expect(verified.status).toBe(200);
  return { email, token, userId: verified.body.user_id };
}

export interface Org {
  owner: User;
  organisationId: string;
  /** The Default workspace. */
  workspaceId: string;
  body: Json;
}

export async function organisation(label = 'owner', name = `Org ${label}`): Promise<Org> {
  const owner = await user(label);
  const created = await api('POST', '/api/v1/organisations', { token: owner.token, body: { name } });
  expect(created.status).toBe(201);
  return {
    owner,
    organisationId: created.body.organisation_id,
    workspaceId: created.body.default_workspace_id,
    body: created.body,
  };
}

/** Invites `label` to the organisation and accepts as them: an accepted member. */
export async function member(
  org: Org,
  label: string,
  role: 'regular' | 'admin',
  workspaces: { workspace_id: string; role: 'admin' | 'member' | 'viewer' }[] = [],
  inviter: User = org.owner,
): Promise<User> {
  const email = uniqueEmail(label);
  const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
    token: inviter.token,
    body: { email, role, ...(workspaces.length > 0 ? { workspaces } : {}) },
  });
  expect(invited.status).toBe(201);
  const token = await tokenFor(email);
  const accepted = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, { token });
  expect(accepted.status).toBe(200);
  const verified = await api('GET', '/api/v1/auth/verify', { token });
  return { email, token, userId: verified.body.user_id };
}

export async function workspace(org: Org, name: string, by: User = org.owner): Promise<string> {
  const created = await api('POST', `/api/v1/organisations/${org.organisationId}/workspaces`, {
    token: by.token,
    body: { name },
  });
  expect(created.status).toBe(201);
  return created.body.workspace_id;
}

/** Emails the local provider "sent" to `to`, oldest first. */
export function emailsTo(to: string) {
  return readEmailOutbox(emailOutboxPath()).filter((email) => email.to === to);
}

/** Ids of the right shape that exist nowhere. */
export const UNKNOWN = {
  organisation: 'org_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  workspace: 'ws_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  user: 'usr_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  invitation: 'inv_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  apiKey: 'key_01JZZZZZZZZZZZZZZZZZZZZZZZ',
};
