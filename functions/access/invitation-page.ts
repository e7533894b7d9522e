import { createHash } from 'node:crypto';

/**
 * The API's own invitation page (`GET /i/{invitation_id}`): the email links here where no dashboard is
 * served (`DASHBOARD_URL` unset; else to the dashboard's `/invitations/{id}`). It signs the invitee in and accepts. Sign-in asks the
 * identity provider for an access token with the invitee's email and password (an OAuth2 password
 * grant at the local OpenID provider's token endpoint), then the page calls
 * `POST /api/v1/invitations/{invitation_id}/accept` with it and shows the role that was given. The
 * page holds no data of the invitation (anyone may open the link); only the addressee's token can
 * accept it. Static HTML, its one style sheet and script inline with their hashes in a strict
 * Content-Security-Policy.
 *
 * In the cloud the dashboard's Cognito client allows SRP sign-in only (no password flow, no hosted
 * UI), which this page does not speak: there it says so and names the accept call; the email
 * links to the dashboard there.
 */
export interface SignIn {
  /** The token endpoint (password grant). */
  url: string;
  clientId: string;
}

/** Where the page gets a token: the local OpenID provider the API trusts; none in the cloud. */
export function signInFrom(env: {
  STAGE: string;
  JWT_ISSUER?: string;
  JWT_CLIENT_ID?: string;
}): SignIn | undefined {
  if (env.STAGE !== 'local' || !env.JWT_ISSUER || !env.JWT_CLIENT_ID) return undefined;
  return { url: `${env.JWT_ISSUER.replace(/\/$/, '')}/token`, clientId: env.JWT_CLIENT_ID };
}

const escapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => escapes[c]);

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a;line-height:1.5}',
  'h1{font-size:1.4rem}label{display:block;margin-top:.75rem}',
  'input{width:100%;padding:.4rem;font-size:1rem;box-sizing:border-box}',
  'button{margin-top:1rem;padding:.5rem 1rem;font-size:1rem}',
  '.notice{padding:.75rem 1rem;border:1px solid #b45309;background:#fffbeb}',
  '.done{padding:.75rem 1rem;border:1px solid #15803d;background:#f0fdf4}',
  '[hidden]{display:none}',
].join('');

const ROLE_NAMES = "{regular:'a member',admin:'an admin'}";

/** Reads its settings from the form's data attributes; never writes what it received as HTML. */
const SCRIPT = [
  "(function(){var f=document.getElementById('sign-in');if(!f)return;",
  "var out=document.getElementById('result'),err=document.getElementById('error'),d=f.dataset;",
  'function fail(m){err.textContent=m;err.hidden=false;f.querySelector("button").disabled=false;}',
  'function token(email,password){',
  "var form=new URLSearchParams({grant_type:'password',username:email,password:password,client_id:d.clientId});",
  "return fetch(d.url,{method:'POST',headers:{'content-type':'application/x-www-form-urlencoded'},body:form}).then(function(r){",
  "return r.json().then(function(b){if(b.access_token)return b.access_token;throw new Error(b.error_description||'Sign-in failed.');});});}",
  "f.addEventListener('submit',function(e){e.preventDefault();err.hidden=true;f.querySelector('button').disabled=true;",
  'token(f.email.value.trim(),f.password.value).then(function(t){',
  "return fetch(d.accept,{method:'POST',headers:{authorization:'Bearer '+t}}).then(function(r){return r.json().then(function(b){",
  "if(r.status===404)throw new Error('No invitation here for '+f.email.value.trim()+': sign in with the address the invitation was sent to.');",
  "if(!r.ok)throw new Error(b.error||('The invitation could not be accepted (HTTP '+r.status+').'));",
  `var roles=${ROLE_NAMES};f.hidden=true;out.hidden=false;`,
  "out.querySelector('[data-role]').textContent=roles[b.role]||b.role;",
  "out.querySelector('[data-workspaces]').textContent=b.workspaces.length?' Workspace roles: '+b.workspaces.map(function(w){return w.role;}).join(', ')+'.':'';",
  '});});}).catch(function(x){fail(x.message);});});})();',
].join('');

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's icon (a person with a plus), inline: the policy's `img-src data:` allows only such. */
const FAVICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#15803d"/>' +
      '<path d="M15 9h2v6h6v2h-6v6h-2v-6H9v-2h6z" fill="#fff"/></svg>',
  );

export interface InvitationPage {
  html: string;
  headers: Record<string, string>;
}

/** The page for an invitation id (already checked to be one), signing in through `signIn`. */
export function invitationPage(invitationId: string, signIn: SignIn | undefined): InvitationPage {
  const accept = `/api/v1/invitations/${invitationId}/accept`;
  const body = signIn
    ? '<h1>Accept your invitation</h1>' +
      '<p>Sign in with the email address the invitation was sent to.</p>' +
      `<form id="sign-in" data-url="${escapeHtml(signIn.url)}" ` +
      `data-client-id="${escapeHtml(signIn.clientId)}" data-accept="${escapeHtml(accept)}">` +
      '<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>' +
      '<label for="password">Password</label>' +
      '<input id="password" name="password" type="password" autocomplete="current-password" required>' +
      '<button type="submit">Sign in and accept</button></form>' +
      '<p class="notice" id="error" role="alert" hidden></p>' +
      '<p class="done" id="result" role="status" hidden>Invitation accepted: you joined as ' +
      '<strong data-role></strong>.<span data-workspaces></span></p>'
    : '<h1>Accept your invitation</h1><p class="notice" id="no-sign-in">This page cannot sign you in here yet. ' +
      'Sign in to the dashboard with the address the invitation was sent to and accept it there ' +
      `(<code>POST ${escapeHtml(accept)}</code> with your access token).</p>`;
  const html =
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">' +
    `<title>Accept your invitation</title><link rel="icon" type="image/svg+xml" href="${FAVICON}">` +
    `<style>${STYLE}</style></head><body><main>${body}</main><script>${SCRIPT}</script></body></html>`;
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(STYLE)}`,
    `script-src ${sha256(SCRIPT)}`,
    `connect-src 'self'${signIn ? ` ${new URL(signIn.url).origin}` : ''}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    html,
    headers: {
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
    },
  };
}
