import * as z from "zod";
import { ERROR_CODES, type ErrorCode } from "../../core/errors.js";
import { apiSchemas } from "../api-schemas.js";
// Registers EffectPayload in apiSchemas, for the `webhooks` entry.
import "../effect-payload-schema.js";
import { problemType } from "../problem.js";
import { PROBLEM_STATUS } from "../problem-status.js";
import { effectWebhookOperation } from "./effect-payload-doc.js";
import { ROUTE_TAGS, type RouteDoc } from "./route-doc.js";
import { routeDocs } from "./route-docs.js";

type Json = Record<string, unknown>;

interface DocumentOptions {
  /** The runs and worker routes exist only when the app is given a run service. */
  runs: boolean;
  version?: string;
}

/**
 * The OpenAPI 3.1 description of the app. Built from the routes' own zod schemas with
 * `z.toJSONSchema` when first asked (a few ms, once per process): nothing on the request path
 * changes, validation stays the plain `safeParse` it was.
 */
export function buildOpenApiDocument(options: DocumentOptions): Json {
  const docs = routeDocs(options);
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, Json>> = {};
  for (const doc of docs) {
    paths[doc.path] ??= {};
    (paths[doc.path] as Record<string, Json>)[doc.method] = operation(doc, components);
  }
  const webhooks = { effect: { post: effectWebhookOperation(components.output("EffectPayload")) } };
  return {
    openapi: "3.1.1",
    info: {
      title: "Finality",
      version: options.version ?? "0.1.0",
      description:
        "The ledger of long-running remote jobs: webhooks and polls merged through one monotonic reducer, " +
        "effects from a transactional outbox, and runs on your own workers. Errors are " +
        "`application/problem+json`; switch on `type` (`urn:finality:problem:<code>`).",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/" }],
    tags: Object.entries(ROUTE_TAGS).map(([name, description]) => ({ name, description })),
    security: [{ apiToken: [] }],
    paths,
    webhooks,
    components: {
      schemas: components.schemas(),
      securitySchemes: SECURITY_SCHEMES,
      responses: {},
    },
  };
}

const SECURITY_SCHEMES = {
  apiToken: {
    type: "http",
    scheme: "bearer",
    description:
      "`server.apiToken`. Required on every `/v1` route but the worker routes when it is set; " +
      "without it the server listens on loopback only and asks for no token.",
  },
  workerPoolToken: {
    type: "http",
    scheme: "bearer",
    description:
      "A worker pool's token (`workers.pools.<name>.token`); a pool may be limited to some kinds. " +
      "With no pools and no API token, the worker routes ask for none.",
  },
  webhookSignature: {
    type: "apiKey",
    in: "header",
    name: "webhook-signature",
    description:
      "Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` " +
      "(`v1,<base64 HMAC-SHA256 of id.timestamp.body>`), or the provider's own scheme.",
  },
};

const SECURITY: Record<RouteDoc["auth"], Json[]> = {
  api: [{ apiToken: [] }],
  worker: [{ workerPoolToken: [] }],
  signature: [{ webhookSignature: [] }],
  public: [],
};

/** Problems any route of that kind may answer: its refusals, and a database that is not there. */
const AUTH_ERRORS: Record<RouteDoc["auth"], readonly ErrorCode[]> = {
  api: ["unauthorized", "forbidden", "store-unavailable"],
  worker: ["unauthorized", "forbidden", "store-unavailable"],
  signature: ["signature-invalid", "unknown-provider", "store-unavailable"],
  public: [],
};

/** What the operation may answer as problems: its own, its auth's, its input's, and a bug's. */
function problemCodes(doc: RouteDoc): ErrorCode[] {
  const input: ErrorCode[] = [
    ...(doc.body || doc.query ? (["invalid-request"] as const) : []),
    ...(doc.body ? (["payload-too-large"] as const) : []),
  ];
  return [...new Set([...AUTH_ERRORS[doc.auth], ...input, ...(doc.errors ?? []), "internal" as const])];
}

/** The successful answers: JSON ones as named components, text and files inline. */
function answerResponses(doc: RouteDoc, id: string, components: SchemaComponents): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(doc.responses)) {
    const contentType = answer.contentType ?? "application/json";
    const schema =
      answer.schema === undefined
        ? undefined
        : answer.contentType === undefined
          ? components.output(`${id}${status}`, answer.schema)
          : inputSchema(answer.schema);
    responses[status] = {
      description: answer.description,
      ...(status === "204" ? {} : { content: { [contentType]: schema ? { schema } : {} } }),
    };
  }
  return responses;
}

function operation(doc: RouteDoc, components: SchemaComponents): Json {
  const id = doc.operationId[0]?.toUpperCase() + doc.operationId.slice(1);
  const parameters = [...pathParameters(doc), ...queryParameters(doc), ...headerParameters(doc)];
  const responses = {
    ...answerResponses(doc, id, components),
    ...problemResponses(problemCodes(doc), components),
  };
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: SECURITY[doc.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body
      ? {
          requestBody: {
            required: doc.body.required ?? true,
            ...(doc.body.description ? { description: doc.body.description } : {}),
            content: { "application/json": { schema: components.input(`${id}Request`, doc.body.schema) } },
          },
        }
      : {}),
    responses,
  };
}

/** One response per status, listing the problem `type`s it may carry. */
function problemResponses(codes: readonly ErrorCode[], components: SchemaComponents): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(PROBLEM_STATUS[code], [...(byStatus.get(PROBLEM_STATUS[code]) ?? []), code]);
  const problem = components.output("Problem");
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const types = list.map(problemType);
    responses[String(status)] = {
      description: list
        .map((code) => `\`${code}\`${ERROR_CODES[code].retryable ? " (retryable)" : ""}`)
        .join(", "),
      content: {
        "application/problem+json": {
          schema: {
            allOf: [problem, { type: "object", properties: { type: { enum: types }, code: { enum: list } } }],
          },
        },
      },
    };
  }
  return responses;
}

function pathParameters(doc: RouteDoc): Json[] {
  const names = [...doc.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
  return names.map((name) => {
    const param = doc.params?.[name];
    return {
      name,
      in: "path",
      required: true,
      ...(param ? { description: param.description } : {}),
      schema: param?.schema ? inputSchema(param.schema) : { type: "string" },
    };
  });
}

function queryParameters(doc: RouteDoc): Json[] {
  if (!doc.query) return [];
  const schema = inputSchema(doc.query) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}

function headerParameters(doc: RouteDoc): Json[] {
  return Object.entries(doc.headers ?? {}).map(([name, header]) => ({
    name,
    in: "header",
    required: header.required ?? false,
    description: header.description,
    schema: { type: "string" },
  }));
}

/** A request-side schema inline (queries and path parameters: strings, as they arrive). */
function inputSchema(schema: z.ZodType): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
  return rest;
}

/**
 * Named schemas go to `components.schemas` and are referenced; request bodies are converted as
 * their input (before transforms), answers as their output. One registry per side, so that a
 * schema used by several operations is written once.
 */
class SchemaComponents {
  private readonly sides = { input: z.registry<{ id: string }>(), output: z.registry<{ id: string }>() };

  constructor() {
    // `_idmap` is the registry's id index (declared in zod's types): the named answers.
    for (const [id, schema] of apiSchemas._idmap) this.sides.output.add(schema, { id });
  }

  input(id: string, schema: z.ZodType): Json {
    return this.ref("input", id, schema);
  }

  output(id: string, schema?: z.ZodType): Json {
    return this.ref("output", id, schema);
  }

  private ref(side: "input" | "output", id: string, schema: z.ZodType | undefined): Json {
    const registry = this.sides[side];
    const known = schema === undefined ? id : registry.get(schema)?.id;
    if (known !== undefined) return { $ref: `#/components/schemas/${known}` };
    registry.add(schema as z.ZodType, { id });
    return { $ref: `#/components/schemas/${id}` };
  }

  schemas(): Record<string, Json> {
    const all: Record<string, Json> = {};
    for (const io of ["output", "input"] as const) {
      const { schemas } = z.toJSONSchema(this.sides[io], {
        io,
        unrepresentable: "any",
        uri: (id) => `#/components/schemas/${id}`,
      });
      for (const [id, schema] of Object.entries(schemas)) {
        // `$id` would be a fragment-only URI (not allowed in 2020-12): the refs resolve without it.
        const { $schema: _, $id: __, ...rest } = schema as Json;
        all[id] = { ...rest, ...(apiSchemas._idmap.has(id) ? describeNamed(id) : {}) };
      }
    }
    return all;
  }
}

function describeNamed(id: string): Json {
  const schema = apiSchemas._idmap.get(id);
  const description = schema ? apiSchemas.get(schema)?.description : undefined;
  return description ? { description } : {};
}
