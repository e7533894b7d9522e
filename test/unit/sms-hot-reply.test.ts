import { isHotReply, keywordOf } from '../../functions/sms/hot-reply.js';

/** The documented rules of functions/sms/hot-reply.ts: opt-out/opt-in keywords and the hot-reply detector. */
describe('SMS keywords', () => {
  it.each([
    'STOP',
    'stop',
    ' Stop ',
    'STOPALL',
    'Unsubscribe',
    'CANCEL',
    'end',
    'Quit',
    'OPTOUT',
    'revoke',
    'Stop!',
    'stop.',
  ])('%s opts out', (body) => expect(keywordOf(body)).toBe('stop'));
  it.each(['START', 'start', 'Unstop'])('%s opts in', (body) => expect(keywordOf(body)).toBe('start'));
  it.each(['please stop', 'stop it now', 'the end', "don't cancel", 'stopping', 'restart', ''])(
    '%j is not a keyword (not alone)',
    (body) => expect(keywordOf(body)).toBeUndefined(),
  );
});

describe('hot replies', () => {
  it.each([
    'Yes',
    'yes please',
    'Yeah, call me',
    'Sure!',
    "I'm interested",
    'Very keen, when can we inspect?',
    'Can you ring me tomorrow',
    'How much is it?',
    'Tell me more',
    'Sounds good',
    'Is it still available?',
    "I'd like to book an inspection",
  ])('%j is hot', (body) => expect(isHotReply(body)).toBe(true));

  it.each([
    'No',
    'no thanks',
    'Nope, not interested',
    "I'm not interested",
    "Don't call me",
    'do not call me again',
    'Not keen',
    'not now',
    'Wrong number',
    'STOP',
    'stop texting me, I am not interested',
    'Who is this?',
    'Maybe later',
    'never interested',
    '',
  ])('%j is not hot', (body) => expect(isHotReply(body)).toBe(false));
});
