import type { FunctionComponent } from 'preact';
import { AnalysisSection } from './analysis';
import { CallsSection } from './calls';
import type { AgentDraft, SectionProps } from './draft';
import { KnowledgeSection } from './knowledge';
import { PostCallActionsSection } from './post-call-actions';
import { SettingsSection } from './settings';
import { ToolsSection } from './tools';
import { TransferSection } from './transfer';
import { VoiceSection } from './voice';
import { VoicemailSection } from './voicemail';

/**
 * The agent editor's sections, in the order of its left rail. A section of the form is one or more
 * parts, each a file of its own: a component that edits some fields of the draft, and the names of
 * those fields (the section is "changed" when one of them differs from the saved agent, and the Save
 * bar counts them). A new setting is a new file and one line here: in its section's `parts`, or a
 * new `{ id, label, parts }` line for a section of its own.
 */
export interface SectionPart {
  Component: FunctionComponent<SectionProps>;
  fields: (keyof AgentDraft)[];
}

export interface AgentSection {
  /** The section's anchor (`#section-<id>`) and key. */
  id: string;
  /** Its name in the rail and its heading. */
  label: string;
  parts: SectionPart[];
}

export const FORM_SECTIONS: AgentSection[] = [
  {
    id: 'prompt',
    label: 'Prompt & greeting',
    parts: [{ Component: SettingsSection, fields: ['name', 'prompt', 'greeting'] }],
  },
  {
    id: 'voice',
    label: 'Voice & language',
    parts: [
      {
        Component: VoiceSection,
        fields: ['voice', 'language', 'speechSpeed', 'expressiveness', 'ambientNoise'],
      },
    ],
  },
  { id: 'tools', label: 'Tools', parts: [{ Component: ToolsSection, fields: ['tools'] }] },
  {
    id: 'knowledge',
    label: 'Knowledge',
    parts: [{ Component: KnowledgeSection, fields: ['knowledgeBases'] }],
  },
  {
    id: 'call-handling',
    label: 'Call handling',
    parts: [
      {
        Component: CallsSection,
        fields: ['timezone', 'maxDuration', 'recording', 'interruptible', 'growthLoop', 'memories', 'terms'],
      },
      { Component: VoicemailSection, fields: ['voicemailOn', 'voicemailAction', 'voicemailMessage'] },
      { Component: TransferSection, fields: ['transferNumber', 'transferMode', 'transferWhisper'] },
    ],
  },
  {
    id: 'analysis',
    label: 'Analysis',
    parts: [{ Component: AnalysisSection, fields: ['successCriteria', 'fields'] }],
  },
  {
    id: 'post-call-actions',
    label: 'Post-call actions',
    parts: [{ Component: PostCallActionsSection, fields: ['actions'] }],
  },
];

/** The rail's sections after the form's: each an element of the page with this id. */
export const PAGE_SECTIONS: { id: string; label: string }[] = [
  { id: 'handoffs', label: 'Handoffs' },
  { id: 'redaction', label: 'PII redaction' },
  { id: 'versions', label: 'Versions' },
  { id: 'test', label: 'Test' },
];

export const sectionAnchor = (id: string): string => `section-${id}`;

// ── What changed ─────────────────────────────────────────────────────────────────────────────────

/** JSON of a draft value without its list items' editing keys (`key`: new on every draftOf). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (name, v: unknown) => (name === 'key' ? undefined : v));

/**
 * How many changes a field of the draft holds against the saved agent's draft: 0 or 1 for a value;
 * for a list (tools, analysis fields, post-call actions), one per item added, removed or edited
 * (tools and actions matched by their saved name or id, so a removed one is one change, not a shift).
 */
export function changesIn(draft: AgentDraft, base: AgentDraft, field: keyof AgentDraft): number {
  const now = draft[field];
  const then = base[field];
  if (!Array.isArray(now) || !Array.isArray(then)) return canonical(now) === canonical(then) ? 0 : 1;
  const identity = (item: unknown, index: number): string => {
    const it = item as { savedName?: string; id?: string };
    return it.savedName ?? it.id ?? (field === 'fields' ? `#${index}` : `new:${canonical(item)}:${index}`);
  };
  const before = new Map(then.map((item: unknown, index) => [identity(item, index), canonical(item)]));
  const after = new Map(now.map((item: unknown, index) => [identity(item, index), canonical(item)]));
  let count = 0;
  for (const [id, value] of after) if (before.get(id) !== value) count += 1;
  for (const id of before.keys()) if (!after.has(id)) count += 1;
  return count;
}

/** The changes in each form section (by id), and their total. */
export function sectionChanges(
  draft: AgentDraft,
  base: AgentDraft,
): { bySection: Map<string, number>; total: number } {
  const bySection = new Map<string, number>();
  let total = 0;
  for (const section of FORM_SECTIONS) {
    const count = section.parts
      .flatMap((part) => part.fields)
      .reduce((sum, field) => sum + changesIn(draft, base, field), 0);
    bySection.set(section.id, count);
    total += count;
  }
  return { bySection, total };
}

export const changesText = (count: number): string =>
  count === 0 ? 'No unsaved changes' : count === 1 ? '1 change' : `${count} changes`;
