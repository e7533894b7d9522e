/**
 * The dashboard in the cloud: S3 + CloudFront (constructs/dashboard-site.ts), the Cognito hosted UI's
 * domain and the user pool client it signs in with (code + PKCE), and the recordings bucket's CORS rule
 * for the pages that upload imports and play recordings.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { DashboardSite } from './constructs/dashboard-site.js';

export interface DashboardOptions {
  userPool: cognito.UserPool;
  bucket: s3.Bucket;
  accessLogsBucket: s3.Bucket;
  /** The built dashboard to deploy. */
  assets: string;
  /** The Cognito hosted UI's domain prefix. */
  authDomainPrefix: string;
  apiUrl: string;
  jwtIssuer: string;
  relayUrl: string;
  /** Browser voice calls use Twilio's Voice JavaScript SDK: its hosts are allowed by the CSP. */
  twilioVoiceSdk?: boolean;
  logRetention: logs.RetentionDays;
}

export function addDashboard(
  stack: Stack,
  options: DashboardOptions,
): { dashboard: DashboardSite; userPoolClient: cognito.UserPoolClient } {
  const { userPool, authDomainPrefix } = options;
  userPool.addDomain('AuthDomain', { cognitoDomain: { domainPrefix: authDomainPrefix } });
  const dashboard = new DashboardSite(stack, 'Dashboard', {
    assets: options.assets,
    accessLogsBucket: options.accessLogsBucket,
    apiUrl: options.apiUrl,
    authDomain: `${authDomainPrefix}.auth.${stack.region}.amazoncognito.com`,
    issuer: options.jwtIssuer,
    // The test chat opens the voice relay from the page (CSP connect-src, config.json relay_url).
    relayUrl: options.relayUrl,
    twilioVoiceSdk: options.twilioVoiceSdk,
    logRetention: options.logRetention,
  });
  const userPoolClient = userPool.addClient('DashboardClient', {
    generateSecret: false,
    authFlows: { userSrp: true },
    oAuth: {
      flows: { authorizationCodeGrant: true },
      scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL],
      callbackUrls: [`${dashboard.url}/auth/callback`],
      logoutUrls: [`${dashboard.url}/`],
    },
    supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
    preventUserExistenceErrors: true,
    enableTokenRevocation: true,
    accessTokenValidity: Duration.hours(1),
    idTokenValidity: Duration.hours(1),
    refreshTokenValidity: Duration.days(30),
  });
  dashboard.publish(userPoolClient.userPoolClientId);
  // The dashboard uploads imports to presigned URLs and plays recordings from them.
  options.bucket.addCorsRule({
    allowedOrigins: [dashboard.url],
    allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.PUT],
    allowedHeaders: ['*'],
    maxAge: 600,
  });
  return { dashboard, userPoolClient };
}
