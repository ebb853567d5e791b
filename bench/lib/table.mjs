// Tables for bench results: name | value | target | verdict.

/** PASS / MISS against the row's target, or "" when it has none. */
export function verdict(row) {
  if (!row.target || typeof row.value !== "number") return "";
  if (row.target.max !== undefined) return row.value <= row.target.max ? "PASS" : "MISS";
  if (row.target.min !== undefined) return row.value >= row.target.min ? "PASS" : "MISS";
  return "";
}

function formatValue(value, unit, digits) {
  if (typeof value !== "number") return String(value);
  const text = value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return unit ? `${text} ${unit}` : text;
}

function formatTarget(row) {
  if (!row.target) return "";
  const [sign, bound] = row.target.max !== undefined ? ["≤", row.target.max] : ["≥", row.target.min];
  return `${sign} ${bound.toLocaleString("en-US", { maximumFractionDigits: 3 })}${row.unit ? ` ${row.unit}` : ""}`;
}

export function formatTable(rows) {
  const lines = rows.map((row) => [
    row.name,
    formatValue(row.value, row.unit, row.digits ?? 1),
    formatTarget(row),
    verdict(row),
    row.note ?? "",
  ]);
  const header = ["measurement", "value", "target", "", "note"];
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const pad = (cells) =>
    cells
      .map((cell, column) => (column === 1 || column === 2 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join("  ")
      .trimEnd();
  return [pad(header), widths.map((width) => "-".repeat(width)).join("  "), ...lines.map(pad)].join("\n");
}
