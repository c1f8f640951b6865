// The audit ledger seam. Every decision and every human answer is handed to
// `append(record)`. The NDJSON ledger itself (redaction, O_APPEND writes, the
// Approvals tab's tail reader) arrives with issue 6; until then records are
// only published as the Cordis event `dsh-allow/decided`, so observers (the
// demo, tests) can already see who decided each call.

export function createLedger(_config, { publish } = {}) {
  return {
    append(record) {
      publish?.(record)
    },
  }
}
