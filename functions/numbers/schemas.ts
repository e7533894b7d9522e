import * as z from 'zod';
import { pageOf } from '../platform/pagination.js';
import { toE164 } from '../platform/phone.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** Request and response shapes of the phone-number routes. */

export const BuyNumberBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      /** Buy any available number of the country (only AU is offered)… */
      country: z.literal('AU').optional(),
      /** …optionally in an area (`2` or `02` for NSW/ACT, `3` or `03` for VIC/TAS)… */
      area_code: z
        .string()
        .regex(/^0?[2-9]$/, { message: 'area_code must be an Australian area code such as 2 or 03' })
        .optional(),
      /** …or this very number (E.164). */
      phone_number: z.string().max(32).optional(),
    })
    .superRefine((body, ctx) => {
      if ((body.country === undefined) === (body.phone_number === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: 'give either country (and optionally area_code) or phone_number',
          input: body,
        });
      }
      if (body.area_code !== undefined && body.country === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['area_code'],
          message: 'area_code goes with country',
          input: body.area_code,
        });
      }
      if (body.phone_number !== undefined && !toE164(body.phone_number)) {
        ctx.addIssue({
          code: 'custom',
          path: ['phone_number'],
          message: 'phone_number must be a phone number in E.164 format',
          input: body.phone_number,
        });
      }
    })
    .meta({ examples: [{ country: 'AU', area_code: '08' }] }),
);
export type BuyNumberBody = z.infer<typeof BuyNumberBody>;

export const UpdateNumberBody = schemaOnFirstUse(() =>
  z.strictObject({
    /** Connects the number to this agent of the workspace; null disconnects it. */
    agent_id: z.string().max(64).nullable(),
  }),
);
export type UpdateNumberBody = z.infer<typeof UpdateNumberBody>;

export const PhoneNumberResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    phone_number: z.string(),
    country: z.string(),
    agent_id: z.string().nullable(),
    provider: z.enum(['simulator', 'twilio']),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  }),
);

export const PhoneNumberList = pageOf(PhoneNumberResponse);
