/**
 * Reads a CSV text (RFC 4180: quoted fields, doubled quotes, CRLF or LF) into records keyed by the
 * header row's names, trimmed and lower-cased. Blank lines are skipped; `line` counts data rows
 * from 1 (the header not counted), as the API's import jobs number their rejected rows.
 */
export function readCsv(text: string): { line: number; values: Record<string, string> }[] {
  const rows = splitRows(text.replace(/^\uFEFF/, ''));
  const header = (rows.shift() ?? []).map((name) => name.trim().toLowerCase());
  return rows
    .map((cells, index) => ({ cells, line: index + 1 }))
    .filter(({ cells }) => cells.some((cell) => cell.trim() !== ''))
    .map(({ cells, line }) => ({
      line,
      values: Object.fromEntries(header.map((name, i) => [name, (cells[i] ?? '').trim()])),
    }));
}

function splitRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i += 1;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += char;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}
