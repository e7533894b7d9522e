import { ACTION_TYPES, CHARGED_ACTIONS } from '../../functions/post-call/entities.js';
import { ACTIONS } from '../../functions/post-call/actions/registry.js';

/** The post-call actions: one implementation per action type, named in one registry. */
describe('the post-call action registry', () => {
  it('has exactly one implementation per action type', () => {
    expect(Object.keys(ACTIONS).sort()).toEqual([...ACTION_TYPES].sort());
    for (const type of ACTION_TYPES) expect(typeof ACTIONS[type]).toBe('function');
  });

  it('names only known action types as charged', () => {
    for (const type of CHARGED_ACTIONS) expect(ACTION_TYPES).toContain(type);
  });

  it('does not compile without every action type', () => {
    // @ts-expect-error an action type without an implementation is a compile error
    const incomplete: typeof ACTIONS = { sms_owner: ACTIONS.sms_owner };
    expect(Object.keys(incomplete)).toHaveLength(1);
  });
});
