// (a) The floor: node:http that reads the body and answers 200, nothing else.
import { createServer } from "node:http";

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    Buffer.concat(chunks);
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"ok":true}');
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`bare listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
