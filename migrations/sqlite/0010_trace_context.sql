-- The W3C traceparent of the span that enqueued the effect (the observation that settled the job),
-- so each delivery attempt continues that trace, on any replica and after a restart. NULL when
-- tracing was off.
ALTER TABLE outbox ADD COLUMN trace_parent TEXT;
