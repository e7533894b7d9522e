/**
 * An access token for `email` from the running local identity provider (POST <issuer>/token, the
 * client-credentials grant with the local `email` extension). `extra` carries test overrides such as
 * `expires_in`, `token_use` or `client_id`.
 */
export async function requestAccessToken(
  state: { urls?: { identity_token?: string }; env: Record<string, string> },
  email: string,
  extra: Record<string, string | number | undefined> = {},
): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', email });
  for (const [name, value] of Object.entries(extra)) {
    if (value !== undefined) form.set(name, String(value));
  }
  const endpoint = state.urls?.identity_token ?? `${state.env.JWT_ISSUER}/token`;
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const body = (await response.json()) as { access_token?: string; error?: string };
  if (!response.ok || !body.access_token) {
    throw new Error(`the identity provider answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}
