// A table as CSV (RFC 4180): what the trends page's CSV buttons download, the data a plot draws.

export type Cell = string | number | null;

export interface Table {
  columns: string[];
  rows: Cell[][];
}

/** One field: empty for null, numbers as JavaScript writes them, text quoted when it holds a comma, quote or line break. */
function field(value: Cell): string {
  if (value === null) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The table with a header line of its columns, lines ended by CRLF. */
export function csv(table: Table): string {
  return [table.columns, ...table.rows].map((row) => row.map(field).join(",")).join("\r\n") + "\r\n";
}
