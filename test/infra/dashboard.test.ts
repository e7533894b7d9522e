/**
 * The dashboard in the cloud (lib/cloud/constructs/dashboard-site.ts): a private bucket behind CloudFront
 * with Origin Access Control, a strict CSP, the SPA's routes falling back to index.html, and the user
 * pool's client set up for the authorization code flow with the site's callback and logout URLs.
 */
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { VoiceAgentStack } from '../../lib/cloud/stack.js';

const stack = new VoiceAgentStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'DashStack', {
  env: { account: '123456789012', region: 'ap-southeast-2' },
  dashboardAssets: fileURLToPath(new URL('../fixtures/web-dist', import.meta.url)),
});
const template = Template.fromStack(stack);

describe('dashboard site', () => {
  it('serves a private bucket through CloudFront with Origin Access Control, HTTPS only', () => {
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: { LogFilePrefix: 'dashboard-bucket/' },
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultRootObject: 'index.html',
        DefaultCacheBehavior: Match.objectLike({ ViewerProtocolPolicy: 'redirect-to-https' }),
        CustomErrorResponses: [
          { ErrorCode: 403, ResponseCode: 200, ResponsePagePath: '/index.html', ErrorCachingMinTTL: 0 },
          { ErrorCode: 404, ResponseCode: 200, ResponsePagePath: '/index.html', ErrorCachingMinTTL: 0 },
        ],
      }),
    });
  });

  it('sends a strict CSP: scripts only from the site, no inline script or eval', () => {
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    const csp = JSON.stringify(Object.values(policies)[0]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
  });

  it('the user pool client signs in with the code flow, back to the site; the hosted UI has a domain', () => {
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: ['openid', 'email'],
      GenerateSecret: false,
      CallbackURLs: [
        Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith(['/auth/callback'])]) }),
      ],
      SupportedIdentityProviders: ['COGNITO'],
    });
    template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'voice-agent-123456789012' });
  });

  it('deploys the build and a config.json that names the API, the issuer and the client', () => {
    const deployments = Object.values(template.findResources('Custom::CDKBucketDeployment'));
    expect(deployments).toHaveLength(1);
    const properties = (deployments[0] as { Properties: Record<string, unknown> }).Properties;
    // Two sources: web/dist and config.json (whose values are filled in at deploy: markers).
    expect((properties.SourceObjectKeys as unknown[]).length).toBe(2);
    const markers = JSON.stringify(properties.SourceMarkers);
    expect(markers).toContain('HttpApi');
    expect(markers).toContain('UserPoolDashboardClient');
    expect(markers).toContain('UserPool');
    template.hasOutput('DashboardUrl', {});
  });

  it('the recordings bucket admits the dashboard origin (presigned uploads and playback)', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [Match.objectLike({ AllowedMethods: ['GET', 'HEAD', 'PUT'] })],
      },
    });
  });
});
