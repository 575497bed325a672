import type { Hono } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { buildOpenApiDocument } from "./openapi/openapi-document.js";
import { API_REFERENCE_ASSETS, type ApiReferenceAsset } from "./openapi/route-docs.js";

/**
 * Reads one of Swagger UI's files (swagger-ui-dist). The app is web-standard, so the Node host
 * passes node-api-reference-assets.ts; where none is given (Workers) the page's files are 404s
 * and /openapi.json still answers.
 */
export type ApiReferenceAssets = (name: Exclude<ApiReferenceAsset, "init.js">) => Promise<Uint8Array | null>;

interface ApiReferenceOptions {
  runs: boolean;
  assets?: ApiReferenceAssets | undefined;
}

/**
 * Everything the page loads comes from this server: scripts and styles from 'self' only (no
 * inline script, no inline style), the document fetched from 'self'; no frame of another site
 * may hold it. test/browser/api-reference.test.ts fails on any refusal of this policy.
 */
const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Finality API reference</title>
<link rel="icon" type="image/png" href="/docs/api/favicon-32x32.png">
<link rel="stylesheet" href="/docs/api/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/api/swagger-ui-bundle.js"></script>
<script src="/docs/api/init.js"></script>
</body>
</html>
`;

// A file rather than an inline script, so that the CSP allows no inline script at all.
// validatorUrl: null, or Swagger UI would send the document to validator.swagger.io.
const INIT_SCRIPT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
`;

const CONTENT_TYPES: Record<ApiReferenceAsset, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "init.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

/**
 * GET /openapi.json, GET /docs/api and its files. Public, like /healthz and /metrics (behind the
 * cross-site guard, without a token): the document describes the software, not this deployment
 * (no provider names, no data), and the API it describes keeps its own token.
 */
export function addApiReferenceRoutes(app: Hono<AppEnv>, options: ApiReferenceOptions): void {
  let document: string | undefined;
  app.get("/openapi.json", (c) => {
    c.set("route", "/openapi.json");
    document ??= JSON.stringify(buildOpenApiDocument({ runs: options.runs }));
    return c.body(document, 200, { "content-type": "application/json", "cache-control": "no-cache" });
  });

  app.get("/docs/api", (c) => {
    c.set("route", "/docs/api");
    return c.body(PAGE, 200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": API_REFERENCE_CSP,
      "cache-control": "no-cache",
    });
  });

  app.get("/docs/api/:asset", async (c) => {
    c.set("route", "/docs/api/:asset");
    const name = c.req.param("asset");
    if (!isAsset(name)) throw new FinalityError("not-found", `no file ${name} in the API reference`);
    const body = name === "init.js" ? INIT_SCRIPT : await options.assets?.(name);
    if (body === undefined || body === null)
      throw new FinalityError(
        "not-found",
        `${name}: the reference page's files are served by \`finality serve\``,
      );
    return c.body(body as string | Uint8Array<ArrayBuffer>, 200, {
      "content-type": CONTENT_TYPES[name],
      "content-security-policy": API_REFERENCE_CSP,
      "cache-control": "public, max-age=3600",
      "x-content-type-options": "nosniff",
    });
  });
}

function isAsset(name: string): name is ApiReferenceAsset {
  return (API_REFERENCE_ASSETS as readonly string[]).includes(name);
}
