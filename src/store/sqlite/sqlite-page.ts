import { type KeysetQuery, keysetPage, keysetStatement } from "../keyset-page.js";
import type { Page } from "../store.js";
import type { Row } from "../tables.js";
import type { SqliteDb } from "./sqlite-driver.js";

/**
 * One page of a store list on SQLite: the keyset statement run on `reader`, its rows read into
 * port objects, and the next cursor taken from the query's own row-number column.
 */
export function readSqlitePage<T>(reader: SqliteDb, query: KeysetQuery, fromRow: (row: Row) => T): Page<T> {
  const { text, values, limit } = keysetStatement(query, "sqlite");
  const rows = reader.prepare(text).all(...values) as Row[];
  return keysetPage(rows, limit, fromRow, (row) => row[query.rowNo] as number);
}
