import { jest } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import {
  REDACTED,
  RedactingLogFormatter,
  redact,
  scrubText,
  terminalLine,
} from '../../functions/platform/logger.js';

/** Logs never carry personal data: the formatter every line goes through (functions/platform/logger.ts). */
describe('redacting log formatter', () => {
  it('replaces values under personal keys, at any depth, and keeps ids, types and counts', () => {
    const message = {
      type: 'workspace.event',
      event: {
        id: 'evt_1',
        type: 'contact.created',
        workspace_id: 'ws_1',
        data: {
          contact_id: 'ct_1',
          first_name: 'Priya',
          last_name: 'Shah',
          phone: '+61491570199',
          email: 'priya@example.com',
          tags: ['buyer'],
        },
      },
      toPhone: '+61491570156',
      body: 'Yes please, call me',
      transcript: [{ role: 'caller', text: 'I am Sam' }],
      count: 3,
    };
    expect(redact(message)).toEqual({
      type: 'workspace.event',
      event: {
        id: 'evt_1',
        type: 'contact.created',
        workspace_id: 'ws_1',
        data: {
          contact_id: 'ct_1',
          first_name: REDACTED,
          last_name: REDACTED,
          phone: REDACTED,
          email: REDACTED,
          tags: ['buyer'],
        },
      },
      toPhone: REDACTED,
      body: REDACTED,
      transcript: REDACTED,
      count: 3,
    });
  });

  it('masks e-mail addresses and phone numbers inside any text, not dates, ids or counts', () => {
    expect(scrubText('local email provider refused sam@fail.test (always fails)')).toBe(
      'local email provider refused [email] (always fails)',
    );
    expect(scrubText('dial +61491570156 failed; 0491 570 156 busy')).toBe(
      'dial [phone] failed; [phone] busy',
    );
    const kept =
      'call_01M8CB999QGD2GWQB80GFQR9ZE at 2026-11-26T16:33:55.671Z: 1800 seconds, 12345678901234567890';
    expect(scrubText(kept)).toBe(kept);
  });

  it('keeps an error’s kind and scrubs its message', () => {
    const error = new Error('no contact for +61491570199');
    expect(redact({ error })).toMatchObject({ error: { name: 'Error', message: 'no contact for [phone]' } });
  });

  it('is what a Powertools logger writes: a JSON line without the personal data it was given', () => {
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const logger = new Logger({
        serviceName: 'test',
        logLevel: 'INFO',
        logFormatter: new RedactingLogFormatter(),
      });
      logger.info('queue message handled for sam@example.com', {
        queue: 'postCall',
        queueMessage: { callId: 'call_1', to: '+61491570156', name: 'Sam Taylor' },
      });
    } finally {
      write.mockRestore();
    }
    const line = lines.join('');
    expect(JSON.parse(line)).toMatchObject({
      level: 'INFO',
      message: 'queue message handled for [email]',
      queue: 'postCall',
      queueMessage: { callId: 'call_1', to: REDACTED, name: REDACTED },
    });
    expect(line).not.toMatch(/61491570156|Sam Taylor|sam@example/);
  });

  it('locally, one short line: time, level, message and the ids', () => {
    expect(
      terminalLine({
        level: 'INFO',
        message: 'queue message handled',
        timestamp: '2026-11-26T16:33:55.671Z',
        service: 'voice-agent',
        queue: 'workspaceEvents',
        'event.type': 'contact.created',
        queueMessage: { callId: 'call_1', to: REDACTED },
      }),
    ).toBe(
      '16:33:55 INFO  queue message handled  queue=workspaceEvents event.type=contact.created callId=call_1',
    );
  });
});
