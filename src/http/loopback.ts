/** True for host names only this machine can reach (a port, if any, is left out first). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** The host name of a `Host` header: `[::1]:8787` → `::1`, `localhost:8787` → `localhost`. */
export function hostNameOf(header: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(header);
  if (bracketed) return bracketed[1] as string;
  return header.replace(/:\d*$/, "");
}
