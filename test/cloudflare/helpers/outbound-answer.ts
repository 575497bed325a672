/**
 * The answer an outboundService hands back to workerd, through Miniflare's loopback server. That
 * server is a plain node:http server with Node's default 5 s keep-alive timeout (Miniflare
 * 4.20251217; fixed upstream in cloudflare/workers-sdk#14850), and workerd pools its connections
 * to it: after an idle gap of about 5 s (common when the machine is loaded: a shard's alarm waits,
 * another deployment runs), Node closes a pooled socket just as workerd sends the next effect on
 * it, and that delivery fails in the object with "Network connection lost". `connection: close`
 * ends each loopback connection after its answer, so no socket is ever reused and the race cannot
 * happen (a loopback connect costs tens of microseconds). Hop-by-hop headers of the receiver's
 * own connection are not passed on.
 */
export function outboundAnswer(answer: Response, bytes: ArrayBuffer): Response {
  const headers = new Headers(answer.headers);
  for (const hop of ["keep-alive", "transfer-encoding"]) headers.delete(hop);
  headers.set("connection", "close");
  // 204 and friends must not carry a body, not even an empty one.
  return new Response(bytes.byteLength > 0 ? bytes : null, { status: answer.status, headers });
}
