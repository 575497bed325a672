import {
  type Attributes,
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

/**
 * Traces through `@opentelemetry/api` only; the SDK is started by the Node host
 * (host/node/telemetry.ts), which hands its tracer to `useTracer`. Until it does, tracing is off
 * and every helper here is a direct call: no span objects, no context switches, no headers —
 * the cost of "off" is one null check.
 */
let tracer: Tracer | null = null;

/** The host's tracer, or null to turn tracing off. */
export function useTracer(next: Tracer | null): void {
  tracer = next;
}

export function tracingOn(): boolean {
  return tracer !== null;
}

export type { Span };
export { SpanKind };

interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; the active context when absent. */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `work` inside a span named `name` (the active span while it runs); a throw marks the span
 * as an error and passes through. With tracing off, `work` runs as it is, given no span.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (tracer === null || inUnsampledTrace(options.parent)) return work(undefined);
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links ? { links: options.links } : {}),
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : undefined,
      });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span under a local parent that was not sampled would not be recorded either (the sampler is
 * parent-based): it is not made, and the work runs in the parent's context, whose `traceparent`
 * (flags 00) is what goes on. Remote parents (a caller's, a stored one) still go to the sampler.
 */
function inUnsampledTrace(explicitParent: Context | undefined): boolean {
  if (explicitParent !== undefined) return false;
  const parent = trace.getSpan(context.active());
  return parent !== undefined && !parent.isRecording() && parent.spanContext().isRemote !== true;
}

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The active span as a W3C `traceparent`, or null when tracing is off or nothing is traced. */
export function currentTraceParent(): string | null {
  if (tracer === null) return null;
  const span = trace.getSpan(context.active());
  if (span === undefined) return null;
  const sc = span.spanContext();
  if (!trace.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** A `traceparent` header read back, or null when it is absent or not version 00 of the format. */
function parseTraceParent(header: string | null | undefined): SpanContext | null {
  if (!header) return null;
  const match = TRACE_PARENT.exec(header.trim().toLowerCase());
  if (match === null) return null;
  const spanContext: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16),
    isRemote: true,
  };
  return trace.isSpanContextValid(spanContext) ? spanContext : null;
}

/** The context to start a span under when the caller sent `traceparent` (else the active one). */
export function contextFromTraceParent(header: string | null | undefined): Context | undefined {
  if (tracer === null) return undefined;
  const remote = parseTraceParent(header);
  return remote === null ? undefined : trace.setSpanContext(ROOT_CONTEXT, remote);
}

/**
 * The propagation headers for the effect delivery running now (W3C Trace Context): what a
 * receiver gets on its HTTP request, and what a broker destination puts on its message. Empty
 * when tracing is off.
 */
export function effectPropagationHeaders(): Record<string, string> {
  const traceparent = currentTraceParent();
  return traceparent === null ? {} : { traceparent };
}

/** A stored `traceparent` as a parent context and a link, so a later span joins the same trace. */
export function continuedFrom(traceParent: string | null): { parent: Context; links: Link[] } | null {
  const remote = parseTraceParent(traceParent);
  if (remote === null) return null;
  return { parent: trace.setSpanContext(ROOT_CONTEXT, remote), links: [{ context: remote }] };
}

/** `inSpan` for synchronous work (writing an answer). */
export function inSpanSync<T>(name: string, work: () => T): T {
  if (tracer === null || inUnsampledTrace(undefined)) return work();
  const span = tracer.startSpan(name);
  try {
    return context.with(trace.setSpan(context.active(), span), work);
  } finally {
    span.end();
  }
}

/**
 * The host keeps the active span only while code runs synchronously (no async hooks: those cost
 * every promise in the process, ~0.3 µs each, whether a trace is sampled or not). Code that starts
 * a span after an await takes the context it had before the await, and resumes in it.
 */
export function captureContext(): Context | undefined {
  return tracer === null ? undefined : context.active();
}

export function resumeIn<T>(captured: Context | undefined, work: () => T): T {
  return captured === undefined ? work() : context.with(captured, work);
}

/** The active span, to set attributes on once an awaited answer comes (undefined when off). */
export function activeSpan(): Span | undefined {
  return tracer === null ? undefined : trace.getSpan(context.active());
}
