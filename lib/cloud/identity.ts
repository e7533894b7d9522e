/** The dashboard's users: the Cognito user pool (its client is made with the dashboard, dashboard.ts). */
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';

export function addUserPool(stack: Stack): cognito.UserPool {
  return new cognito.UserPool(stack, 'UserPool', {
    signInAliases: { email: true },
    signInCaseSensitive: false,
    selfSignUpEnabled: true,
    autoVerify: { email: true },
    keepOriginal: { email: true },
    userVerification: { emailStyle: cognito.VerificationEmailStyle.CODE },
    standardAttributes: { email: { required: true, mutable: true } },
    passwordPolicy: {
      minLength: 12,
      requireLowercase: true,
      requireUppercase: true,
      requireDigits: true,
      requireSymbols: true,
      tempPasswordValidity: Duration.days(3),
    },
    accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
    mfa: cognito.Mfa.OPTIONAL,
    mfaSecondFactor: { otp: true, sms: false },
    featurePlan: cognito.FeaturePlan.ESSENTIALS,
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

/** The issuer of the pool's JWTs, which the functions verify. */
export const jwtIssuerOf = (stack: Stack, userPool: cognito.UserPool): string =>
  `https://cognito-idp.${stack.region}.amazonaws.com/${userPool.userPoolId}`;
