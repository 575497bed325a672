// Preload (`node --import`) that appends the URL of every module the process resolves to the file
// named by FINALITY_RECORD_IMPORTS, one per line: which libraries a command really loads.
import { register } from "node:module";

register("./record-imports-hooks.mjs", import.meta.url, {
  data: { out: process.env.FINALITY_RECORD_IMPORTS },
});
