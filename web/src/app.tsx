import { useEffect, useState } from 'preact/hooks';
import { ErrorBoundary, lazy, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { signOut } from './auth';
import { config } from './config';
import { rolesText } from './components/roles';
import { Empty } from './components/ui';
import { SessionProvider, useSession } from './session';

const Agents = lazy(() => import('./pages/agents'));
const AgentDetail = lazy(() => import('./pages/agent/page'));
const Calls = lazy(() => import('./pages/calls'));
const CallDetail = lazy(() => import('./pages/call-detail'));
const PhoneNumbers = lazy(() => import('./pages/phone-numbers'));
const Contacts = lazy(() => import('./pages/contacts'));
const ContactDetail = lazy(() => import('./pages/contact-detail'));
const Campaigns = lazy(() => import('./pages/campaigns'));
const CampaignDetail = lazy(() => import('./pages/campaign-detail'));
const Sms = lazy(() => import('./pages/sms'));
const SmsThread = lazy(() => import('./pages/sms-thread'));
const SmsCampaign = lazy(() => import('./pages/sms-campaign'));
const SmsMessage = lazy(() => import('./pages/sms-message'));
const Knowledge = lazy(() => import('./pages/knowledge'));
const KnowledgeDetail = lazy(() => import('./pages/knowledge-detail'));
const Integrations = lazy(() => import('./pages/integrations'));
const IntegrationDetail = lazy(() => import('./pages/integration-detail'));
const Workflows = lazy(() => import('./pages/workflows'));
const WorkflowDetail = lazy(() => import('./pages/workflow-detail'));
const Analytics = lazy(() => import('./pages/analytics'));
const Evaluations = lazy(() => import('./pages/evaluations'));
const EvaluationDetail = lazy(() => import('./pages/evaluation-detail'));
const ApiKeys = lazy(() => import('./pages/api-keys'));
const Webhooks = lazy(() => import('./pages/webhooks'));
const Billing = lazy(() => import('./pages/billing'));
const Team = lazy(() => import('./pages/team'));
const Invitations = lazy(() => import('./pages/invitations'));

/** The navigation, with the accessible names the contract fixes. */
export const NAVIGATION: [label: string, path: string][] = [
  ['Agents', '/agents'],
  ['Calls', '/calls'],
  ['Phone numbers', '/phone-numbers'],
  ['Contacts', '/contacts'],
  ['Campaigns', '/campaigns'],
  ['SMS', '/sms'],
  ['Knowledge', '/knowledge'],
  ['Integrations', '/integrations'],
  ['Workflows', '/workflows'],
  ['Analytics', '/analytics'],
  ['Evaluations', '/evaluations'],
  ['API keys', '/api-keys'],
  ['Webhooks', '/webhooks'],
  ['Billing', '/billing'],
  ['Team', '/team'],
];

function Switcher() {
  const session = useSession();
  return (
    <div class="switcher">
      <label>
        <span class="visually-hidden">Organisation</span>
        <select
          aria-label="Organisation"
          value={session.organisation.organisation_id}
          onChange={(event) => session.selectOrganisation(event.currentTarget.value)}
        >
          {session.organisations.map((o) => (
            <option key={o.organisation_id} value={o.organisation_id}>
              {o.name ?? o.organisation_id}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="visually-hidden">Workspace</span>
        <select
          aria-label="Workspace"
          value={session.workspace?.id ?? ''}
          onChange={(event) => session.selectWorkspace(event.currentTarget.value)}
        >
          {session.workspaces.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function Shell() {
  const session = useSession();
  const { path } = useLocation();
  // On a narrow screen the navigation sits behind a Menu button (CSS shows the button there only).
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      {/* One line at 1280 px; on a narrow screen Menu, the name and Sign out, the rest behind Menu. */}
      <header class={menuOpen ? 'top menu-open' : 'top'}>
        <button
          type="button"
          class="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <span class="brand">Voice agents</span>
        <Switcher />
        <span class="who" title={session.email}>
          {session.email} · {rolesText(session.organisation.role, session.workspace?.role)}
        </span>
        <button type="button" class="link" onClick={() => void signOut(config())}>
          Sign out
        </button>
      </header>
      <nav id="main-nav" aria-label="Main" class={menuOpen ? 'open' : undefined}>
        <ul>
          {NAVIGATION.map(([label, href]) => (
            <li key={href}>
              <a href={href} aria-current={path.startsWith(href) ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {session.workspace ? (
          <ErrorBoundary>
            <Router>
              <Route path="/agents" component={Agents} />
              <Route path="/agents/:id" component={AgentDetail} />
              <Route path="/calls" component={Calls} />
              <Route path="/calls/:id" component={CallDetail} />
              <Route path="/phone-numbers" component={PhoneNumbers} />
              <Route path="/contacts" component={Contacts} />
              <Route path="/contacts/:id" component={ContactDetail} />
              <Route path="/campaigns" component={Campaigns} />
              <Route path="/campaigns/:id" component={CampaignDetail} />
              <Route path="/sms" component={Sms} />
              <Route path="/sms/threads/:contact_id" component={SmsThread} />
              <Route path="/sms/campaigns/:id" component={SmsCampaign} />
              <Route path="/sms/messages/:id" component={SmsMessage} />
              <Route path="/knowledge" component={Knowledge} />
              <Route path="/knowledge/:id" component={KnowledgeDetail} />
              <Route path="/integrations" component={Integrations} />
              <Route path="/integrations/:id" component={IntegrationDetail} />
              <Route path="/workflows" component={Workflows} />
              <Route path="/workflows/:id" component={WorkflowDetail} />
              <Route path="/analytics" component={Analytics} />
              <Route path="/evaluations" component={Evaluations} />
              <Route path="/evaluations/:agent_id/:id" component={EvaluationDetail} />
              <Route path="/api-keys" component={ApiKeys} />
              <Route path="/webhooks" component={Webhooks} />
              <Route path="/billing" component={Billing} />
              <Route path="/team" component={Team} />
              <Route default component={Agents} />
            </Router>
          </ErrorBoundary>
        ) : (
          <Empty>This organisation has no workspace you can see.</Empty>
        )}
      </main>
    </div>
  );
}

/** An invitation's page stands outside the shell: the invitee may belong to no organisation yet. */
function Root() {
  const { path } = useLocation();
  if (path === '/invitations' || path.startsWith('/invitations/'))
    return (
      <ErrorBoundary>
        <Router>
          <Route path="/invitations/:id" component={Invitations} />
          <Route default component={Invitations} />
        </Router>
      </ErrorBoundary>
    );
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Root />
    </LocationProvider>
  );
}
