// dsh-allow's browser half, in the lazy-CJS shape DSH's client loader takes
// (hand-written, no bundler): React 18 and the host's client faces come from
// the page through `require`.
//
// - The Approvals tab (slot `conversation.view`, after Trajectory): the
//   session's calls from the audit ledger, one row per call, newest at the
//   bottom, refreshed every 3 s. The plugin route hands over the raw ledger
//   tail and the rows are folded here by the core's web build (wasm, loaded
//   from the plugin's own route), the same code the host runs.
// - The approval card (slot `conversation.composer`, ahead of DSH's own) for
//   prompts this plugin raised: Deny / Always allow: <rule> / Allow once.
//   Always allow first stores the named rules through the plugin's
//   same-origin POST route, then answers the approval allowed-once.
//
// Every string a person reads comes from the `dsh-allow` dictionaries below.
window.__ModuleLoader__.load({
  id: 'dsh-allow',
  factory: (require) => {
    var module = { exports: {} }
    var React = require('react')
    var h = React.createElement
    var useEffect = React.useEffect
    var useMemo = React.useMemo
    var useRef = React.useRef
    var useState = React.useState

    var NS = 'dsh-allow'
    /** The bound translator, for a slot that does not hand `t` down. */
    var boundT = function (key) { return key }
    var REFRESH_MS = 3000
    var ROW_LIMIT = 500
    var ROUTE = {
      audit: '/dsh-allow/audit',
      pending: '/dsh-allow/pending',
      alwaysAllow: '/dsh-allow/always-allow',
      shown: '/dsh-allow/shown',
      coreModule: '/dsh-allow/core/web.js',
      coreWasm: '/dsh-allow/core/wasm/web/dsh_allow_bg.wasm',
    }

    /** The `dsh-allow` dictionaries: the same keys in both languages. */
    var en = {
      'view.approvals': 'Approvals',
      'approvals.showBaseline': 'Show default allows ({count})',
      'approvals.loading': 'Reading the audit ledger…',
      'approvals.empty': 'No permission decisions in this session yet.',
      'approvals.error': 'The audit ledger could not be read: {error}',
      'approvals.off': 'The audit ledger is turned off (audit: false in the dsh-allow config).',
      'approvals.truncated': 'Only the newest calls are shown.',
      'col.time': 'Time',
      'col.command': 'Command',
      'col.outcome': 'Outcome',
      'col.source': 'Decided by',
      'col.detail': 'Rule, review or action',
      'col.missing': 'Missing',
      'outcome.allowed': 'Allowed',
      'outcome.refused': 'Refused',
      'outcome.denied': 'Denied',
      'outcome.asked': 'Waiting',
      'outcome.cancelled': 'Cancelled',
      'outcome.unavailable': 'No answer',
      'source.rule': 'Rule',
      'source.baseline': 'Baseline',
      'source.auto-review': 'Auto review',
      'source.human': 'Human',
      'source.policy': 'Policy',
      'source.fence': 'Fence',
      'source.command': '/allow',
      'source.file': 'Rules file',
      'source.host': 'Host',
      'source.managed': 'Managed',
      'outcome.changed': 'Changed',
      'outcome.kernelDenied': 'Allowed · then denied by the kernel',
      'outcome.notRun': 'Allowed · not run',
      'detail.notRun': 'did not run: {why}',
      'detail.background': 'left running in the background, still fenced: {pids}',
      'command.cut': '(only the start is kept: the command was {bytes} bytes)',
      'action.allow-once': 'Allow once',
      'action.always-allow': 'Always allow',
      'action.deny': 'Deny',
      'action.cancelled': 'Cancelled',
      'action.unavailable': 'Nobody answered',
      'detail.rule': '{capabilities} {path}',
      'detail.baseline': 'Platform baseline: workspace, temp folders, harness home, system paths',
      'detail.review': 'Auto review {verdict}: {reason} ({latencyMs} ms, {route})',
      'detail.stored': 'stored {rules}',
      'detail.commandGrant': 'command grant {id}',
      'detail.fence': 'The kernel fence bounds what the command line cannot show (inline code, computed paths)',
      'detail.kernel': 'denied by the kernel: {capability} {path}',
      'detail.kernelRunner': 'refused by the fence: {capability} {path} ({operation} by {program})',
      'detail.kernelWithheld': 'denied by the kernel: {path} (its fence withheld {capabilities} there)',
      'detail.kernelSocket': 'the fence refused a connection to {path}',
      'detail.kernelSignal': 'the fence refused a signal to {path}',
      'missing.item': '{capability} {path}',
      'path.full': 'Full path: {path}',
      'card.strip': 'dsh-allow is waiting for your decision',
      'card.title': 'Filesystem permission required',
      'card.operation': 'Operation',
      'card.path': 'Path',
      'card.command': 'Command',
      'card.sandbox': 'Sandbox',
      'card.why': 'Why',
      'card.deny': 'Deny',
      'card.alwaysAllow': 'Always allow: {rule}',
      'card.allowOnce': 'Allow once',
      'card.loading': 'Reading the request…',
      'card.failed': 'That did not work: {error}',
      'card.rule': '{capabilities} {path}',
      'card.ruleTree': '{capabilities} {path}/**',
      'card.ruleCommand': 'trust {command} ({capabilities} {path}/**)',
      'list.separator': ', ',
    }
    var zh = {
      'view.approvals': '审批',
      'approvals.showBaseline': '显示默认放行({count})',
      'approvals.loading': '正在读取审计日志…',
      'approvals.empty': '本会话还没有权限判定。',
      'approvals.error': '无法读取审计日志:{error}',
      'approvals.off': '审计日志已关闭(dsh-allow 配置里 audit: false)。',
      'approvals.truncated': '只显示最近的调用。',
      'col.time': '时间',
      'col.command': '命令',
      'col.outcome': '结果',
      'col.source': '来源',
      'col.detail': '规则、复核或操作',
      'col.missing': '缺少',
      'outcome.allowed': '已允许',
      'outcome.refused': '已拒绝(策略)',
      'outcome.denied': '已拒绝',
      'outcome.asked': '等待中',
      'outcome.cancelled': '已取消',
      'outcome.unavailable': '无人应答',
      'source.rule': '规则',
      'source.baseline': '基线',
      'source.auto-review': '自动复核',
      'source.human': '人工',
      'source.policy': '策略',
      'source.fence': '围栏',
      'source.command': '/allow',
      'source.file': '规则文件',
      'source.host': '主机',
      'source.managed': '托管策略',
      'outcome.changed': '已变更',
      'outcome.kernelDenied': '已允许 · 随后被内核拒绝',
      'outcome.notRun': '已允许 · 未执行',
      'detail.notRun': '未执行:{why}',
      'detail.background': '仍在后台运行(仍受围栏约束):{pids}',
      'command.cut': '(只保留了开头:命令共 {bytes} 字节)',
      'action.allow-once': '允许一次',
      'action.always-allow': '总是允许',
      'action.deny': '拒绝',
      'action.cancelled': '已取消',
      'action.unavailable': '无人应答',
      'detail.rule': '{capabilities} {path}',
      'detail.baseline': '平台基线:工作区、临时目录、harness home、系统路径',
      'detail.review': '自动复核 {verdict}:{reason}({latencyMs} ms,{route})',
      'detail.stored': '已写入 {rules}',
      'detail.commandGrant': '命令授权 {id}',
      'detail.fence': '命令行看不到的部分(内联代码、运行时算出的路径)由内核围栏约束',
      'detail.kernel': '被内核拒绝:{capability} {path}',
      'detail.kernelRunner': '被围栏拒绝:{capability} {path}({program} 的 {operation})',
      'detail.kernelWithheld': '被内核拒绝:{path}(该调用的围栏在此未授予 {capabilities})',
      'detail.kernelSocket': '围栏拒绝了到 {path} 的连接',
      'detail.kernelSignal': '围栏拒绝了发往 {path} 的信号',
      'missing.item': '{capability} {path}',
      'path.full': '完整路径:{path}',
      'card.strip': 'dsh-allow 正在等待你的决定',
      'card.title': '需要文件权限',
      'card.operation': '操作',
      'card.path': '路径',
      'card.command': '命令',
      'card.sandbox': '沙箱',
      'card.why': '原因',
      'card.deny': '拒绝',
      'card.alwaysAllow': '总是允许:{rule}',
      'card.allowOnce': '允许一次',
      'card.loading': '正在读取请求…',
      'card.failed': '操作失败:{error}',
      'card.rule': '{capabilities} {path}',
      'card.ruleTree': '{capabilities} {path}/**',
      'card.ruleCommand': '信任 {command}({capabilities} {path}/**)',
      'list.separator': '、',
    }

    var CSS = [
      '.dsh-allow-view{display:flex;flex-direction:column;gap:8px;padding:12px 20px;min-height:0;flex:1;overflow:auto;font-size:13px;color:var(--dsw-alias-label-primary)}',
      '.dsh-allow-bar{display:flex;align-items:center;gap:12px;color:var(--dsw-alias-label-tertiary)}',
      '.dsh-allow-bar label{display:inline-flex;align-items:center;gap:6px;cursor:pointer}',
      '.dsh-allow-table{width:100%;border-collapse:collapse;table-layout:auto}',
      '.dsh-allow-table th{position:sticky;top:0;background:var(--dsw-alias-bg-base);text-align:left;font-weight:500;color:var(--dsw-alias-label-tertiary);padding:6px 8px;border-bottom:1px solid var(--dsw-alias-border-l2)}',
      '.dsh-allow-table td{padding:6px 8px;border-bottom:1px solid var(--dsw-alias-border-l2);vertical-align:top}',
      '.dsh-allow-mono{font-family:var(--ds-font-family-code,monospace);overflow-wrap:anywhere}',
      '.dsh-allow-table td.dsh-allow-time{white-space:nowrap}',
      '.dsh-allow-table td.dsh-allow-command{min-width:18ch}',
      '.dsh-allow-badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;white-space:nowrap;border:1px solid currentColor}',
      '.dsh-allow-badge[data-source=rule]{color:#2f7d32}',
      '.dsh-allow-badge[data-source=baseline]{color:#6b7280}',
      '.dsh-allow-badge[data-source=auto-review]{color:#7c3aed}',
      '.dsh-allow-badge[data-source=human]{color:#1d63d8}',
      '.dsh-allow-badge[data-source=policy]{color:#c2410c}',
      '.dsh-allow-badge[data-source=fence]{color:#0e7490}',
      // The administrator's managed policy: its own colour, filled, since no one in the session can change it.
      '.dsh-allow-badge[data-source=managed]{color:#fff;background:#9d174d;border-color:#9d174d}',
      '.dsh-allow-kernel{color:#b91c1c}',
      '.dsh-allow-note{color:var(--dsw-alias-label-tertiary)}',
      '.dsh-allow-card-root{padding:8px calc(var(--dsh-composer-side-clearance,16px) + 16px) 12px;display:flex;flex-direction:column;align-items:center}',
      '.dsh-allow-card{width:100%;max-width:var(--dsh-chat-content-width,748px);border:1px solid var(--dsw-alias-state-warn-secondary,#e5a100);background:var(--dsw-specific-input-major,#fff);box-shadow:var(--dsw-shadow-lv2);border-radius:20px;overflow:hidden}',
      '.dsh-allow-card-strip{display:flex;align-items:center;gap:8px;padding:10px 16px;font-size:13px;background:var(--dsw-alias-state-warn-tertiary,#fff6e0);color:var(--dsw-alias-state-warn-primary,#8a5a00)}',
      '.dsh-allow-card-body{display:flex;flex-direction:column;gap:6px;padding:12px 16px 0}',
      '.dsh-allow-card-title{font-size:15px;font-weight:500;line-height:24px;color:var(--dsw-alias-label-primary)}',
      '.dsh-allow-card-fields{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;font-size:13px}',
      '.dsh-allow-card-fields dt{color:var(--dsw-alias-label-tertiary)}',
      '.dsh-allow-card-fields dd{margin:0}',
      '.dsh-allow-card-error{color:var(--dsw-alias-state-error-primary,#c00);font-size:13px}',
      '.dsh-allow-card-actions{display:flex;justify-content:flex-end;flex-wrap:wrap;gap:8px;padding:14px 16px}',
      '.dsh-allow-button{border-radius:12px;padding:6px 14px;font-size:13px;cursor:pointer;border:1px solid var(--dsw-alias-border-l2,#ccc);background:transparent;color:var(--dsw-alias-label-primary)}',
      '.dsh-allow-button[data-variant=primary]{background:var(--dsw-alias-state-business-primary,#1d63d8);border-color:transparent;color:#fff}',
      '.dsh-allow-button:disabled{opacity:.5;cursor:default}',
    ].join('\n')

    // ---- the core, from the plugin's route -----------------------------------

    var coreLoad = null
    /** The core's web build (ES module + wasm), loaded once per page. */
    function loadCore() {
      if (coreLoad === null) {
        coreLoad = import(ROUTE.coreModule).then(function (core) {
          return core.init(ROUTE.coreWasm).then(function () { return core })
        })
        coreLoad.catch(function () { coreLoad = null })
      }
      return coreLoad
    }

    // ---- small helpers ---------------------------------------------------------

    // Control characters shown escaped, as bash's $'…' writes them: a name
    // holding a newline or a bidirectional override must not rewrite what
    // the row or the card shows (the same table as plugin/text.js).
    var NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x1b': '\\e', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' }
    var CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g

    function shown(text) {
      if (typeof text !== 'string') return text
      return text.replace(CONTROL, function (c) {
        if (NAMED[c]) return NAMED[c]
        var code = c.charCodeAt(0)
        return code <= 0xff ? '\\x' + ('0' + code.toString(16)).slice(-2) : '\\u' + ('000' + code.toString(16)).slice(-4)
      })
    }

    function granted(access) {
      return Object.keys(access || {}).filter(function (k) { return access[k] === true })
    }

    function ruleText(t, rule, key, places) {
      return t(key, { capabilities: granted(rule.access).join(','), path: shortPath(rule.path, places) })
    }

    function inside(path, root) {
      var r = root.replace(/\/+$/, '')
      return r !== '' && path.indexOf(r + '/') === 0 ? path.slice(r.length + 1) : null
    }

    /**
     * A path as a person reads it: relative to the workspace (`build/x`),
     * else to home (`~/.ssh/id_ed25519`), else in full. The full path goes
     * on hover (`fullTitle`).
     */
    function shortPath(path, places) {
      return shown(relativePath(path, places))
    }

    function relativePath(path, places) {
      if (typeof path !== 'string' || !places) return path
      var ws = places.workspace
      var home = places.home
      if (ws) {
        if (path === ws.replace(/\/+$/, '')) return './'
        var inWs = inside(path, ws)
        if (inWs !== null) return inWs
      }
      if (home) {
        if (path === home.replace(/\/+$/, '')) return '~'
        var inHome = inside(path, home)
        if (inHome !== null) return '~/' + inHome
      }
      return path
    }

    /** Every path in a sentence (a reason) as `shortPath` shows it. */
    function shortText(text, places) {
      if (typeof text !== 'string' || !places) return text
      var out = text
      var ws = (places.workspace || '').replace(/\/+$/, '')
      var home = (places.home || '').replace(/\/+$/, '')
      if (ws) out = out.split(ws + '/').join('')
      if (home) out = out.split(home + '/').join('~/').split(home + ')').join('~)')
      return shown(out)
    }

    /** The hover text naming every full path behind a shortened line. */
    function fullTitle(t, paths, places) {
      var full = paths.filter(function (p) { return typeof p === 'string' && shortPath(p, places) !== p })
      return full.length === 0 ? undefined : full.map(function (p) { return t('path.full', { path: shown(p) }) }).join('\n')
    }

    function distinct(list) {
      return list.filter(function (x, i) { return list.indexOf(x) === i })
    }

    function timeOf(iso) {
      var d = new Date(iso)
      return isNaN(d.getTime()) ? String(iso || '') : d.toLocaleTimeString()
    }

    function errorText(e) {
      return e && e.message ? e.message : String(e)
    }

    // ---- the Approvals tab -------------------------------------------------------

    function detailOf(t, row) {
      var parts = []
      var places = { workspace: row.workspace, home: row.home }
      if (row.source === 'rule') {
        ;(row.rules || []).forEach(function (r) { parts.push({ text: ruleText(t, r, 'detail.rule', places), paths: [r.path] }) })
        if (row.commandGrant) parts.push({ text: t('detail.commandGrant', { id: row.commandGrant }) })
      } else if (row.source === 'baseline') {
        parts.push({ text: t('detail.baseline') })
      } else if (row.source === 'fence') {
        parts.push({ text: t('detail.fence') })
      } else if (row.source === 'human' && row.action) {
        parts.push({ text: t('action.' + row.action) })
        if ((row.stored || []).length > 0) {
          var rules = row.stored.map(function (r) { return ruleText(t, r, r.recursive ? 'card.ruleTree' : 'card.rule', places) })
          parts.push({ text: t('detail.stored', { rules: rules.join(t('list.separator')) }), paths: row.stored.map(function (r) { return r.path }) })
        }
      } else if (row.reason) {
        var reason = shortText(row.reason, places)
        parts.push({ text: reason, title: reason === row.reason ? undefined : shown(row.reason) })
      }
      if (row.review) {
        parts.push({ text: t('detail.review', {
          verdict: row.review.verdict, reason: shown(row.review.reason), latencyMs: row.review.latencyMs, route: row.review.route,
        }) })
      }
      if (row.notRun) parts.push({ text: t('detail.notRun', { why: shown(row.notRun) }), kernel: true })
      if (row.background && row.background.length) parts.push({ text: t('detail.background', { pids: row.background.map(function (p) { return 'pid ' + p }).join(', ') }) })
      ;(row.kernel || []).forEach(function (k) {
        var path = shortPath(k.path, places)
        var text = k.door === 'socket' ? t('detail.kernelSocket', { path: path })
          : k.door === 'signal' ? t('detail.kernelSignal', { path: path })
          : !k.capability && (k.withheld || []).length > 0
          ? t('detail.kernelWithheld', { path: path, capabilities: k.withheld.join(t('list.separator')) })
          : k.operation ? t('detail.kernelRunner', { capability: k.capability || '?', path: path, operation: shown(k.operation), program: shown(k.program || '?') })
          : t('detail.kernel', { capability: k.capability || '?', path: path })
        parts.push({ text: text, paths: [k.path], kernel: true })
      })
      return parts
    }

    function outcomeKey(row) {
      if (row.outcome === 'allowed' && row.notRun) return 'outcome.notRun'
      if (row.outcome === 'allowed' && (row.kernel || []).length > 0) return 'outcome.kernelDenied'
      return 'outcome.' + row.outcome
    }

    function Row(props) {
      var t = props.t
      var row = props.row
      var asked = row.outcome === 'asked' || row.source === 'human' || row.source === 'auto-review' || row.outcome === 'refused'
      var missing = asked ? (row.missing || []) : []
      var places = { workspace: row.workspace, home: row.home }
      return h('tr', { 'data-call-id': row.callId, 'data-source': row.source, 'data-outcome': row.outcome },
        h('td', { className: 'dsh-allow-note dsh-allow-time' }, timeOf(row.time)),
        h('td', { className: 'dsh-allow-mono dsh-allow-command' }, shown(row.command),
          row.commandBytes ? h('div', { className: 'dsh-allow-note', 'data-command-bytes': row.commandBytes }, t('command.cut', { bytes: row.commandBytes })) : null),
        h('td', null, t(outcomeKey(row))),
        h('td', null, h('span', { className: 'dsh-allow-badge', 'data-source': row.source }, t('source.' + row.source))),
        h('td', null, detailOf(t, row).map(function (p, i) {
          return h('div', { key: i, className: p.kernel ? 'dsh-allow-kernel' : undefined, title: p.title || fullTitle(t, p.paths || [], places) }, p.text)
        })),
        h('td', { className: 'dsh-allow-mono' }, missing.map(function (m, i) {
          return h('div', { key: i, 'data-path': m.path, title: fullTitle(t, [m.path], places) }, t('missing.item', { capability: m.capability, path: shortPath(m.path, places) }))
        })))
    }

    function ApprovalsView(props) {
      var t = props.t || boundT
      var sessionId = props.sessionId
      var coreState = useState(null)
      var core = coreState[0]
      var setCore = coreState[1]
      var ledgerState = useState(null)
      var ledger = ledgerState[0]
      var setLedger = ledgerState[1]
      var errorState = useState(null)
      var error = errorState[0]
      var setError = errorState[1]
      var baselineState = useState(false)
      var showBaseline = baselineState[0]
      var setShowBaseline = baselineState[1]
      var scroller = useRef(null)

      useEffect(function () {
        var live = true
        loadCore().then(function (c) { if (live) setCore(c) }, function (e) { if (live) setError(errorText(e)) })
        return function () { live = false }
      }, [])

      useEffect(function () {
        var live = true
        var timer = null
        function refresh() {
          var url = ROUTE.audit + '?sessionId=' + encodeURIComponent(sessionId) + '&limit=' + ROW_LIMIT + '&baseline=1&lines=1'
          fetch(url, { cache: 'no-store', credentials: 'same-origin' })
            .then(function (r) {
              if (!r.ok) return r.json().then(function (b) { throw new Error(b && b.error ? b.error : 'HTTP ' + r.status) })
              return r.json()
            })
            .then(function (body) {
              if (!live) return
              setError(null)
              setLedger(function (prev) {
                return prev !== null && prev.text === body.text && prev.audit === body.audit ? prev : body
              })
            }, function (e) { if (live) setError(errorText(e)) })
            .then(function () { if (live) timer = setTimeout(refresh, REFRESH_MS) })
        }
        refresh()
        return function () { live = false; clearTimeout(timer) }
      }, [sessionId])

      var folded = useMemo(function () {
        if (core === null || ledger === null) return null
        var started = performance.now()
        var options = { sessionId: sessionId, limit: ROW_LIMIT, baseline: showBaseline }
        // JSON text across the wasm boundary is cheaper than building the rows field by field.
        var result = typeof core.foldLedgerJson === 'function'
          ? JSON.parse(core.foldLedgerJson(ledger.text || '', JSON.stringify(options)))
          : core.foldLedger(ledger.text || '', options)
        result.foldMs = performance.now() - started
        return result
      }, [core, ledger, sessionId, showBaseline])

      var rowCount = folded === null ? 0 : folded.rows.length
      useEffect(function () {
        var el = scroller.current
        if (el !== null) el.scrollTop = el.scrollHeight
      }, [rowCount])

      var body
      if (error !== null) body = h('div', { className: 'dsh-allow-card-error' }, t('approvals.error', { error: error }))
      else if (ledger !== null && ledger.audit === false) body = h('div', { className: 'dsh-allow-note' }, t('approvals.off'))
      else if (folded === null) body = h('div', { className: 'dsh-allow-note' }, t('approvals.loading'))
      else if (folded.rows.length === 0) body = h('div', { className: 'dsh-allow-note', 'data-empty': '' }, t('approvals.empty'))
      else {
        body = h('table', { className: 'dsh-allow-table' },
          h('thead', null, h('tr', null,
            h('th', null, t('col.time')), h('th', null, t('col.command')), h('th', null, t('col.outcome')),
            h('th', null, t('col.source')), h('th', null, t('col.detail')), h('th', null, t('col.missing')))),
          h('tbody', null, folded.rows.map(function (row) {
            return h(Row, { key: row.sessionId + '/' + row.callId, row: row, t: t })
          })))
      }
      var hidden = folded === null ? 0 : folded.hiddenBaseline
      return h('div', {
        className: 'dsh-allow-view',
        ref: scroller,
        'data-dsh-allow': 'approvals',
        'data-rows': rowCount,
        'data-fold-ms': folded === null ? '' : folded.foldMs.toFixed(3),
      },
      h('div', { className: 'dsh-allow-bar' },
        h('label', null,
          h('input', {
            type: 'checkbox',
            checked: showBaseline,
            'data-dsh-allow': 'show-baseline',
            onChange: function (e) { setShowBaseline(e.target.checked) },
          }),
          t('approvals.showBaseline', { count: showBaseline ? (folded === null ? 0 : folded.rows.filter(function (r) { return r.source === 'baseline' }).length) : hidden })),
        ledger !== null && ledger.truncated ? h('span', null, t('approvals.truncated')) : null),
      body)
    }

    // ---- the approval card ---------------------------------------------------------

    /** Claims the composer for approvals this plugin raised (pure: owner props only). */
    function selectOurApproval(owner) {
      var list = owner && owner.interactions ? owner.interactions : []
      for (var i = 0; i < list.length; i++) {
        var it = list[i]
        if (it.kind === 'approval' && it.payload && typeof it.payload.reason === 'string' && it.payload.reason.indexOf('dsh-allow: ') === 0) return it
      }
      return null
    }

    function answer(wait, outcome) {
      return wait.respond({ ok: true, value: { sessionId: wait.sessionId, approvalId: wait.payload.approvalId, outcome: outcome } })
        .then(function (receipt) {
          if (receipt && receipt.accepted === false) throw new Error(receipt.reason || 'rejected')
        })
    }

    /** The page's token (index.html): what lets the page, and no other client, change anything. */
    function pageToken() {
      var meta = typeof document === 'undefined' ? null : document.querySelector('meta[name="dsh-allow-token"]')
      return meta ? meta.getAttribute('content') || '' : ''
    }

    function post(route, body) {
      return fetch(route, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', 'x-dsh-allow-token': pageToken() },
        body: JSON.stringify(body),
      })
    }

    function storeProposals(callId, proposals) {
      return post(ROUTE.alwaysAllow, { callId: callId, proposals: proposals }).then(function (r) {
        return r.json().then(function (b) {
          if (!r.ok) throw new Error(b && b.error ? b.error : 'HTTP ' + r.status)
          return b
        })
      })
    }

    function PermissionCard(props) {
      var wait = props.matched
      return h(CardFlow, { key: wait.key, wait: wait, t: props.t || boundT })
    }

    function CardFlow(props) {
      var t = props.t
      var wait = props.wait
      var callId = wait.payload.callId
      var askState = useState(null)
      var ask = askState[0]
      var setAsk = askState[1]
      var busyState = useState(false)
      var busy = busyState[0]
      var setBusy = busyState[1]
      var errorState = useState(null)
      var error = errorState[0]
      var setError = errorState[1]

      useEffect(function () {
        var live = true
        fetch(ROUTE.pending + '?callId=' + encodeURIComponent(callId || ''), { cache: 'no-store', credentials: 'same-origin' })
          .then(function (r) { return r.ok ? r.json() : null })
          .then(function (body) {
            if (!live) return
            setAsk(body || {})
            // On a person's screen now: only a card shown can be answered Always allow.
            if (body && body.callId) post(ROUTE.shown, { callId: body.callId }).catch(function () {})
          }, function () { if (live) setAsk({}) })
        return function () { live = false }
      }, [callId])

      function run(work) {
        setBusy(true)
        setError(null)
        work().catch(function (e) {
          setBusy(false)
          setError(errorText(e))
        })
      }

      var missing = ask && ask.missing ? ask.missing : []
      var proposals = ask && ask.proposals ? ask.proposals : []
      var operations = distinct(missing.map(function (m) { return m.capability }))
      var paths = distinct(missing.map(function (m) { return m.path }))
      if (operations.length === 0) {
        proposals.forEach(function (p) { granted(p.access).forEach(function (c) { if (operations.indexOf(c) === -1) operations.push(c) }) })
        paths = distinct(proposals.map(function (p) { return p.path }))
      }
      var places = ask ? { workspace: ask.workspace, home: ask.home } : null
      var whyFull = ask && typeof ask.reason === 'string' ? ask.reason.replace(/^dsh-allow: /, '') : ''
      var why = shortText(whyFull, places)
      // A proposal naming a program is stored as a command grant for it.
      var rule = proposals.map(function (p) {
        if (p.command) return t('card.ruleCommand', { command: p.command, capabilities: granted(p.access).join(','), path: shortPath(p.path, places) })
        return ruleText(t, p, p.recursive ? 'card.ruleTree' : 'card.rule', places)
      }).join(t('list.separator'))

      var fields = ask === null ? [h('div', { key: 'loading', className: 'dsh-allow-note' }, t('card.loading'))] : [
        h('dl', { key: 'fields', className: 'dsh-allow-card-fields' },
          h('dt', null, t('card.operation')), h('dd', { 'data-field': 'operation' }, operations.join(t('list.separator'))),
          h('dt', null, t('card.path')), h('dd', { className: 'dsh-allow-mono', 'data-field': 'path' }, paths.map(function (p) {
            return h('div', { key: p, 'data-path': p, title: fullTitle(t, [p], places) }, shortPath(p, places))
          })),
          h('dt', null, t('card.command')), h('dd', { className: 'dsh-allow-mono', 'data-field': 'command' }, shown(ask.command || '')),
          h('dt', null, t('card.sandbox')), h('dd', { 'data-field': 'sandbox' }, ask.mode || ''),
          // The decision's own words (what a destructive git line would lose,
          // that no fence reaches what docker's daemon runs), paths shortened.
          why === '' ? null : h('dt', null, t('card.why')),
          why === '' ? null : h('dd', { 'data-field': 'why', title: whyFull === why ? undefined : whyFull }, why)),
      ]
      return h('div', { className: 'dsh-allow-card-root', 'data-dsh-allow': 'card', 'data-call-id': callId, 'data-approval-key': wait.key },
        h('div', { className: 'dsh-allow-card' },
          h('div', { className: 'dsh-allow-card-strip' }, t('card.strip')),
          h('div', { className: 'dsh-allow-card-body', role: 'group' },
            h('div', { className: 'dsh-allow-card-title' }, t('card.title')),
            fields,
            error === null ? null : h('div', { className: 'dsh-allow-card-error' }, t('card.failed', { error: error }))),
          h('div', { className: 'dsh-allow-card-actions' },
            h('button', {
              type: 'button', className: 'dsh-allow-button', 'data-action': 'deny', disabled: busy,
              onClick: function () { run(function () { return answer(wait, 'rejected') }) },
            }, t('card.deny')),
            // The managed policy may leave a card Deny and Allow once only.
            proposals.length === 0 || (ask && ask.alwaysAllow === false) ? null : h('button', {
              type: 'button', className: 'dsh-allow-button', 'data-action': 'always-allow', disabled: busy,
              title: fullTitle(t, proposals.map(function (p) { return p.path }), places),
              onClick: function () {
                run(function () { return storeProposals(callId, proposals).then(function () { return answer(wait, 'allowed-once') }) })
              },
            }, t('card.alwaysAllow', { rule: rule })),
            h('button', {
              type: 'button', className: 'dsh-allow-button', 'data-variant': 'primary', 'data-action': 'allow-once', disabled: busy,
              onClick: function () { run(function () { return answer(wait, 'allowed-once') }) },
            }, t('card.allowOnce')))))
    }

    // ---- the plugin ------------------------------------------------------------------

    module.exports.dictionaries = { en: en, zh: zh }
    module.exports.selectOurApproval = selectOurApproval
    module.exports.shortPath = shortPath
    module.exports.shortText = shortText
    module.exports.shown = shown
    module.exports.inject = ['slots', 'locale']
    module.exports.apply = function (ctx) {
      ctx.effect(function () { return ctx.locale.register(NS, { zh: zh, en: en }) }, 'dsh-allow: dictionaries')
      ctx.effect(function () {
        if (typeof document === 'undefined') return function () {}
        var style = document.createElement('style')
        style.dataset.plugin = NS
        style.textContent = CSS
        document.head.appendChild(style)
        return function () { style.remove() }
      }, 'dsh-allow: styles')
      var t = ctx.locale.bind(NS)
      boundT = t
      ctx.slots.inject('conversation.view', function () {
        return ctx.slots.register({
          name: 'conversation.view',
          id: 'approvals',
          order: 20,
          locale: NS,
          label: function () { return t('view.approvals') },
          inject: function (sessionId) { return { sessionId: sessionId } },
        }, ApprovalsView)
      })
      // Chain election runs in ascending priority: 0 comes before DSH's own
      // approval panel (1) and after the read-only subagent composer (-10).
      ctx.slots.inject('conversation.composer', function () {
        return ctx.slots.register({
          name: 'conversation.composer',
          priority: 0,
          locale: NS,
          select: selectOurApproval,
        }, PermissionCard)
      })
    }
    return module.exports
  },
})
