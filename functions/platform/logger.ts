import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME } from './resources.js';

/** Structured JSON logs, one logger per container. The level comes from POWERTOOLS_LOG_LEVEL. */
export const logger = new Logger({ serviceName: SERVICE_NAME });
