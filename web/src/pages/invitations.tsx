import { useEffect } from 'preact/hooks';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation, useRoute } from 'preact-iso';
import { api, ApiError, ok } from '../api/client';
import { signOut } from '../auth';
import { config } from '../config';
import { Empty, ErrorState, FormError, Loading, when } from '../components/ui';

/**
 * `/invitations/{invitation_id}` (the invitation email's link) and `/invitations` (every pending
 * invitation of the signed-in user): accept, and land in the organisation. Shown outside the shell,
 * since an invitee often belongs to no organisation yet.
 */

const ROLE_NAMES: Record<string, string> = { regular: 'a member', admin: 'an admin' };

type Pending = Awaited<ReturnType<typeof loadPage>>['items'][number];

const loadPage = (cursor: string | undefined) =>
  ok(api().GET('/api/v1/invitations', { params: { query: { cursor } } }));

function InvitationItem({
  invitation,
  onAccept,
  pending,
}: {
  invitation: Pending;
  onAccept: () => void;
  pending: boolean;
}) {
  const organisation = invitation.organisation_name ?? invitation.organisation_id;
  return (
    <li class="card" aria-label={`Invitation to ${organisation}`}>
      <p>
        <strong>{organisation}</strong> invites you as {ROLE_NAMES[invitation.role] ?? invitation.role} (sent{' '}
        {when(invitation.created_at)}).
      </p>
      <button type="button" class="primary" onClick={onAccept} disabled={pending}>
        Accept invitation
      </button>
    </li>
  );
}

export default function Invitations() {
  const { params } = useRoute();
  const { route } = useLocation();
  const queries = useQueryClient();
  const invitationId = params.id as string | undefined;
  const me = useQuery({ queryKey: ['me'], queryFn: () => ok(api().GET('/api/v1/me')) });
  const invitations = useInfiniteQuery({
    queryKey: ['my-invitations'],
    queryFn: ({ pageParam }) => loadPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const accept = useMutation({
    mutationFn: (invitation_id: string) =>
      ok(api().POST('/api/v1/invitations/{invitation_id}/accept', { params: { path: { invitation_id } } })),
    onSuccess: async (accepted) => {
      // The shell opens in the organisation (and workspace) just joined.
      sessionStorage.setItem('organisation_id', accepted.organisation_id);
      if (accepted.workspaces[0]) sessionStorage.setItem('workspace_id', accepted.workspaces[0].workspace_id);
      else sessionStorage.removeItem('workspace_id');
      await queries.invalidateQueries({ queryKey: ['me'] });
      route('/agents');
    },
  });

  const all = invitations.data?.pages.flatMap((page) => page.items) ?? [];
  const shown = invitationId ? all.filter((i) => i.invitation_id === invitationId) : all;
  const missing = invitationId !== undefined && invitations.isSuccess && shown.length === 0;
  // The one asked for may be on a later page (an address with many pending invitations).
  useEffect(() => {
    if (missing && invitations.hasNextPage && !invitations.isFetchingNextPage)
      void invitations.fetchNextPage();
  }, [missing, invitations.hasNextPage, invitations.isFetchingNextPage]);
  const refused = accept.error instanceof ApiError && accept.error.status === 404;
  return (
    <main id="main" class="centred invitations">
      <h1>{invitationId ? 'Accept your invitation' : 'Your invitations'}</h1>
      {me.data && (
        <p class="muted">
          Signed in as {me.data.email}.{' '}
          <button type="button" class="link" onClick={() => void signOut(config())}>
            Sign in with another address
          </button>
        </p>
      )}
      {invitations.isPending && <Loading what="Loading your invitations…" />}
      {invitations.isError && (
        <ErrorState error={invitations.error} retry={() => void invitations.refetch()} />
      )}
      {invitations.isSuccess && shown.length === 0 && !invitations.hasNextPage && (
        <Empty>
          {invitationId
            ? `No pending invitation here for ${me.data?.email ?? 'this address'}: it was accepted already, or it was sent to another address (sign in with that one).`
            : 'You have no pending invitations.'}
        </Empty>
      )}
      {shown.length > 0 && (
        <ul class="plain">
          {shown.map((invitation) => (
            <InvitationItem
              key={invitation.invitation_id}
              invitation={invitation}
              pending={accept.isPending}
              onAccept={() => accept.mutate(invitation.invitation_id)}
            />
          ))}
        </ul>
      )}
      {!invitationId && invitations.hasNextPage && (
        <button
          type="button"
          onClick={() => void invitations.fetchNextPage()}
          disabled={invitations.isFetchingNextPage}
        >
          {invitations.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
      {refused ? (
        <p class="form-error" role="alert">
          This invitation is not for {me.data?.email ?? 'this address'}: sign in with the address it was sent
          to.
        </p>
      ) : (
        <FormError error={accept.error} />
      )}
      <p>
        <a href="/agents">Go to the dashboard</a>
        {invitationId && (
          <>
            {' · '}
            <a href="/invitations">All your invitations</a>
          </>
        )}
      </p>
    </main>
  );
}
