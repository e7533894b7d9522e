import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { dlqName, QUEUES, type QueueKey } from '../../../functions/platform/resources.js';

/** How long a dead-lettered message waits for someone to look at it (the SQS maximum). */
export const DLQ_RETENTION = Duration.days(14);

export interface ServiceQueueProps {
  queueKey: QueueKey;
  /** Prefix of the physical queue names (the stack name), so two stages can share an account. */
  namePrefix: string;
}

/**
 * A work queue of `lib/resources.ts` with its own dead-letter queue: visibility timeout and
 * maxReceiveCount as declared there, TLS-only access and SQS-managed encryption on both.
 */
export class ServiceQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly queueKey: QueueKey;

  constructor(scope: Construct, id: string, props: ServiceQueueProps) {
    super(scope, id);
    const definition = QUEUES[props.queueKey];
    this.queueKey = props.queueKey;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      queueName: `${props.namePrefix}-${dlqName(props.queueKey)}`,
      retentionPeriod: DLQ_RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });

    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: `${props.namePrefix}-${definition.name}`,
      visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
    });
  }
}
