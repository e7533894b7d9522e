import { UserManager, WebStorageStateStore, type User } from 'oidc-client-ts';
import type { DashboardConfig } from './config';

/**
 * Sign-in: OpenID Connect authorization code + PKCE (oidc-client-ts). The user and the sign-in state
 * live in sessionStorage (gone with the tab), never localStorage.
 */
export const CALLBACK_PATH = '/auth/callback';

let manager: UserManager | undefined;

export function userManager(config: DashboardConfig): UserManager {
  manager ??= new UserManager({
    authority: config.oidc_authority,
    client_id: config.client_id,
    redirect_uri: `${location.origin}${CALLBACK_PATH}`,
    post_logout_redirect_uri: `${location.origin}/`,
    response_type: 'code',
    scope: config.scope,
    userStore: new WebStorageStateStore({ store: sessionStorage }),
    stateStore: new WebStorageStateStore({ store: sessionStorage }),
    automaticSilentRenew: false,
    loadUserInfo: false,
  });
  return manager;
}

/** The signed-in user with a token still valid, else undefined. */
export async function currentUser(config: DashboardConfig): Promise<User | undefined> {
  const user = await userManager(config).getUser();
  return user && !user.expired ? user : undefined;
}

export async function signIn(config: DashboardConfig, returnTo: string): Promise<void> {
  await userManager(config).signinRedirect({ state: { returnTo } });
}

/** Completes the redirect; returns where to go next. */
export async function completeSignIn(config: DashboardConfig): Promise<string> {
  const user = await userManager(config).signinRedirectCallback();
  const state = user.state as { returnTo?: string } | undefined;
  return state?.returnTo && state.returnTo.startsWith('/') ? state.returnTo : '/';
}

/**
 * Signs out: the local user is dropped, then the provider's session ends. Cognito's logout is not the
 * standard end_session endpoint: `/logout?client_id=…&logout_uri=…`.
 */
export async function signOut(config: DashboardConfig): Promise<void> {
  const users = userManager(config);
  if (config.logout_url) {
    await users.removeUser();
    const url = new URL(config.logout_url);
    url.searchParams.set('client_id', config.client_id);
    url.searchParams.set('logout_uri', `${location.origin}/`);
    location.assign(url.href);
    return;
  }
  const user = await users.getUser();
  await users.removeUser();
  await users.signoutRedirect({ id_token_hint: user?.id_token });
}
