import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { api, ok } from './api/client';
import { ErrorState, Loading } from './components/ui';

export interface Organisation {
  organisation_id: string;
  name: string | null;
  role: 'owner' | 'admin' | 'regular';
}

export interface Workspace {
  id: string;
  name: string;
  role: 'admin' | 'member' | 'viewer' | null;
}

export interface Session {
  email: string;
  userId: string;
  organisations: Organisation[];
  organisation: Organisation;
  workspaces: Workspace[];
  workspace: Workspace | undefined;
  /** The caller may change things in this workspace (everyone but a viewer). */
  canWrite: boolean;
  /** Owner-only actions (billing). */
  isOwner: boolean;
  selectOrganisation(id: string): void;
  selectWorkspace(id: string): void;
}

const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The current workspace's id; pages under the shell are only shown when there is one. */
export function useWorkspaceId(): string {
  const { workspace } = useSession();
  if (!workspace) throw new Error('no workspace selected');
  return workspace.id;
}

const remembered = (key: string) => sessionStorage.getItem(key) ?? undefined;

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const me = useQuery({ queryKey: ['me'], queryFn: () => ok(api().GET('/api/v1/me')) });
  const [organisationId, setOrganisationId] = useState(remembered('organisation_id'));
  const [workspaceId, setWorkspaceId] = useState(remembered('workspace_id'));
  const organisations = (me.data?.organisations ?? []) as Organisation[];
  const organisation = organisations.find((o) => o.organisation_id === organisationId) ?? organisations[0];
  const workspaces = useQuery({
    queryKey: ['workspaces', organisation?.organisation_id],
    enabled: organisation !== undefined,
    queryFn: () =>
      ok(
        api().GET('/api/v1/organisations/{organisation_id}/workspaces', {
          params: { path: { organisation_id: organisation!.organisation_id }, query: { limit: 100 } },
        }),
      ),
  });
  const workspaceList = (workspaces.data?.items ?? []) as Workspace[];
  const workspace = workspaceList.find((w) => w.id === workspaceId) ?? workspaceList[0];

  useEffect(() => {
    if (organisation) sessionStorage.setItem('organisation_id', organisation.organisation_id);
    if (workspace) sessionStorage.setItem('workspace_id', workspace.id);
  }, [organisation?.organisation_id, workspace?.id]);

  if (me.isPending) return <Loading what="Signing in…" />;
  if (me.isError) return <ErrorState error={me.error} retry={() => void me.refetch()} />;
  if (!organisation)
    return (
      <main class="centred">
        <h1>No organisation yet</h1>
        <p>Ask an owner to invite you, or create an organisation through the API.</p>
        <p>
          <a href="/invitations">Your invitations</a>
        </p>
      </main>
    );
  if (workspaces.isPending) return <Loading what="Loading workspaces…" />;
  if (workspaces.isError)
    return <ErrorState error={workspaces.error} retry={() => void workspaces.refetch()} />;

  const session: Session = {
    email: me.data.email,
    userId: me.data.user_id,
    organisations,
    organisation,
    workspaces: workspaceList,
    workspace,
    canWrite: workspace !== undefined && workspace.role !== 'viewer',
    isOwner: organisation.role === 'owner',
    selectOrganisation: (id) => {
      setOrganisationId(id);
      setWorkspaceId(undefined);
      sessionStorage.removeItem('workspace_id');
    },
    selectWorkspace: setWorkspaceId,
  };
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
