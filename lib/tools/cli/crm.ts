import { parseArgs } from 'node:util';
import type { StackState } from '../../local/state.js';
import { crmSimulator } from '../../local/simulators/crm/client.js';

/**
 * `npm run cli -- crm …`: what a user of the demo CRM would do, so a connected `demo_crm`
 * integration has something to sync (its `config.account`, default `demo`):
 *   crm listings [--account A] [--json]
 *   crm sell --listing EXTERNAL_ID [--account A] [--twice]
 *   crm add-contact --phone E164 [--email E] [--first-name F] [--last-name L] [--account A]
 *   crm contacts [--account A] [--json]
 *   crm delete-listing --listing EXTERNAL_ID [--account A]   (the next sync removes it from the listings base)
 *   crm delete-contact --contact EXTERNAL_ID [--account A]   (the next sync keeps our contact: see README)
 */
export const CRM_USAGE =
  'usage: npm run cli -- crm listings [--account A] [--json] | ' +
  'crm sell --listing EXTERNAL_ID [--account A] [--twice] | ' +
  'crm add-contact --phone E164 [--email E] [--first-name F] [--last-name L] [--account A] | ' +
  'crm contacts [--account A] [--json] | ' +
  'crm delete-listing --listing EXTERNAL_ID [--account A] | crm delete-contact --contact EXTERNAL_ID [--account A]';

export async function crmCommand(
  state: StackState,
  args: string[],
  out: (line: string) => void,
  log: (line: string) => void,
): Promise<number> {
  const [subcommand, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      account: { type: 'string', default: 'demo' },
      listing: { type: 'string' },
      contact: { type: 'string' },
      twice: { type: 'boolean', default: false },
      phone: { type: 'string' },
      email: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const url = state.env.CRM_SIMULATOR_URL;
  if (!url) {
    log('The running stack has no demo CRM (CRM_SIMULATOR_URL): restart it with npm start');
    return 1;
  }
  const crm = crmSimulator(url, values.account);
  switch (subcommand) {
    case 'listings': {
      const listings = await crm.listings();
      if (values.json) out(JSON.stringify(listings));
      else
        for (const l of listings)
          out(
            [
              l.external_id.padEnd(8),
              l.status.padEnd(12),
              (l.price_text ?? '').padEnd(24),
              l.address,
              l.suburb ?? '',
            ]
              .join(' ')
              .trimEnd(),
          );
      return 0;
    }
    case 'sell': {
      if (!values.listing) break;
      const { listing } = await crm.sell(values.listing, { twice: values.twice });
      out(
        values.json
          ? JSON.stringify(listing)
          : `${listing.external_id} (${listing.address}) is sold at ${listing.sold_at}: the next sync of a ` +
              'connected integration sends listing.sold',
      );
      return 0;
    }
    case 'contacts': {
      const contacts = await crm.contacts();
      if (values.json) out(JSON.stringify(contacts));
      else
        for (const c of contacts)
          out(
            [
              c.external_id.padEnd(8),
              [c.first_name, c.last_name].filter(Boolean).join(' ').padEnd(24),
              c.phone ?? '',
              c.email ?? '',
            ]
              .join(' ')
              .trimEnd(),
          );
      return 0;
    }
    case 'delete-listing': {
      if (!values.listing) break;
      await crm.deleteListing(values.listing);
      out(
        `${values.listing} is deleted in account ${values.account}: the next sync of a connected integration ` +
          'removes it from its listings knowledge base',
      );
      return 0;
    }
    case 'delete-contact': {
      if (!values.contact) break;
      await crm.deleteContact(values.contact);
      out(
        `${values.contact} is deleted in account ${values.account}: the next sync counts the deletion ` +
          '(contacts_deleted) and keeps the workspace’s contact',
      );
      return 0;
    }
    case 'add-contact': {
      if (!values.phone && !values.email) break;
      const { contact } = await crm.addContact({
        phone: values.phone,
        email: values.email,
        first_name: values['first-name'],
        last_name: values['last-name'],
      });
      out(
        values.json
          ? JSON.stringify(contact)
          : `contact ${contact.external_id} added to account ${values.account}`,
      );
      return 0;
    }
    default:
      break;
  }
  log(CRM_USAGE);
  return 2;
}
