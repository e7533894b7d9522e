import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';

/** What `@twilio/voice-sdk` connects to: signalling, insights and its sounds (fetched, then played). */
export const TWILIO_VOICE_SDK_CONNECT = ['wss://*.twilio.com', 'https://*.twilio.com'];

export interface DashboardSiteProps {
  /** The built dashboard (web/dist, `npm run build:web`). */
  assets: string;
  /** Where the site's CloudFront and S3 access logs go. */
  accessLogsBucket: s3.IBucket;
  /** The HTTP API's URL: what the page calls, and the CSP's connect-src. */
  apiUrl: string;
  /** The Cognito hosted UI's domain (`<prefix>.auth.<region>.amazoncognito.com`). */
  authDomain: string;
  /** The user pool's issuer (`https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  issuer: string;
  /** The test chat's relay (a wss:// URL), when deployed. */
  relayUrl?: string;
  /**
   * Browser voice calls through `@twilio/voice-sdk`: its signalling and insights (wss/https on
   * twilio.com: `voice-js.*.twilio.com`, `eventgw.twilio.com`, `sdkgw.*.twilio.com`) and its ringing
   * and tone sounds (`sdk.twilio.com`) are allowed; the media itself is WebRTC, which CSP does not govern.
   */
  twilioVoiceSdk?: boolean;
  /** Retention of the deployment handler's log group (default one month). */
  logRetention?: logs.RetentionDays;
}

/**
 * The dashboard in the cloud: a private S3 bucket read by CloudFront through Origin Access Control
 * (no public access, TLS only), the SPA's routes answered with index.html, and every response carrying
 * a strict Content-Security-Policy (no inline script). config.json is written at deploy with the API,
 * the user pool and its client: the page reads it at start (`publish()`, once the client exists).
 */
export class DashboardSite extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly url: string;
  private readonly props: DashboardSiteProps;

  constructor(scope: Construct, id: string, props: DashboardSiteProps) {
    super(scope, id);
    this.props = props;
    if (!existsSync(join(props.assets, 'index.html'))) {
      throw new Error(`The dashboard is not built (${props.assets}): run npm run build:web`);
    }
    const region = Stack.of(this).region;

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: props.accessLogsBucket,
      serverAccessLogsPrefix: 'dashboard-bucket/',
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
    });

    const connect = [
      "'self'",
      props.apiUrl,
      `https://cognito-idp.${region}.amazonaws.com`,
      `https://${props.authDomain}`,
      // Presigned uploads (imports) and recordings of the service's bucket.
      `https://*.s3.${region}.amazonaws.com`,
      ...(props.relayUrl ? [props.relayUrl] : []),
      ...(props.twilioVoiceSdk ? TWILIO_VOICE_SDK_CONNECT : []),
    ];
    const csp = [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "font-src 'self'",
      `connect-src ${connect.join(' ')}`,
      `media-src 'self' blob: https://*.s3.${region}.amazonaws.com${props.twilioVoiceSdk ? ' https://sdk.twilio.com' : ''}`,
      "manifest-src 'self'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ].join('; ');
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Dashboard: strict CSP (no inline script), HSTS, no framing',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: csp, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.days(365),
          includeSubdomains: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Voice agent dashboard',
      defaultRootObject: 'index.html',
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        compress: true,
      },
      // The SPA's routes (/agents/…) are not objects: S3 answers 403 through OAC; serve index.html.
      errorResponses: [403, 404].map((httpStatus) => ({
        httpStatus,
        responseHttpStatus: 200,
        responsePagePath: '/index.html',
        ttl: Duration.seconds(0),
      })),
      enableLogging: true,
      logBucket: this.cdnLogsBucket(props.accessLogsBucket),
      logFilePrefix: 'dashboard-cdn/',
    });
    this.url = `https://${this.distribution.distributionDomainName}`;

    NagSuppressions.addResourceSuppressions(this.distribution, [
      {
        id: 'AwsSolutions-CFR1',
        reason: 'The dashboard serves customers worldwide; access is controlled by sign-in, not by country.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'Static files only (no server-side logic behind CloudFront); the API has its own throttling. WAF is an ' +
          'operator decision per deployment (billed per web ACL and request).',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The default *.cloudfront.net certificate (TLS 1.2 minimum set); a custom domain and its ACM certificate ' +
          'are the operator’s to add.',
      },
    ]);
  }

  /** CloudFront's standard logs need a bucket with ACLs (object writer); its own access logs go on. */
  private cdnLogsBucket(accessLogsBucket: s3.IBucket): s3.Bucket {
    return new s3.Bucket(this, 'CdnLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: 'dashboard-cdn-logs-bucket/',
      lifecycleRules: [{ id: 'expire-cdn-logs', expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Deploys the built files and config.json (what the page reads at start). */
  publish(clientId: string): void {
    const { props } = this;
    const config = {
      api_base: props.apiUrl,
      oidc_authority: props.issuer,
      client_id: clientId,
      relay_url: props.relayUrl ?? '',
      // Cognito's discovery document has no end_session_endpoint: its own /logout.
      logout_url: `https://${props.authDomain}/logout`,
      scope: 'openid email',
    };
    const deployment = new s3deploy.BucketDeployment(this, 'Deploy', {
      destinationBucket: this.bucket,
      sources: [s3deploy.Source.asset(props.assets), s3deploy.Source.jsonData('config.json', config)],
      distribution: this.distribution,
      distributionPaths: ['/index.html', '/config.json'],
      prune: true,
      memoryLimit: 512,
      // Its own log group with a retention (Lambda's implicit /aws/lambda/… group would keep logs forever).
      logGroup: new logs.LogGroup(this, 'DeployLogs', {
        retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    // The deployment's handler is a stack-wide singleton function, made by CDK.
    const handler = Stack.of(this).node.children.filter((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    NagSuppressions.addResourceSuppressions(
      [deployment, ...handler],
      [
        {
          id: 'AwsSolutions-IAM4',
          reason: "CDK's BucketDeployment handler uses the AWS managed basic execution role for its logs.",
        },
        {
          id: 'AwsSolutions-IAM5',
          reason:
            "CDK's BucketDeployment handler copies every file of the asset into the dashboard bucket (object " +
            'wildcards on that bucket and the CDK asset bucket only) and invalidates its distribution.',
        },
        {
          id: 'AwsSolutions-L1',
          reason: "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib, updated with it.",
        },
      ],
      true,
    );
  }
}
