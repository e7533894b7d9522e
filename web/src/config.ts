/** What the page reads from /config.json (written by the local gateway, or deployed next to the app). */
export interface DashboardConfig {
  /** The API's origin ('' = this origin); paths start with /api/v1. */
  api_base: string;
  /** The OpenID provider (the local one, or the Cognito user pool's issuer). */
  oidc_authority: string;
  client_id: string;
  /** The relay's test-chat WebSocket URL; '' when the relay is not available. */
  relay_url: string;
  /** Cognito's own logout endpoint (its discovery document has no end_session_endpoint); '' elsewhere. */
  logout_url: string;
  /** OIDC scopes asked for. */
  scope: string;
}

let loaded: DashboardConfig | undefined;

export async function loadConfig(): Promise<DashboardConfig> {
  if (loaded) return loaded;
  const response = await fetch('/config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json: ${response.status}`);
  const raw = (await response.json()) as Partial<DashboardConfig>;
  if (!raw.oidc_authority || !raw.client_id) throw new Error('config.json lacks oidc_authority or client_id');
  loaded = {
    api_base: raw.api_base ?? '',
    oidc_authority: raw.oidc_authority,
    client_id: raw.client_id,
    relay_url: raw.relay_url ?? '',
    logout_url: raw.logout_url ?? '',
    scope: raw.scope ?? 'openid email',
  };
  return loaded;
}

export function config(): DashboardConfig {
  if (!loaded) throw new Error('config.json not loaded yet');
  return loaded;
}
