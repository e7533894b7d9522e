import { createHash } from 'node:crypto';
import type { Reply } from './schemas.js';

/**
 * The public recording page as HTML, by hand (no framework): every value from outside is escaped,
 * and the page's one style sheet and one script are inline with their hashes in a strict
 * Content-Security-Policy (nothing else loads; media only from the recording's own origin).
 *
 * Three outcomes: playable (an audio player), unavailable (a message instead of a player; the replies
 * still show) and not found. A signed URL that expires while the page is open makes the player fail:
 * the script then swaps it for the same “unavailable” message, so the page never shows a broken player.
 */

const escapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};
export const escapeHtml = (value: string): string => value.replace(/[&<>"'`]/g, (c) => escapes[c]);

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;line-height:1.5}',
  'h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}',
  'audio{width:100%}',
  '.notice{padding:.75rem 1rem;border:1px solid #b45309;background:#fffbeb}',
  'ul.replies{list-style:none;padding:0}ul.replies li{border-bottom:1px solid #ddd;padding:.5rem 0}',
  '.business{color:#555;margin:0}',
  'ul.replies time{color:#555;font-size:.875rem;display:block}',
  '[hidden]{display:none}',
].join('');

/** The page's icon: a play button, inline (the policy's `img-src data:` allows only such). */
const FAVICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#1d4ed8"/>' +
      '<path d="M12 9v14l11-7z" fill="#fff"/></svg>',
  );

const SCRIPT = [
  "(function(){var a=document.getElementById('recording');if(!a)return;",
  "function gone(){var p=document.getElementById('player');var u=document.getElementById('unavailable');",
  "if(p)p.hidden=true;if(u)u.hidden=false;a.removeAttribute('src');}",
  "a.addEventListener('error',gone);",
  'if(a.error)gone();})();',
].join('');

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const STYLE_HASH = sha256(STYLE);
const SCRIPT_HASH = sha256(SCRIPT);

/** The policy of a page; `mediaOrigin` is the recording URL's origin when there is a player. */
export function contentSecurityPolicy(mediaOrigin?: string): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `script-src ${SCRIPT_HASH}`,
    `media-src ${mediaOrigin ?? "'none'"}`,
    // The inline icon only (a data: URL is all an <img> could be given here: nothing on the page is user HTML).
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const UNAVAILABLE_MESSAGE =
  'This recording is no longer available. It may have expired (recordings are kept for up to 6 months).';
export const NOT_FOUND_MESSAGE = 'Recording not found. Check the link you were sent.';

export interface PageInput {
  recording: { available: boolean; url: string | null };
  replies: Reply[];
  agentName: string | null;
  /** Whose call it was: the organisation's name. */
  businessName: string | null;
  endedAt: string | null;
}

export interface RenderedPage {
  html: string;
  csp: string;
}

function layout(title: string, body: string, mediaOrigin?: string): RenderedPage {
  const html =
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">' +
    `<title>${escapeHtml(title)}</title><link rel="icon" type="image/svg+xml" href="${FAVICON}">` +
    `<style>${STYLE}</style></head>` +
    `<body><main>${body}</main><script>${SCRIPT}</script></body></html>`;
  return { html, csp: contentSecurityPolicy(mediaOrigin) };
}

const formatWhen = (iso: string): string => {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
};

function repliesSection(replies: Reply[]): string {
  const items = replies
    .map(
      (reply) =>
        `<li><time datetime="${escapeHtml(reply.received_at)}">${escapeHtml(formatWhen(reply.received_at))}</time>` +
        `<p class="reply-body">${escapeHtml(reply.body)}</p></li>`,
    )
    .join('');
  return (
    '<section aria-labelledby="replies-heading"><h2 id="replies-heading">Replies</h2>' +
    '<p>Replies to the text message that linked here show below.</p>' +
    (replies.length === 0
      ? '<p id="no-replies">No replies yet.</p>'
      : `<ul class="replies" id="replies">${items}</ul>`) +
    '</section>'
  );
}

export function recordingPage(input: PageInput): RenderedPage {
  const heading = input.agentName ? `Call recording: ${input.agentName}` : 'Call recording';
  const business = input.businessName
    ? `<p class="business" id="business">${escapeHtml(input.businessName)}</p>`
    : '';
  const when = input.endedAt
    ? `<p id="ended">Call ended <time datetime="${escapeHtml(input.endedAt)}">${escapeHtml(formatWhen(input.endedAt))}</time>.</p>`
    : '';
  const url = input.recording.available ? input.recording.url : null;
  let mediaOrigin: string | undefined;
  if (url) {
    try {
      mediaOrigin = new URL(url).origin;
    } catch {
      mediaOrigin = undefined;
    }
  }
  const playable = url !== null && mediaOrigin !== undefined;
  const unavailable = `<p class="notice" id="unavailable" role="status"${playable ? ' hidden' : ''}>${escapeHtml(UNAVAILABLE_MESSAGE)}</p>`;
  const player = playable
    ? '<div id="player">' +
      `<audio id="recording" controls preload="metadata" aria-label="Call recording" src="${escapeHtml(url)}">` +
      'Your browser cannot play this recording.</audio></div>'
    : '';
  return layout(
    heading,
    `<h1>${escapeHtml(heading)}</h1>${business}${when}${player}${unavailable}${repliesSection(input.replies)}`,
    mediaOrigin,
  );
}

export function notFoundPage(): RenderedPage {
  return layout(
    'Recording not found',
    `<h1>Recording not found</h1><p class="notice" role="alert">${escapeHtml(NOT_FOUND_MESSAGE)}</p>`,
  );
}

/** Headers of every page: the policy, no sniffing, no caching (a signed URL is inside), no framing. */
export function pageHeaders(page: RenderedPage): Record<string, string> {
  return {
    'content-security-policy': page.csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
  };
}
