import { JwtVerifier } from 'aws-jwt-verify';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import { config } from '../config.js';

/**
 * Verifies the identity provider's access tokens: signature (RS256 against the JWKS, cached), issuer,
 * expiry, `token_use: access` and the app client id (Cognito access tokens carry `client_id`, not
 * `aud`). The same code verifies Cognito in the cloud and the local OpenID provider; only the JWKS
 * fetcher differs, because aws-jwt-verify's own fetcher speaks https only and the local one is http.
 */
type Verifier = { verify(token: string): Promise<JwtPayload> };
let verifier: Verifier | undefined;

const httpFetcher = {
  async fetch(uri: string): Promise<ArrayBuffer> {
    const response = await fetch(uri, { signal: AbortSignal.timeout(3000) });
    if (!response.ok) throw new Error(`JWKS fetch failed: ${response.status}`);
    return response.arrayBuffer();
  },
};

function jwtVerifier(): Verifier {
  if (!verifier) {
    const { JWT_ISSUER, JWT_JWKS_URI, JWT_CLIENT_ID, STAGE } = config();
    if (!JWT_ISSUER || !JWT_JWKS_URI || !JWT_CLIENT_ID)
      throw new Error('JWT_ISSUER, JWT_JWKS_URI and JWT_CLIENT_ID must be set');
    const jwksCache = STAGE === 'local' ? new SimpleJwksCache({ fetcher: httpFetcher }) : undefined;
    verifier = JwtVerifier.create(
      {
        issuer: JWT_ISSUER,
        audience: null,
        jwksUri: JWT_JWKS_URI,
        customJwtCheck: ({ payload }) => {
          if (payload.token_use !== 'access') throw new Error('not an access token');
          if (payload.client_id !== JWT_CLIENT_ID) throw new Error('token issued to another client');
          if (typeof payload.sub !== 'string' || payload.sub.length === 0)
            throw new Error('token has no subject');
        },
      },
      jwksCache ? { jwksCache } : undefined,
    ) as unknown as Verifier;
  }
  return verifier;
}

export interface VerifiedAccessToken {
  subject: string;
  email?: string;
  username?: string;
}

/** Resolves to the token's identity, or rejects for any invalid token. */
export async function verifyAccessToken(token: string): Promise<VerifiedAccessToken> {
  const payload = await jwtVerifier().verify(token);
  return {
    subject: String(payload.sub),
    email: typeof payload.email === 'string' ? payload.email.toLowerCase() : undefined,
    username: typeof payload.username === 'string' ? payload.username : undefined,
  };
}
