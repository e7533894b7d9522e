import { readCsv } from '../../web/src/components/csv.js';

/** The dashboard's CSV reader (the listings upload): RFC 4180 quoting, header names, row numbers. */
describe('readCsv', () => {
  it('keys each row by the trimmed, lower-cased header and numbers data rows from 1', () => {
    const rows = readCsv(' Address ,Price_Text\r\n1 Beach Rd,$900k\r\n2 Bay St,$1.1m\r\n');
    expect(rows).toEqual([
      { line: 1, values: { address: '1 Beach Rd', price_text: '$900k' } },
      { line: 2, values: { address: '2 Bay St', price_text: '$1.1m' } },
    ]);
  });

  it('reads quoted fields with commas, doubled quotes and line breaks', () => {
    const rows = readCsv('address,description\n"12 Rd","Views, ""sea"" and\nferry"\n');
    expect(rows).toEqual([{ line: 1, values: { address: '12 Rd', description: 'Views, "sea" and\nferry' } }]);
  });

  it('skips blank lines but keeps the numbering of the rows around them; a missing cell is empty', () => {
    const rows = readCsv('\uFEFFaddress,suburb\n1 A St\n\n3 C St,Manly');
    expect(rows).toEqual([
      { line: 1, values: { address: '1 A St', suburb: '' } },
      { line: 3, values: { address: '3 C St', suburb: 'Manly' } },
    ]);
  });

  it('a header alone has no rows', () => {
    expect(readCsv('address,suburb\n')).toEqual([]);
    expect(readCsv('')).toEqual([]);
  });
});
