import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { config } from './config.js';
import { grantsMiddleware } from './grants.js';
import { sdkClient } from './sdk-clients.js';

type ManagementModule = typeof import('@aws-sdk/client-apigatewaymanagementapi');

/**
 * The voice relay's WebSocket connections (API Gateway Management API): send a frame, close a socket.
 * The endpoint is the relay API's stage URL over https (`VOICE_RELAY_MANAGEMENT_URL`); locally the
 * local relay gateway serves the same API, and the function's `manageConnections` grant is enforced
 * on this client as IAM enforces it in the cloud.
 */
let module: Promise<ManagementModule> | undefined;
let client: Promise<ApiGatewayManagementApiClient> | undefined;

function managementClient(): Promise<ApiGatewayManagementApiClient> {
  client ??= (module ??= import('@aws-sdk/client-apigatewaymanagementapi')).then(
    ({ ApiGatewayManagementApiClient }) => {
      const endpoint = process.env.VOICE_RELAY_MANAGEMENT_URL;
      if (!endpoint) throw new Error('VOICE_RELAY_MANAGEMENT_URL is not set for this function');
      const made = sdkClient(new ApiGatewayManagementApiClient({ region: config().AWS_REGION, endpoint }));
      made.middlewareStack.add(grantsMiddleware('execute-api'), {
        step: 'initialize',
        name: 'enforceGrants',
      });
      return made;
    },
  );
  client.catch(() => (client = undefined));
  return client;
}

/** The connection is gone (the other side hung up): API Gateway answers 410. */
export class ConnectionGone extends Error {}

export async function postToConnection(connectionId: string, frame: unknown): Promise<void> {
  const api = await managementClient();
  const { PostToConnectionCommand } = await module!;
  try {
    await api.send(
      new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(JSON.stringify(frame)) }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'GoneException') throw new ConnectionGone(connectionId);
    throw error;
  }
}

/** Closes the socket (its $disconnect follows); a connection already gone is not an error. */
export async function closeConnection(connectionId: string): Promise<void> {
  const api = await managementClient();
  const { DeleteConnectionCommand } = await module!;
  try {
    await api.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'GoneException') throw error;
  }
}

/** Forgets the client (the local stack between runs). */
export function resetConnectionsClient(): void {
  void client?.then((c) => c.destroy());
  client = undefined;
}
