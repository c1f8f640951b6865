// Everything `/allow` says, in English and Chinese, with the same keys in
// both. `{name}` placeholders are filled by `say()`.

export const MESSAGES = {
  en: {
    'list.empty': 'No stored rules. ({file})',
    'list.header': 'Stored rules ({file}):',
    'list.row': '{n}. {path}  {caps}  ({shape})',
    'shape.folder': 'folder',
    'shape.file': 'file',
    'rules.error': 'The rules file {file} cannot be used: {error}. It is left unchanged and read as a fault, never as fewer rules: until it is fixed every shell call asks.',
    'rules.warning': 'Note: {warning}',
    'status.header': 'dsh-allow {version}',
    'status.rules': 'Rules file: {file} ({count} rules)',
    'status.defaults': 'Defaults: in the workspace {workspace} read, write, create and execute are granted, delete is not; temp directories get all five; the rules file and audit log are never writable.',
    'status.mode': 'Sandbox mode of this session: {mode}',
    'status.noWorkspace': 'Workspace: none — {why}. Every write, create or delete asks; rules and cards work as anywhere else. Start DSH in the project\'s folder to work there without cards.',
    'status.ledger.ok': 'Audit ledger: {file}',
    'status.ledger.off': 'Audit ledger: off (audit: false)',
    'status.ledger.lost': 'Audit ledger: {file} — {count} records could not be written in this session (last at {time}: {error}).',
    'status.ledger.refuse': 'A call whose record cannot be written does not run (auditFailure: refuse).',
    'status.ledger.warn': 'A call whose record cannot be written runs, with a warning in its result (auditFailure: warn): those calls are not recorded.',
    'status.ledger.nowOk': 'The latest record was written.',
    'status.ledger.nowFailing': 'The latest record could not be written either: fix the file.',
    'status.fence': 'Kernel fence: {level} (enforce: {enforce}; runner: {runner})',
    'status.fence.reason': 'Why: {reason}',
    'status.persistence.shut': 'Persistence: shut — {why}',
    'status.persistence.open': 'Persistence: OPEN ({why}). A fenced call could write a repository\'s hooks or git config, which git runs later outside the fence; inline code in a repository asks instead of running.',
    'status.metadata.fenced': 'Metadata: fenced — {why}',
    'status.metadata.open': 'Metadata: OPEN ({why}). A fenced call could change modes, owners, times and extended attributes of any file its user owns.',
    'status.processes.hidden': 'Other processes: hidden — {why}',
    'status.processes.visible': 'Other processes: VISIBLE ({why}). A fenced call can read the command lines of the user\'s other processes.',
    'status.doors.shut': 'Side doors: shut ({why}).',
    'status.doors.open': 'Side doors: OPEN ({why}). A fenced call could reach the DSH host\'s web server, daemons on unix sockets, the terminal or other processes.',
    'status.unfenced': 'WARNING: session {session} runs in danger-full-access since {since}: DSH confines nothing there; dsh-allow still decides.',
    'status.defaultPreset': 'WARNING: the default permission preset is {preset}: every new session, after a restart too, runs with no fence.',
    'status.cap': '  {cap}: {state} — {why}',
    'state.kernel': 'in the kernel',
    'state.gate': 'decision only',
    'fence.pending': 'still probing',
    'add.usage': 'Usage: /allow add <caps> <path> [file|folder]  (caps: read,write,create,delete,execute)',
    'add.badcap': 'Unknown capability "{cap}" (read, write, create, delete, execute).',
    'add.protected': '{path} is a protected path: no rule can open it.',
    'add.done': 'Added rule {n}: {path}  {caps}  ({shape})',
    'remove.usage': 'Usage: /allow remove <n>  (see /allow list)',
    'remove.missing': 'There is no rule {n}.',
    'remove.done': 'Removed rule {n}: {path}  {caps}',
    'clear.done': 'Removed all {count} rules.',
    'write.failed': 'Nothing was changed: {error}',
    'usage': 'Usage: /allow [list] | status | add <caps> <path> [file|folder] | remove <n> | clear | command list|add|remove',
    'command.usage': 'Usage: /allow command list | add <program> [roots…] [--shape strict|any] | remove <n>  (roots default to $HOME; quote a root with spaces)',
    'command.empty': 'No command grants. ({file})',
    'command.header': 'Command grants ({file}): the program may write these roots, for its own call only',
    'command.row': '{n}. {command}  writes {roots}  (shape {shape})',
    'command.badfield': 'Not added — {field}: {why}',
    'command.invalid': 'Not added — {why}',
    'command.duplicate': '{command} already has a command grant ({n}); remove it first with /allow command remove {n}.',
    'command.added': 'Added command grant {row}',
    'command.missingroot': 'Note: {root} does not exist yet. The kernel fence can only carry a folder that exists, so these calls ask until it is created.',
    'command.nosuch': 'There is no command grant {n}.',
    'command.removed': 'Removed command grant {row}',
  },
  zh: {
    'list.empty': '没有已存的规则。({file})',
    'list.header': '已存的规则({file}):',
    'list.row': '{n}. {path}  {caps}  ({shape})',
    'shape.folder': '文件夹',
    'shape.file': '文件',
    'rules.error': '规则文件 {file} 无法使用:{error}。文件保持原样,按故障处理,绝不当作更少的规则:修好之前每次 shell 调用都会询问。',
    'rules.warning': '注意:{warning}',
    'status.header': 'dsh-allow {version}',
    'status.rules': '规则文件:{file}({count} 条规则)',
    'status.defaults': '默认权限:workspace {workspace} 内授予 read、write、create、execute,不授予 delete;临时目录五种全允许;规则文件与审计日志永远不可写。',
    'status.mode': '本会话的沙箱模式:{mode}',
    'status.noWorkspace': '工作区:无 —— {why}。每次写、建、删都会询问;规则与卡片照常生效。在项目目录里启动 DSH,就能在那里免卡片工作。',
    'status.ledger.ok': '审计日志:{file}',
    'status.ledger.off': '审计日志:已关闭(audit: false)',
    'status.ledger.lost': '审计日志:{file} —— 本会话有 {count} 条记录没能写入(最近一次 {time}:{error})。',
    'status.ledger.refuse': '记录写不进去的调用不会执行(auditFailure: refuse)。',
    'status.ledger.warn': '记录写不进去的调用照常执行,结果里附带警告(auditFailure: warn):这些调用没有记录。',
    'status.ledger.nowOk': '最近一条记录已写入。',
    'status.ledger.nowFailing': '最近一条记录也没能写入:请修好这个文件。',
    'status.fence': '内核围栏:{level}(enforce: {enforce};runner: {runner})',
    'status.fence.reason': '原因:{reason}',
    'status.persistence.shut': '持久化面:已关闭 —— {why}',
    'status.persistence.open': '持久化面:未关闭({why})。被围住的调用可以写仓库的 hooks 或 git 配置,git 之后会在围栏之外执行它们;仓库里的内联代码因此改为询问。',
    'status.metadata.fenced': '元数据:已围住 —— {why}',
    'status.metadata.open': '元数据:未围住({why})。被围住的调用可以改变其用户拥有的任何文件的权限位、属主、时间戳和扩展属性。',
    'status.processes.hidden': '其他进程:已隐藏 —— {why}',
    'status.processes.visible': '其他进程:可见({why})。被围住的调用可以读取该用户其他进程的命令行。',
    'status.doors.shut': '旁门:已关闭({why})。',
    'status.doors.open': '旁门:未关闭({why})。被围住的调用可以连到 DSH 主机的 Web 服务、unix 套接字上的守护进程、终端或其他进程。',
    'status.unfenced': '警告:会话 {session} 自 {since} 起运行于 danger-full-access:DSH 不再围住它;dsh-allow 仍在判定。',
    'status.defaultPreset': '警告:默认权限预设为 {preset}:此后每个新会话(重启后亦然)都不受围栏约束。',
    'status.cap': '  {cap}:{state} —— {why}',
    'state.kernel': '内核强制',
    'state.gate': '仅判定层',
    'fence.pending': '仍在探测',
    'add.usage': '用法:/allow add <能力> <路径> [file|folder](能力:read,write,create,delete,execute)',
    'add.badcap': '未知能力「{cap}」(read、write、create、delete、execute)。',
    'add.protected': '{path} 是受保护路径:任何规则都无法打开它。',
    'add.done': '已添加规则 {n}:{path}  {caps}  ({shape})',
    'remove.usage': '用法:/allow remove <编号>(见 /allow list)',
    'remove.missing': '没有第 {n} 条规则。',
    'remove.done': '已删除规则 {n}:{path}  {caps}',
    'clear.done': '已删除全部 {count} 条规则。',
    'write.failed': '没有做任何改动:{error}',
    'usage': '用法:/allow [list] | status | add <能力> <路径> [file|folder] | remove <编号> | clear | command list|add|remove',
    'command.usage': '用法:/allow command list | add <程序> [可写根…] [--shape strict|any] | remove <编号>(可写根默认 $HOME;含空格的根请加引号)',
    'command.empty': '没有命令授权。({file})',
    'command.header': '命令授权({file}):该程序仅在自己的那次调用里可写这些根',
    'command.row': '{n}. {command}  可写 {roots}  (写法 {shape})',
    'command.badfield': '未添加 —— {field}:{why}',
    'command.invalid': '未添加 —— {why}',
    'command.duplicate': '{command} 已有命令授权(第 {n} 条);请先用 /allow command remove {n} 删除。',
    'command.added': '已添加命令授权 {row}',
    'command.missingroot': '注意:{root} 还不存在。内核围栏只能承载已存在的目录,目录创建之前这些调用仍会询问。',
    'command.nosuch': '没有第 {n} 条命令授权。',
    'command.removed': '已删除命令授权 {row}',
  },
}

export function say(lang, key, values = {}) {
  const text = MESSAGES[lang]?.[key] ?? MESSAGES.en[key] ?? key
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m))
}

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/

/**
 * The user's language: Chinese when their own latest message (or the
 * command itself) is written in it, else the locale, else English.
 */
export function languageOf(session, rawInput = '', env = process.env) {
  if (CJK.test(rawInput)) return 'zh'
  const events = session?.events ?? []
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const e = events[i]
    if (e.type !== 'user/message' || e.data?.source?.kind !== 'user') continue
    const text = (e.data.message?.content ?? e.data.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join(' ')
    if (text.trim()) return CJK.test(text) ? 'zh' : 'en'
  }
  return /^zh/i.test(env.LC_ALL || env.LC_MESSAGES || env.LANG || '') ? 'zh' : 'en'
}
