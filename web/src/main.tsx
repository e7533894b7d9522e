import { render } from 'preact';
import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import { ApiError, configureApi, useToken } from './api/client';
import { CALLBACK_PATH, completeSignIn, currentUser, signIn } from './auth';
import { loadConfig } from './config';
import { App } from './app';
import './styles.css';

const root = document.getElementById('app')!;

function fatal(message: string): void {
  render(
    <main class="centred">
      <h1>The dashboard could not start</h1>
      <p role="alert">{message}</p>
    </main>,
    root,
  );
}

async function start(): Promise<void> {
  const config = await loadConfig();
  configureApi(config.api_base);
  if (location.pathname === CALLBACK_PATH) {
    const next = await completeSignIn(config);
    history.replaceState(null, '', next);
  }
  const user = await currentUser(config);
  if (!user) {
    await signIn(config, `${location.pathname}${location.search}`);
    return;
  }
  useToken(
    () => user.access_token,
    () => void signIn(config, `${location.pathname}${location.search}`),
  );
  const queries = new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will not change by asking again.
        retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
        refetchOnWindowFocus: false,
        staleTime: 5_000,
      },
    },
  });
  render(
    <QueryClientProvider client={queries}>
      <App />
    </QueryClientProvider>,
    root,
  );
}

start().catch((error: unknown) => fatal(error instanceof Error ? error.message : String(error)));
