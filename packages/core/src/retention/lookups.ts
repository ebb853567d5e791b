/**
 * Commands that only look (docs/retention.md "Errors"): a failed look-up is the agent learning
 * something about the machine — `whoami /priv` is not supported here, the service is not
 * installed — not a failure of the work. Like a failed read, it stands only until the work goes
 * on (any later success). A command looks when every program of it only reads state: the
 * programs below, the reading subcommands of tools that also change things (`git status`,
 * `systemctl status`, `net user`), and PowerShell pipelines of reading cmdlets (`Get-…`,
 * `Select-Object`, `Where-Object`…); a loop over reading commands (`for f in …; do cat $f; done`) reads too.
 */
import { commandKey, shellSegments } from "./resolution.js";

const READING_PROGRAMS = new Set(
  (
    "ls dir cat type head tail less more grep egrep fgrep rg ag findstr find fd locate which where whereis whoami id groups hostname uname " +
    "pwd env printenv echo printf date df du free uptime ps pgrep stat file wc sort uniq cut tr column jq yq tree lsblk blkid lsusb " +
    "lspci lscpu lsmod findmnt mountvol netstat ss ifconfig ipconfig nslookup dig host ping traceroute test [ true false systeminfo " +
    "ver tasklist getent last who w dmesg sestatus aa-status getenforce wmic mokutil efibootmgr bootctl lsattr getfacl icacls read basename dirname realpath readlink"
  ).split(" "),
);

/** Tools that also change things: the subcommands (or first arguments) with which they only read. */
const READING_SUBCOMMANDS: Readonly<Record<string, RegExp>> = {
  git: /^(?:status|log|diff|show|branch|remote|rev-parse|ls-files|describe|blame|shortlog|reflog|config\s+--(?:get|list)|tag\s+-l|stash\s+list)\b/,
  gh: /^\S+\s+(?:view|list|status|checks|diff)\b|^(?:status|auth\s+status)\b/,
  systemctl: /^(?:status|is-active|is-enabled|is-failed|list-units|list-unit-files|list-timers|show|cat)\b/,
  journalctl: /^/,
  net: /^(?:user|localgroup|group|share|session|config|view|statistics|accounts)\b(?!.*\/(?:add|delete|del)\b)/i,
  reg: /^query\b/i,
  sc: /^(?:query|qc|queryex)\b/i,
  schtasks: /^\/query\b/i,
  ufw: /^status\b/,
  docker: /^(?:ps|images|logs|inspect|version|info)\b/,
  kubectl: /^(?:get|describe|logs|version)\b/,
  npm: /^(?:ls|list|view|outdated|config\s+get|-v|--version)\b/,
  pnpm: /^(?:ls|list|why|-v|--version)\b/,
  pip: /^(?:list|show|freeze)\b/,
  pip3: /^(?:list|show|freeze)\b/,
  bd: /^(?:show|list|ready|status|stats)\b/,
  ip: /^(?:-\w+\s+)*(?:a|addr|address|l|link|r|route|neigh)(?:\s+(?:show|list)\b|\s*$)/,
  mount: /^$/,
};

/** PowerShell cmdlets and verbs that only read. */
const READING_CMDLET = /^(?:Get|Select|Where|Format|Measure|Sort|Test|Find|Resolve|Out-String|Write-Output|Write-Host|Compare|Group|Read)\b|^ForEach-Object\b/i;
/** What changes something in a PowerShell script: a changing cmdlet or a method call that sets or removes. */
const POWERSHELL_CHANGE =
  /\b(?:Set|Stop|Start|Remove|New|Add|Disable|Enable|Restart|Install|Uninstall|Clear|Move|Copy|Rename|Invoke|Register|Unregister|Update|Import|Export|Push|Pop)-\w+|\.(?:Set|Delete|Remove|Create|Kill|Terminate)\w*\(/i;

/** Whether a shell command only looks (every part of it reads state). */
export function isLookupCommand(command: string): boolean {
  const segments = shellSegments(commandKey(command));
  return segments.length > 0 && segments.every((segment) => segmentLooks(segment.text));
}

/** A loop's or a condition's own words: `for f in …`, `done`, `fi` only iterate or close; `do`, `then` open what follows. */
const SHELL_KEYWORD = /^(?:do|then|else|elif|if|while|until|!|\{)\s+/;
const SHELL_FRAME = /^(?:for\s+\w+\s+in\b.*|for\s*\(\(.*|done|fi|esac|\}|else)$/;

function segmentLooks(segment: string): boolean {
  let text = segment.trim();
  while (SHELL_KEYWORD.test(text)) text = text.replace(SHELL_KEYWORD, "");
  if (SHELL_FRAME.test(text)) return true;
  const words = text.split(/\s+/).filter((w) => !/^\w+=/.test(w));
  while (words.length > 0 && /^(?:sudo|env|time|nice|timeout|command)$/.test(words[0]!)) {
    words.shift();
    if (words.length > 0 && /^\d+[smh]?$/.test(words[0]!)) words.shift();
  }
  const program = (words[0] ?? "").replace(/^.*[\\/]/, "").replace(/\.exe$/i, "").toLowerCase();
  const rest = words.slice(1).join(" ");
  if (program === "powershell" || program === "pwsh") return powershellLooks(rest);
  if (program === "cmd") return /^\/c\s+/i.test(rest) && isLookupCommand(unquote(rest.replace(/^\/c\s+/i, "")));
  if (READING_PROGRAMS.has(program)) return true;
  const subcommands = READING_SUBCOMMANDS[program];
  return subcommands?.test(rest) === true;
}

/** `powershell -Command "Get-Service x | Select-Object Name"`: every pipeline part a reading cmdlet, nothing set or removed. */
function powershellLooks(args: string): boolean {
  const script = unquote(args.replace(/^(?:-\w+\s+)*?-(?:Command|c)\s+/i, ""));
  if (script.length === 0 || POWERSHELL_CHANGE.test(script)) return false;
  return topLevelParts(script)
    .map((part) => part.trim().replace(/^\(+/, ""))
    .filter((part) => part.length > 0)
    .every((part) => READING_CMDLET.test(part) || /^\$\w+\s*=\s*(?:Get|Select|Where)-/i.test(part) || isLookupCommand(part));
}

/** A script's pipeline parts and statements (`|`, `;`), not splitting inside braces, brackets or quotes. */
function topLevelParts(script: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (const ch of script) {
    if (quote) quote = ch === quote ? undefined : quote;
    else if (ch === "'" || ch === '"') quote = ch;
    else if ("{([".includes(ch)) depth++;
    else if ("})]".includes(ch)) depth = Math.max(0, depth - 1);
    else if ((ch === "|" || ch === ";") && depth === 0) {
      parts.push(current);
      current = "";
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts;
}

/** The text inside its quotes (a command cut short, ending in "…", has lost its closing one). */
function unquote(text: string): string {
  return text
    .trim()
    .replace(/…$/, "")
    .replace(/^(["'])([\s\S]*?)\1?$/, "$2");
}
