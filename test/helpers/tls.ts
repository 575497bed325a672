import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";

/**
 * A self-signed certificate for 127.0.0.1, valid for a day, written by openssl beside the test.
 * A process trusts it through NODE_EXTRA_CA_CERTS, read at start: hence `runNodeScript`.
 */
export function selfSignedCertificate(dir: { file(name: string): string }): { key: string; cert: string } {
  const key = dir.file("key.pem");
  const cert = dir.file("cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  return { key, cert };
}

/** Runs an ES module script in a new node process with `env` added; its exit code and output. */
export async function runNodeScript(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr.on("data", (chunk) => {
    err += chunk;
  });
  const [code] = await once(child, "exit");
  return { code, out, err };
}
