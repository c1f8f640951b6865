// Test only: DSH's own local sandbox provider on its macOS path, with the
// Seatbelt model (tests/seatbelt_model) as its sandbox-exec — through the
// provider's public test hook (`internals.platform`, `internals.seatbeltExec`),
// so a call our fence hands back goes to DSH's own Seatbelt profile as on a Mac.
//
// Config:
//   sandboxExec: absolute path of the Seatbelt model's sandbox-exec

export const name = 'e2e-seatbelt-model-provider'
export const inject = ['sandbox']

export function apply(ctx, config) {
  if (typeof config?.sandboxExec !== 'string' || !config.sandboxExec.startsWith('/')) {
    throw new Error('e2e-seatbelt-model-provider: sandboxExec must be an absolute path')
  }
  ctx.effect(() => {
    const internals = ctx.sandbox.internals
    if (internals === undefined) throw new Error('e2e-seatbelt-model-provider: the sandbox provider has no internals test hook')
    const before = { platform: internals.platform, seatbeltExec: internals.seatbeltExec }
    internals.platform = 'darwin'
    internals.seatbeltExec = config.sandboxExec
    return () => Object.assign(internals, before)
  }, 'e2e: DSH\'s sandbox provider on the Seatbelt model')
}
