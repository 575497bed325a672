import type { StateTable } from "../state-map.js";

/**
 * Replicate prediction `status`.
 * Source: https://replicate.com/docs/topics/predictions/lifecycle and replicate-javascript
 * index.d.ts (`Prediction.status`); `aborted` from https://replicate.com/changelog/2025-10-16-prediction-deadlines.
 *
 * | status     | canonical | note |
 * |------------|-----------|------|
 * | starting   | pending   | booting, or queued for a worker |
 * | processing | running   | `predict()` is running |
 * | succeeded  | succeeded | |
 * | failed     | failed    | `error` says why |
 * | canceled   | cancelled | by the user, or its deadline passed after it started |
 * | aborted    | expired   | its deadline passed before it could start (not charged) |
 *
 * `aborted` → expired: the provider gave up on work that never ran because a time window
 * closed, which is what `expired` means for a batch whose window passed. It is not `cancelled`
 * (nobody cancelled it) nor `failed` (nothing ran and failed).
 */
export const REPLICATE_PREDICTION_STATES: StateTable = {
  starting: "pending",
  processing: "running",
  succeeded: "succeeded",
  failed: "failed",
  canceled: "cancelled",
  aborted: "expired",
};
