import { createServer } from 'node:net';

const HOST = '127.0.0.1';

/** A port the OS considers free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether `port` can be bound on 127.0.0.1. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveFree(false));
    server.listen(port, HOST, () => server.close(() => resolveFree(true)));
  });
}

/** The preferred port when it is free (stable addresses across restarts), else any free port. */
export async function preferredOrFreePort(preferred: number | undefined): Promise<number> {
  if (preferred && preferred > 0 && (await isPortFree(preferred))) return preferred;
  return freePort();
}
