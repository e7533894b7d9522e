import {
  asksAboutListing,
  NOTHING_FOUND_REPLY,
  replyFromKnowledge,
} from '../../lib/local/simulators/llm/wording.js';

/** The simulated agent's use of the knowledge tool: which lines it looks up, and what it says. */

test('a line about a property or an address is looked up; small talk is not', () => {
  for (const line of [
    'Is the house on Harbour Street still for sale?',
    "I'm calling about 12 Harbour in Manly",
    'How many bedrooms does the apartment have?',
    'Tell me about the listing in Bondi',
    'Anything in Bondi?',
    'What do you have near Parramatta',
  ])
    expect(asksAboutListing(line)).toBe(true);
  for (const line of ['Hi, who is this?', 'Thanks, bye', 'Can you call me back tomorrow?', "I'm Sam"])
    expect(asksAboutListing(line)).toBe(false);
});

test('the top hit is spoken: a listing with its full address, status and price (quoted); a passage; nothing', () => {
  const listing = replyFromKnowledge('the Manly house?', {
    item_id: 'kbi_1',
    type: 'listing',
    title: '12 Harbour Street, Manly NSW 2095',
    passage: 'Sunny family home',
    listing: {
      external_id: 'L-1',
      full_address: '12 Harbour Street, Manly NSW 2095',
      price_text: '$1,250,000',
      status: 'under_offer',
      bedrooms: 3,
      bathrooms: null,
    },
  });
  expect(listing).toEqual({
    said: 'the Manly house?',
    reply:
      "That's 12 Harbour Street, Manly NSW 2095: it is under offer, listed at $1,250,000. It has 3 bedrooms.",
    listing: { listing_id: 'kbi_1', address: '12 Harbour Street, Manly NSW 2095', price: '$1,250,000' },
  });
  expect(
    replyFromKnowledge('pets?', {
      item_id: 'kbi_2',
      type: 'document',
      title: 'Rules',
      passage: 'Pets are welcome.',
    }),
  ).toEqual({ said: 'pets?', reply: 'From "Rules": Pets are welcome.' });
  expect(replyFromKnowledge('the castle?', undefined)).toEqual({
    said: 'the castle?',
    reply: NOTHING_FOUND_REPLY,
  });
});
