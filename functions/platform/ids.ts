import { monotonicFactory } from 'ulid';

/** Every id is an opaque string: a type prefix, an underscore and a ULID (sortable by creation time). */
export const ID_PREFIXES = {
  organisation: 'org',
  workspace: 'ws',
  user: 'usr',
  agent: 'ag',
  phoneNumber: 'pn',
  call: 'call',
  apiKey: 'key',
  invitation: 'inv',
  contact: 'ct',
  note: 'note',
  campaign: 'cmp',
  batchContact: 'bc',
  job: 'job',
  knowledgeBase: 'kb',
  knowledgeItem: 'kbi',
  integration: 'int',
  workflow: 'wf',
  workflowRun: 'wfr',
  action: 'act',
  ledgerEntry: 'led',
  delivery: 'dlv',
  message: 'msg',
  event: 'evt',
  evaluation: 'evl',
  webhookEndpoint: 'whe',
  sms: 'sms',
  /** A sealed header value of an agent's tool (agents/tool-secrets.ts). */
  toolSecret: 'tsec',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ulid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid()}`;
}

const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `id` has the shape of an id of this kind (the prefix and a ULID). */
export function isId(kind: IdKind, id: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return id.startsWith(prefix) && ULID_PATTERN.test(id.slice(prefix.length));
}
