import { campaignEventSubscriber } from './campaigns/events.js';
import type { EventSubscriber } from './platform/workspace-events.js';
import { workflowEventSubscriber } from './workflows/subscriber.js';

export type { EventSubscriber } from './platform/workspace-events.js';

/**
 * Every subscriber of workspace events (functions/platform/workspace-events.ts): a composition point
 * like functions/api-routes.ts (it may import any domain). Each domain adds one line, e.g.
 * `campaignEventSubscriber,` exported from its own module. Each `handle` is idempotent on `event.id`.
 * Their resources are declared in the `RouteWorkspaceEvents` entry of lib/catalog.ts.
 */
export const eventSubscribers: EventSubscriber[] = [workflowEventSubscriber, campaignEventSubscriber];
