// The audit ledger seam. Every decision and every human answer is handed to
// `append(record)`; the NDJSON ledger itself (redaction, O_APPEND writes, the
// Approvals tab's tail reader) arrives with issue 6. Until then this drops
// records, so wiring and tests can already rely on the call sites.

export function createLedger(_config) {
  return {
    append(_record) {},
  }
}
