import { logger } from '../../platform/logger.js';
import { SIGNATURE_HEADER } from '../../providers/telephony/twilio-format.js';
import { closeSession } from '../sessions/close.js';
import { acceptRelayConnection, handleRelayFrame } from '../transports/relay.js';
import { acceptWebChat } from '../transports/web-chat.js';

/**
 * The voice relay's WebSocket API (`$connect`, `$default`, `$disconnect`): Twilio ConversationRelay
 * speaks to the agent here, and so does the dashboard's test chat (`?channel=web&…`, web-chat.ts). One invocation per frame; each returns at once after its work (a turn is
 * bounded well under API Gateway's 29 s integration timeout, conversation/engine/turn.ts).
 */
export interface RelayEvent {
  /** `requestTimeEpoch`: when the frame reached the socket (frames are handled in parallel). */
  requestContext: { routeKey: string; connectionId: string; requestTimeEpoch?: number };
  headers?: Record<string, string | undefined>;
  queryStringParameters?: Record<string, string | undefined> | null;
  body?: string;
  isBase64Encoded?: boolean;
}

const ok = { statusCode: 200 };

export async function handler(event: RelayEvent): Promise<{ statusCode: number }> {
  const { routeKey, connectionId } = event.requestContext;
  switch (routeKey) {
    case '$connect': {
      const query = event.queryStringParameters ?? {};
      if (query.channel === 'web') return { statusCode: await acceptWebChat(connectionId, query) };
      const headers = Object.fromEntries(
        Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
      );
      if (await acceptRelayConnection(headers[SIGNATURE_HEADER])) return ok;
      logger.warn('relay connection refused: bad or missing signature', { connectionId });
      return { statusCode: 403 };
    }
    case '$disconnect':
      await closeSession(connectionId);
      return ok;
    default: {
      const body =
        event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      await handleRelayFrame(connectionId, body, event.requestContext.requestTimeEpoch);
      return ok;
    }
  }
}
