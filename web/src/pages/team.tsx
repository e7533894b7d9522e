import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { ORGANISATION_ROLE_LABELS, WORKSPACE_ROLE_LABELS, rolesText } from '../components/roles';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession } from '../session';

type OrgRole = 'regular' | 'admin';
type WorkspaceRole = 'admin' | 'member' | 'viewer';

export default function Team() {
  const { organisation, workspace, userId } = useSession();
  const organisation_id = organisation.organisation_id;
  const canManage = organisation.role === 'owner' || organisation.role === 'admin';
  const queries = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('regular');
  const [workspaceRole, setWorkspaceRole] = useState<WorkspaceRole>('member');
  const refresh = () => queries.invalidateQueries({ queryKey: ['members', organisation_id] });
  const invite = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/organisations/{organisation_id}/invitations', {
          params: { path: { organisation_id } },
          body: {
            email,
            role,
            workspaces: workspace ? [{ workspace_id: workspace.id, role: workspaceRole }] : [],
          },
        }),
      ),
    onSuccess: () => {
      setEmail('');
      void refresh();
    },
  });
  const resend = useMutation({
    mutationFn: (invitation_id: string) =>
      ok(
        api().POST('/api/v1/organisations/{organisation_id}/invitations/{invitation_id}/resend', {
          params: { path: { organisation_id, invitation_id } },
        }),
      ),
  });
  const changeRole = useMutation({
    mutationFn: ({ user_id, role }: { user_id: string; role: OrgRole }) =>
      ok(
        api().PATCH('/api/v1/organisations/{organisation_id}/members/{user_id}', {
          params: { path: { organisation_id, user_id } },
          body: { role },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  const remove = useMutation({
    mutationFn: (user_id: string) =>
      ok(
        api().DELETE('/api/v1/organisations/{organisation_id}/members/{user_id}', {
          params: { path: { organisation_id, user_id } },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  return (
    <section>
      <PageHeader title="Team" />
      <p>
        Your roles: {rolesText(organisation.role, workspace?.role)}. Organisation roles: Owner, Admin,
        Regular; workspace roles: Admin, Member, Viewer.
      </p>
      {canManage && (
        <form
          class="card grid"
          aria-label="Invite a member"
          onSubmit={(e) => {
            e.preventDefault();
            invite.mutate();
          }}
        >
          <Field label="Email to invite" name="email" error={invite.error}>
            {(p) => (
              <input
                {...p}
                type="email"
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
                required
              />
            )}
          </Field>
          <Field label="Organisation role" name="role" error={invite.error}>
            {(p) => (
              <select {...p} value={role} onChange={(e) => setRole(e.currentTarget.value as OrgRole)}>
                <option value="regular">{ORGANISATION_ROLE_LABELS.regular}</option>
                <option value="admin">{ORGANISATION_ROLE_LABELS.admin}</option>
              </select>
            )}
          </Field>
          <Field
            label={`Role in ${workspace?.name ?? 'this workspace'}`}
            name="workspaces.0.role"
            error={invite.error}
          >
            {(p) => (
              <select
                {...p}
                value={workspaceRole}
                onChange={(e) => setWorkspaceRole(e.currentTarget.value as WorkspaceRole)}
              >
                <option value="admin">{WORKSPACE_ROLE_LABELS.admin}</option>
                <option value="member">{WORKSPACE_ROLE_LABELS.member}</option>
                <option value="viewer">{WORKSPACE_ROLE_LABELS.viewer}</option>
              </select>
            )}
          </Field>
          <FormError error={invite.error} />
          <div class="buttons">
            <button type="submit" class="primary" disabled={invite.isPending}>
              Send invitation
            </button>
          </div>
        </form>
      )}
      <FormError error={resend.error ?? changeRole.error ?? remove.error} />
      {resend.isSuccess && <p role="status">Invitation sent again.</p>}
      <PagedTable
        caption="Members and invitations"
        queryKey={['members', organisation_id]}
        rowKey={(m) => m.user_id ?? m.invitation_id ?? m.email}
        empty="No members."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/organisations/{organisation_id}/members', {
              params: { path: { organisation_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Email', render: (m) => m.email },
          {
            label: 'Organisation role',
            render: (m) =>
              canManage && m.user_id && m.role !== 'owner' && m.user_id !== userId ? (
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  onChange={(e) =>
                    changeRole.mutate({ user_id: m.user_id!, role: e.currentTarget.value as OrgRole })
                  }
                >
                  <option value="regular">{ORGANISATION_ROLE_LABELS.regular}</option>
                  <option value="admin">{ORGANISATION_ROLE_LABELS.admin}</option>
                </select>
              ) : (
                ORGANISATION_ROLE_LABELS[m.role]
              ),
          },
          {
            label: 'Status',
            render: (m) => (m.status === 'pending' ? 'Invited' : `Joined ${when(m.joined_at)}`),
          },
          {
            label: 'Actions',
            render: (m) => {
              if (!canManage) return null;
              if (m.status === 'pending' && m.invitation_id)
                return (
                  <button
                    type="button"
                    onClick={() => resend.mutate(m.invitation_id!)}
                    aria-label={`Resend invitation to ${m.email}`}
                  >
                    Resend
                  </button>
                );
              if (m.user_id && m.role !== 'owner' && m.user_id !== userId)
                return (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Remove ${m.email}`}
                    onClick={() => {
                      if (confirm(`Remove ${m.email} from the organisation?`)) remove.mutate(m.user_id!);
                    }}
                  >
                    Remove
                  </button>
                );
              return null;
            },
          },
        ]}
      />
    </section>
  );
}
