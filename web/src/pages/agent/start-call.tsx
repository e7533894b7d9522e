import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../../api/client';
import type { Agent } from '../../api/queries/agents';
import { phoneNumberQueries } from '../../api/queries/phone-numbers';
import { Field, FormError } from '../../components/ui';
import { useWorkspaceId } from '../../session';

/** Places an outbound call from the agent, then opens the call's page. */
export function StartCall({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const [to, setTo] = useState('');
  const [from, setFrom] = useState('');
  const [parameters, setParameters] = useState('');
  const numbers = useQuery(phoneNumberQueries.all(workspace_id));
  const start = useMutation({
    mutationFn: () => {
      const pairs = parameters
        .split('\n')
        .map((line) => line.split('='))
        .filter((pair) => pair.length >= 2 && pair[0].trim() !== '');
      return ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call', {
          params: { path: { workspace_id, agent_id: agent.id } },
          body: {
            to_phone: to.trim(),
            from_phone: from || null,
            parameters: Object.fromEntries(
              pairs.map(([key, ...rest]) => [key.trim(), rest.join('=').trim()]),
            ),
          },
        }),
      );
    },
    onSuccess: (call) => route(`/calls/${call.id}`),
  });
  return (
    <form
      aria-label="Start a call"
      onSubmit={(event) => {
        event.preventDefault();
        start.mutate();
      }}
    >
      <h3>Start a call</h3>
      <div class="grid">
        <Field label="To phone" name="to_phone" error={start.error} hint="E.164, e.g. +61491570156">
          {(p) => (
            <input {...p} type="tel" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
          )}
        </Field>
        <Field label="From number" name="from_phone" error={start.error}>
          {(p) => (
            <select {...p} value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
              <option value="">The agent's number</option>
              {(numbers.data?.items ?? []).map((n) => (
                <option key={n.id} value={n.phone_number}>
                  {n.phone_number}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Parameters" name="parameters" error={start.error} hint="One name=value a line.">
        {(p) => (
          <textarea
            {...p}
            rows={3}
            value={parameters}
            onInput={(e) => setParameters(e.currentTarget.value)}
          />
        )}
      </Field>
      <FormError error={start.error} />
      <button type="submit" class="primary" disabled={start.isPending}>
        Start call
      </button>
    </form>
  );
}
