// 中文/English: the pages are written in English, and in Chinese every label, placeholder,
// tooltip and message the pages write is shown translated as it is added to the page (a
// MutationObserver), so the pages need no change to be shown in both. Data (names, addresses,
// metadata) is never a label, and an element marked translate="no" is left alone. The choice is
// kept in localStorage; the default follows navigator.language.

const ZH = {
  'Roster console': 'Roster 控制台', Services: '服务', Service: '服务', Connections: '连接', Members: '成员',
  Namespace: '命名空间', 'Log out': '退出登录', 'Log in': '登录', 'Log in to Roster': '登录 Roster', User: '用户',
  Password: '密码', 'Wrong user or password.': '用户名或密码错误。',
  'Your session has ended; log in again.': '会话已结束，请重新登录。',
  Search: '搜索', 'Search services': '搜索服务', Group: '分组', 'Filter by group': '按分组筛选', Previous: '上一页',
  Next: '下一页', 'Go to page': '跳转到页', Go: '跳转', 'Page size': '每页条数', 'Sort by': '排序', Name: '名称',
  Instances: '实例', Healthy: '健康实例', 'Hide empty services': '隐藏空服务', Subscribers: '订阅者',
  Protection: '保护', 'threshold fired': '已触发保护阈值', 'No services': '没有服务', 'Create service': '创建服务',
  'Service name': '服务名', 'Protect threshold': '保护阈值', 'Metadata (JSON)': '元数据（JSON）', Create: '创建',
  '← Services': '← 服务', 'Delete service': '删除服务', 'Save settings': '保存设置', 'Health checks': '健康检查',
  "How the server probes each cluster's persistent instances.": '服务器如何探测每个集群的持久实例。',
  Cluster: '集群', Check: '检查方式', 'HTTP path': 'HTTP 路径', Actions: '操作', 'Save check': '保存检查',
  'No clusters': '没有集群', all: '全部', Address: '地址', Health: '健康状态', Traffic: '流量', Weight: '权重',
  Metadata: '元数据', Owner: '所有者', healthy: '健康', unhealthy: '不健康', online: '上线', offline: '下线',
  Offline: '下线', Online: '上线', Drain: '摘流', 'Set weight': '设置权重', Edit: '编辑', 'No instances': '没有实例',
  'Add a key': '添加键', 'Save metadata': '保存元数据', Cancel: '取消', Remove: '删除', Key: '键', Value: '值',
  Client: '客户端', Protocol: '协议', 'Unacked pushes': '未确认推送', 'No subscribers on this member': '此成员上没有订阅者',
  'Client, name, namespace or address': '客户端、名称、命名空间或地址', Connected: '连接时间',
  Subscriptions: '订阅', 'No connections': '没有连接', 'Owned instances': '拥有的实例', None: '无',
  'Client id': '客户端 ID', 'Connection': '连接', '← Connections': '← 连接', Member: '成员', Role: '角色',
  'Client address': '客户端地址', Lag: '延迟', 'Last contact': '最近联系', Sessions: '会话', up: '在线', down: '离线',
  'takes writes': '可写', 'read-only': '只读', '(this member)': '（本成员）', 'Metadata saved': '元数据已保存',
  'Settings saved': '设置已保存', 'Too few healthy instances: consumers get every instance': '健康实例太少：消费者获得全部实例',
  'threshold fired: consumers get every instance': '已触发保护阈值：消费者获得全部实例',
  Manage: '管理', Namespaces: '命名空间', 'Namespace id': '命名空间 ID', Description: '描述',
  'Create namespace': '创建命名空间', Id: 'ID', Save: '保存', Delete: '删除', 'Users and tokens': '用户和令牌',
  Kind: '类型', Grants: '权限', 'Add grant': '添加权限', 'Reset password': '重置密码', Add: '添加',
  'Password (users)': '密码（用户）',
};
// Texts with a part that varies: [English pattern, Chinese replacement].
const ZH_PATTERNS = [
  [/^Page (\d+) of (\d+)$/, '第 $1 页，共 $2 页'], [/^the auth file of member (.+)$/, '成员 $1 的认证文件'],
  [/^Added (.+)\.$/, '已添加 $1。'], [/^(\d+) services$/, '$1 个服务'], [/^(\d+) connections$/, '$1 个连接'],
  [/^Signed in as (.+)$/, '已登录：$1'], [/^Metadata of (.+)$/, '$1 的元数据'], [/^Service (.+) created$/, '服务 $1 已创建'],
  [/^Service (.+) deleted$/, '服务 $1 已删除'], [/^Health check of (.+) saved$/, '$1 的健康检查已保存'],
  [/^Metadata of (.+)$/, '$1 的元数据'], [/^Weight of (.+)$/, '$1 的权重'], [/^Check of (.+)$/, '$1 的检查方式'],
  [/^HTTP path of (.+)$/, '$1 的 HTTP 路径'], [/^The key (.+) is there twice$/, '键 $1 重复'],
  [/^Draining (.+)…$/, '正在摘流 $1…'], [/^Drained (.+): all (\d+) subscribers? acknowledged\.$/, '已摘流 $1：全部 $2 个订阅者已确认。'],
  [/^Delete the service (.+)\? Only a service without instances is deleted\.$/, '删除服务 $1？只有没有实例的服务才会被删除。'],
  [/^Drain (.+)\? It goes out of traffic now, and this page waits until every subscriber has acknowledged\.$/,
    '摘流 $1？它将立即停止接收流量，本页会等待所有订阅者确认。'],
  [/^(.+)\.\* keys \(the heartbeat's settings\) are not shown here and are kept as they are\.$/,
    '$1.* 键（心跳设置）不在此显示，保存时保持不变。'],
];

export const LANGS = { en: 'English', zh: '中文' };
export let lang = localStorage.getItem('roster.lang')
  || ((navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en');

/** The text in the chosen language. */
export function t(text) {
  if (lang !== 'zh') return text;
  const trimmed = text.trim();
  if (!trimmed) return text;
  let out = ZH[trimmed];
  if (out === undefined) {
    for (const [pattern, replacement] of ZH_PATTERNS) {
      if (pattern.test(trimmed)) { out = trimmed.replace(pattern, replacement); break; }
    }
  }
  return out === undefined ? text : text.replace(trimmed, out);
}

const ATTRIBUTES = ['placeholder', 'aria-label', 'title'];

function translate(node) {
  if (node.nodeType === Node.TEXT_NODE) {
    if (node.parentElement?.closest('[translate="no"], code, textarea, script, style')) return;
    const out = t(node.nodeValue);
    if (out !== node.nodeValue) node.nodeValue = out;
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE || node.closest('[translate="no"]')) return;
  for (const el of [node, ...node.querySelectorAll('*')]) {
    for (const a of ATTRIBUTES) {
      const v = el.getAttribute(a);
      if (v) { const out = t(v); if (out !== v) el.setAttribute(a, out); }
    }
  }
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) translate(n);
}

/** Starts translating what is added to the page, and offers the switch in {@code button}. */
export function startI18n(button, onSwitch) {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  button.textContent = lang === 'zh' ? LANGS.en : LANGS.zh;
  new MutationObserver((changes) => {
    if (lang !== 'zh') return;
    for (const c of changes) {
      if (c.type === 'characterData') translate(c.target);
      else c.addedNodes.forEach(translate);
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
  translate(document.head.querySelector('title'));
  translate(document.body);
  button.addEventListener('click', () => {
    lang = lang === 'zh' ? 'en' : 'zh';
    localStorage.setItem('roster.lang', lang);
    location.reload(); // every page and label again, in the new language
  });
}
