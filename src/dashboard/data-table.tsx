import type { Child } from "hono/jsx";

/** One column of a `DataTable`: its heading and how one row fills its cell. */
export interface Column<Row> {
  /** The heading; also the cell's `data-label`, which names it on a narrow screen's row cards. */
  head: string;
  cell: (row: Row) => Child;
  /** A right-aligned number column. */
  num?: boolean;
  /** The cell's class (`mono`, `small`, …). */
  class?: string;
  /** The cell's tooltip, e.g. the exact time behind "3 min ago". */
  title?: (row: Row) => string | undefined;
  /** Extra cell attributes that tests and scripts find the cell by (`data-field`, …). */
  attrs?: Record<string, string>;
}

/**
 * The dashboard's one table: a heading row from the columns, one row per item. Every page's table
 * is a list of columns, so a column is added in one place and every cell carries its label
 * server-side (the row cards of a phone-width screen need no script to be readable).
 */
export function DataTable<Row>(props: {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  /** Shown instead of an empty table. */
  empty: string;
  /** The row's own attributes (`data-job`, `data-status`, `class`, …). */
  rowAttrs?: (row: Row) => Record<string, string | undefined>;
  /** The table's attributes (`id`, `data-table`). */
  attrs?: Record<string, string>;
}) {
  if (props.rows.length === 0) return <p class="muted">{props.empty}</p>;
  const { columns } = props;
  return (
    <table {...props.attrs}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th class={column.num ? "num" : undefined}>{column.head}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr {...props.rowAttrs?.(row)}>
            {columns.map((column) => (
              <td
                class={column.num ? "num" : column.class}
                title={column.title?.(row)}
                data-label={column.head || undefined}
                {...column.attrs}
              >
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** "—" in muted grey: the cell of a value that is not there. */
export const NONE = <span class="muted">—</span>;
