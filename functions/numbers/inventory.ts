import { PhoneNumberEntity } from './entities.js';

/**
 * Phone numbers an organisation holds now (the numbers' organisation index). Billing's extra-number
 * job is handed this count (billing sits below numbers); a file of its own keeps that job's bundle
 * free of the telephony adapters.
 */
export async function countNumbers(organisationId: string): Promise<number> {
  const { data } = await PhoneNumberEntity.query
    .byOrganisation({ organisationId })
    .go({ pages: 'all', attributes: ['numberId'] });
  return data.length;
}
