// A bot client written from the docs alone, as an outsider would: no Rust,
// no botlane, no packages. It tests the claim that docs/protocol.md,
// docs/crypto.md, docs/rest.md, docs/text-grammar.md and docs/vectors/ are
// enough to implement the wire.
//
//     node docs/vectors/outsider-bot.mjs path/to/botlane-devserver
//
// node >= 20 (it re-runs itself with --experimental-websocket where the
// global WebSocket needs it). It checks its own text grammar and sidecar
// decoder against the vectors, then starts the devserver on free ports with a
// config in a temporary directory, and as a bot: logs in (op 10/11),
// publishes the worked example's menu (op 20), receives the channel key from
// a human (op 50), drops a sidecar addressed to another bot, answers one
// text-lane and one structured-lane invocation with true replies (op
// 30/32/33), fetches history (op 40), sends a heartbeat (op 12), uses the
// REST lane (op 638, the exchange, two /api calls), and sees the service's
// 1001 when it stops the devserver with SIGINT. The human is a second
// WebSocket login. Every step is asserted; the first mismatch exits 1 with
// one line saying what differed. The devserver and the temporary directory
// are removed on every exit.

import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

if (typeof WebSocket === "undefined") {
  // node 20 has the browser WebSocket behind a flag; node 22 has it on.
  const again = spawnSync(process.execPath, ["--experimental-websocket", ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(again.status ?? 1);
}

const here = dirname(fileURLToPath(import.meta.url));
const subtle = globalThis.crypto.subtle;
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });
const DEADLINE_MS = 20_000; // the whole run; scripts/test wants well under 30 s
const STEP_MS = 5_000; // one reply or push

class Mismatch extends Error {}
const fail = (what) => { throw new Mismatch(what); };
const expect = (ok, what) => { if (!ok) fail(what); };
const same = (actual, expected, what) =>
  expect(JSON.stringify(actual) === JSON.stringify(expected), `${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
const step = (what) => console.log(`outsider-bot: ${what}`);

// ---------------------------------------------------------------- crypto.md
// Strict base64 (crypto.md "Conventions"): padded, standard alphabet, one text per byte string.
const b64 = (bytes) => Buffer.from(bytes).toString("base64");
function unb64(text) {
  const bytes = Uint8Array.from(Buffer.from(text, "base64"));
  expect(b64(bytes) === text, "a base64 field is not canonical standard base64");
  return bytes;
}
const concat = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));
const aesKey = (raw, use) => subtle.importKey("raw", raw, "AES-GCM", false, [use]);

// §1 sealed payload: base64(nonce(12) || ciphertext || tag(16)), AAD = UTF-8(channel id).
async function seal(key, text, channelId) {
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: enc.encode(channelId) }, await aesKey(key, "encrypt"), enc.encode(text));
  return b64(concat(nonce, new Uint8Array(sealed)));
}
async function open(key, wire, channelId) {
  const bytes = unb64(wire);
  expect(bytes.length >= 28, "a sealed payload is shorter than nonce and tag");
  const plain = await subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: enc.encode(channelId) }, await aesKey(key, "decrypt"), bytes.slice(12));
  return dec.decode(plain);
}

// §2 wrapped channel key: kek = HKDF-SHA256(X25519(own, their), salt = E || R, info = "botlane channel key v1").
async function kek(ownPrivate, theirRaw, ephemeralRaw, recipientRaw, use) {
  const their = await subtle.importKey("raw", theirRaw, { name: "X25519" }, false, []);
  const shared = await subtle.deriveBits({ name: "X25519", public: their }, ownPrivate, 256); // throws on all-zero
  const ikm = await subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
  return subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: concat(ephemeralRaw, recipientRaw), info: enc.encode("botlane channel key v1") },
    ikm, { name: "AES-GCM", length: 256 }, false, [use]);
}
async function identity() {
  const pair = await subtle.generateKey({ name: "X25519" }, true, ["deriveBits"]);
  return { privateKey: pair.privateKey, publicRaw: new Uint8Array(await subtle.exportKey("raw", pair.publicKey)) };
}
async function wrapChannelKey(channelKey, recipientRaw, channelId) {
  const eph = await identity();
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const k = await kek(eph.privateKey, recipientRaw, eph.publicRaw, recipientRaw, "encrypt");
  const sealed = await subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: enc.encode(channelId) }, k, channelKey);
  return { ephemeral: b64(eph.publicRaw), ciphertext: b64(concat(nonce, new Uint8Array(sealed))) };
}
async function unwrapChannelKey(me, wrapped, channelId) {
  const ephemeralRaw = unb64(wrapped.ephemeral);
  const bytes = unb64(wrapped.ciphertext);
  expect(ephemeralRaw.length === 32 && bytes.length === 60, "a wrapped key has the wrong lengths (crypto.md §2)");
  const k = await kek(me.privateKey, ephemeralRaw, ephemeralRaw, me.publicRaw, "decrypt");
  return new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: enc.encode(channelId) }, k, bytes.slice(12)));
}

// ------------------------------------------- the canonical menu (protocol.md)
const TYPE_CODES = { string: 1, integer: 2, boolean: 3, user: 4, channel: 5, role: 6, number: 7 };
function canonicalMenu(decls) {
  return [...decls].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((d) => [d.name, d.description,
    (d.options ?? []).map((o) => [o.name, TYPE_CODES[o.type], o.description, o.required === true, o.choices ?? []])]);
}
const sha256hex = (text) => createHash("sha256").update(text, "utf8").digest("hex");

// Our commands: exactly the worked example of protocol.md "The canonical menu".
const COMMANDS = [
  { name: "roll", description: "Roll dice", options: [
    { name: "count", type: "integer", description: "How many", required: true },
    { name: "sides", type: "integer", description: "Sides", choices: ["6", "20"] },
    { name: "label", type: "string", description: "What for" }] },
  { name: "ping", description: "Check the bot" },
];

// ------------------------------------------------ text-grammar.md, both lanes
const WS = /\p{White_Space}/u; // char::is_whitespace is Unicode White_Space
const lowerAscii = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const NAME = /^[a-z0-9_-]{1,32}$/;
const QUOTES = { '"': '"', "“": "”", "«": "»" };
class GrammarError extends Error { constructor(kind, option = null) { super(kind); this.kind = kind; this.option = option; } }

// "Finding the command": the lowered name and where the rest starts, or null.
function matchCommand(line, prefix) {
  const p = prefix.replace(/^\p{White_Space}+/u, ""); // "Decisions the contract left open"
  if (prefix === "") return null;
  const s = line.replace(/^\p{White_Space}+/u, "");
  if (!s.startsWith(p)) return null;
  let end = p.length;
  while (end < s.length && !WS.test(s[end])) end += 1;
  const name = lowerAscii(s.slice(p.length, end));
  return NAME.test(name) ? { name, rest: s.slice(end) } : null;
}

// "Turning text into typed values", then the choices (compared numerically for numbers).
function fromText(option, text) {
  const bad = () => { throw new GrammarError("InvalidValue", option.name); };
  let value;
  switch (option.type) {
    case "integer": if (!/^[+-]?[0-9]+$/.test(text) || (BigInt(text) < 0n ? -BigInt(text) : BigInt(text)) > 9007199254740991n) bad(); value = Number(text); break;
    case "number": if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(text) || !Number.isFinite(Number(text))) bad(); value = Number(text); break;
    case "boolean": { const w = lowerAscii(text); if (["true", "yes", "1"].includes(w)) value = true; else if (["false", "no", "0"].includes(w)) value = false; else bad(); break; }
    case "string": value = text; break;
    default: if (text === "") bad(); value = text; // user, channel, role: opaque ids
  }
  return checkChoices(option, value);
}
function checkChoices(option, value) {
  const choices = option.choices ?? [];
  if (choices.length === 0) return value;
  const numeric = option.type === "integer" || option.type === "number";
  if (!choices.some((c) => (numeric ? fromText({ ...option, choices: [] }, c) === value : c === value))) throw new GrammarError("NotInChoices", option.name);
  return value;
}

// One quoted token at `at` (an opening quote): [value, index after the closing quote].
function quoted(s, at, option) {
  const close = QUOTES[s[at]];
  let out = "";
  for (let i = at + 1; i < s.length; i += 1) {
    if (s[i] === "\\" && i + 1 < s.length) { out += s[++i]; continue; }
    if (s[i] === close) {
      if (i + 1 < s.length && !WS.test(s[i + 1])) throw new GrammarError("TextAfterClosingQuote", option?.name ?? null);
      return [out, i + 1];
    }
    out += s[i];
  }
  throw new GrammarError("UnterminatedQuote", option?.name ?? null);
}

// parse_invocation_text: a Map option -> value, or a GrammarError.
function parseLine(decl, line, prefix = "/") {
  const found = matchCommand(line, prefix);
  if (!found || found.name !== decl.name) throw new GrammarError("NotThisCommand");
  const opts = decl.options ?? [], s = found.rest, args = new Map();
  const byName = (token) => { const c = token.indexOf(":"); return c < 0 ? null : opts.find((o) => o.name === lowerAscii(token.slice(0, c))) ?? null; };
  let i = 0, positional = 0, named = false;
  for (;;) {
    while (i < s.length && WS.test(s[i])) i += 1;
    if (i >= s.length) break;
    const last = opts[opts.length - 1];
    if (!named && positional === opts.length - 1 && last.type === "string") { // "The greedy last string"
      const rest = s.slice(i).replace(/\p{White_Space}+$/u, "");
      let whole = null;
      if (QUOTES[rest[0]]) { try { const [v, end] = quoted(rest, 0, last); if (end === rest.length) whole = v; } catch { /* taken as typed */ } }
      if (whole !== null) { args.set(last.name, fromText(last, whole)); break; }
      let firstEnd = 0; while (firstEnd < rest.length && !WS.test(rest[firstEnd])) firstEnd += 1;
      if (!byName(rest.slice(0, firstEnd))) { args.set(last.name, fromText(last, rest)); break; }
    }
    let end = i; while (end < s.length && !WS.test(s[end])) end += 1;
    const option = QUOTES[s[i]] ? null : byName(s.slice(i, end));
    let text;
    if (option) { // a named argument NAME:VALUE
      const at = i + s.slice(i, end).indexOf(":") + 1;
      if (QUOTES[s[at]]) [text, end] = quoted(s, at, option); else text = s.slice(at, end);
      if (text === "" && !QUOTES[s[at]]) throw new GrammarError("EmptyNamedValue", option.name);
      if (args.has(option.name)) throw new GrammarError("DuplicateOption", option.name);
      named = true;
      args.set(option.name, fromText(option, text));
    } else { // a value without a name, bare or quoted
      if (named) throw new GrammarError("PositionalAfterNamed");
      if (positional >= opts.length) throw new GrammarError("ExtraArgument");
      const target = opts[positional++];
      if (QUOTES[s[i]]) [text, end] = quoted(s, i, target); else text = s.slice(i, end);
      args.set(target.name, fromText(target, text));
    }
    i = end;
  }
  for (const o of opts) if (o.required && !args.has(o.name)) throw new GrammarError("MissingRequired", o.name);
  return args;
}

// A strict JSON reader for the sidecar (protocol.md "The command sidecar"):
// JSON.parse keeps the last of a repeated key and reads `1.0` as `1`, and the
// sidecar rules need both distinctions. Objects become Maps; numbers {num, int}.
function strictJson(text) {
  let i = 0;
  const bad = () => { throw new Error("not a sidecar"); };
  const ws = () => { while (" \t\n\r".includes(text[i]) && i < text.length) i += 1; };
  const take = (re) => { re.lastIndex = i; const m = re.exec(text); if (!m) bad(); i += m[0].length; return m; };
  const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y, NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  function value() {
    ws();
    if (text[i] === "{" || text[i] === "[") {
      const object = text[i++] === "{", out = object ? new Map() : [];
      ws();
      if (text[i] === (object ? "}" : "]")) { i += 1; return out; }
      for (;;) {
        if (object) { ws(); const key = JSON.parse(take(STRING)[0]); if (out.has(key)) bad(); ws(); take(/:/y); out.set(key, value()); } else out.push(value());
        ws();
        if (text[i] === (object ? "}" : "]")) { i += 1; return out; }
        take(/,/y);
      }
    }
    if (text[i] === '"') return JSON.parse(take(STRING)[0]);
    for (const [word, v] of [["true", true], ["false", false], ["null", null]]) if (text.startsWith(word, i)) { i += word.length; return v; }
    const m = take(NUMBER);
    const int = !m[1] && !m[2] && BigInt(m[0]) >= -(2n ** 63n) && BigInt(m[0]) < 2n ** 63n; // "fits a signed 64-bit integer"
    return { num: Number(m[0]), int };
  }
  const v = value(); ws();
  if (i !== text.length) bad();
  return v;
}
const canonicalId = (id) => lowerAscii(id.replaceAll("-", ""));

// decode_command_data without a registry: {bot, name, args: Map} or null.
function decodeSidecar(text) {
  let top;
  try { top = strictJson(text); } catch { return null; }
  if (!(top instanceof Map)) return null;
  const v = top.get("v"), bot = top.get("bot"), name = top.get("name"), args = top.get("args");
  if (!(v?.int && v.num === 1) || typeof bot !== "string" || typeof name !== "string" || !(args instanceof Map)) return null;
  for (const a of args.values()) if (!(typeof a === "string" || typeof a === "boolean" || (a?.num !== undefined && Number.isFinite(a.num)))) return null;
  return { bot: canonicalId(bot), name: lowerAscii(name), args };
}
// "Value typing": the declaration coerces each value, by the text lane's table for strings.
function coerce(decl, args) {
  const out = new Map();
  for (const [key, raw] of args) {
    const o = (decl.options ?? []).find((x) => x.name === key);
    if (!o) throw new GrammarError("UnknownOption", key);
    const wrong = () => { throw new GrammarError("InvalidValue", key); };
    let v;
    if (typeof raw === "string") v = fromText(o, raw);
    else if (typeof raw === "boolean") { if (o.type !== "boolean") wrong(); v = raw; }
    else if (o.type === "integer") { if (!Number.isSafeInteger(raw.num)) wrong(); v = raw.num; }
    else if (o.type === "number") v = raw.num;
    else wrong();
    out.set(key, checkChoices(o, v));
  }
  for (const o of decl.options ?? []) if (o.required && !out.has(o.name)) throw new GrammarError("MissingRequired", o.name);
  return out;
}

// Typed args as the vectors write them: {"integer": 2}, {"string": "x"}…
const kindOf = (decl, key) => ({ integer: "integer", number: "number", boolean: "boolean" })[decl.options.find((o) => o.name === key).type] ?? "string";
const typed = (decl, args) => Object.fromEntries([...args].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, { [kindOf(decl, k)]: v }]));

// ---------------------------------------- the vectors, before any networking
function checkVectors() {
  const load = (name) => JSON.parse(readFileSync(join(here, name), "utf8"));
  const menus = load("menus.json");
  for (const c of menus.cases) {
    const json = JSON.stringify(canonicalMenu(c.declarations));
    same([json, sha256hex(json)], [c.json, c.sha256], `menus.json "${c.name}"`);
  }
  const grammar = load("text-grammar.json");
  for (const c of grammar.match) same(matchCommand(c.line, c.prefix)?.name ?? null, c.expect, `text-grammar.json match ${JSON.stringify(c.line)} prefix ${JSON.stringify(c.prefix)}`);
  for (const c of grammar.parse) {
    const decl = grammar.declarations[c.decl];
    let got;
    try { got = { args: typed(decl, parseLine(decl, c.line, c.prefix)) }; } catch (e) { if (!(e instanceof GrammarError)) throw e; got = { error: { kind: e.kind, option: e.option } }; }
    const want = c.expect.args ? { args: c.expect.args } : { error: { kind: c.expect.error.kind, option: c.expect.error.option } };
    same(got, want, `text-grammar.json parse ${JSON.stringify(c.line)} (${c.decl})`);
  }
  const sidecars = load("sidecars.json");
  for (const c of sidecars.decode) {
    const decoded = decodeSidecar(c.json);
    same(decoded === null, c.decoded === null, `sidecars.json "${c.name}" decoded`);
    let withRegistry = null;
    const decl = decoded && sidecars.registry.find((d) => d.name === decoded.name);
    if (decl) { try { withRegistry = { args: typed(decl, coerce(decl, decoded.args)), bot: decoded.bot, name: decoded.name }; } catch (e) { if (!(e instanceof GrammarError)) throw e; } }
    same(withRegistry, c.with_registry, `sidecars.json "${c.name}" with_registry`);
  }
  step(`vectors: ${menus.cases.length} menus, ${grammar.match.length + grammar.parse.length} text-grammar cases, ${sidecars.decode.length} sidecars agree`);
}

// ------------------------------- the realtime wire (protocol.md "Transport")
const PUSHES = new Set([11, 32, 33, 34, 35, 50]);
class Conn {
  constructor(name, url) {
    this.name = name;
    this.pending = new Map(); // op -> FIFO of waiting requests ("Requests, replies and pushes")
    this.pushes = []; // pushes nobody took yet
    this.waiters = []; // {op, match, resolve}
    this.handlers = new Map(); // op -> handler for every push of that op
    this.chain = Promise.resolve();
    this.ws = new WebSocket(url);
    this.ws.onmessage = (event) => this.receive(event.data);
    this.ws.onclose = (event) => {
      this.closed = `${name}: the service closed the connection (${event.code} ${event.reason})`;
      for (const queue of this.pending.values()) for (const r of queue.splice(0)) r.reject(new Mismatch(this.closed));
    };
  }
  ready() {
    return new Promise((resolve, reject) => {
      this.ws.onopen = resolve;
      this.ws.onerror = () => reject(new Mismatch(`${this.name}: cannot open the WebSocket`));
    });
  }
  receive(data) {
    if (typeof data !== "string") return die(new Mismatch(`${this.name}: a binary frame from the service`));
    const frame = JSON.parse(data);
    if (!Number.isInteger(frame.op) || typeof frame.d !== "object") return die(new Mismatch(`${this.name}: a frame without op and object d: ${data}`));
    if (PUSHES.has(frame.op)) {
      // Handlers run one after another, so pushes are handled in their order.
      if (this.handlers.has(frame.op)) return (this.chain = this.chain.then(() => this.handlers.get(frame.op)(frame.d)).catch(die));
      const w = this.waiters.findIndex((x) => x.op === frame.op && x.match(frame.d));
      if (w >= 0) return this.waiters.splice(w, 1)[0].resolve(frame.d);
      return this.pushes.push(frame);
    }
    const queue = this.pending.get(frame.op);
    if (!queue?.length) return die(new Mismatch(`${this.name}: a reply to op ${frame.op} that nothing asked for`));
    queue.shift().resolve(frame.d);
  }
  // A request: the first reply with the same op is its answer (positional).
  request(op, d) {
    return new Promise((resolve, reject) => {
      if (!this.pending.has(op)) this.pending.set(op, []);
      const timer = setTimeout(() => reject(new Mismatch(`${this.name}: no reply to op ${op} within ${STEP_MS} ms`)), STEP_MS);
      this.pending.get(op).push({ resolve: (v) => { clearTimeout(timer); resolve(v); }, reject });
      this.ws.send(JSON.stringify({ op, d }));
    });
  }
  async ok(op, d, what) {
    const reply = await this.request(op, d);
    expect(reply.code === 0, `${this.name}: ${what} (op ${op}) answered ${JSON.stringify(reply)}`);
    return reply;
  }
  push(op, what, match = () => true) {
    const at = this.pushes.findIndex((f) => f.op === op && match(f.d));
    if (at >= 0) return Promise.resolve(this.pushes.splice(at, 1)[0].d);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Mismatch(`${this.name}: no op ${op} (${what}) within ${STEP_MS} ms`)), STEP_MS);
      this.waiters.push({ op, match, resolve: (d) => { clearTimeout(timer); resolve(d); } });
    });
  }
  // Login (op 10), then ready (op 11) pushed after the reply.
  async login(token, me, kind) {
    const reply = await this.ok(10, { token, public_key: b64(me.publicRaw), client: "outsider-bot/0.1.0" }, "login");
    const ready = await this.push(11, "ready");
    same([ready.user_id, ready.kind], [reply.user_id, kind], `${this.name}: ready's user_id and kind`);
    return ready;
  }
}

// ---------------------------------------------------------------- the bot
// Dispatch (protocol.md "The command sidecar"): the content is opened first
// (a message that does not open is dropped); a sidecar that opens and
// decodes wins, and one for another bot is dropped; otherwise the text lane.
const tryOpen = (key, wire, channelId) => open(key, wire, channelId).catch(() => null);
function runBot(conn, me, userId, channels, keys, lanes) {
  conn.handlers.set(50, async (d) => { // a channel key wrapped to us (crypto.md §2)
    if (!channels.has(d.channel_id)) return; // only for a channel we are a member of
    const key = await unwrapChannelKey(me, d.wrapped, d.channel_id).catch(() => null);
    if (key) keys.set(d.channel_id, key); // one key per channel: the newest replaces it
  });
  conn.handlers.set(32, async ({ message }) => {
    if (message.author_id === userId) return lanes.push("own"); // our own replies come back too
    const key = keys.get(message.channel_id);
    const line = key && (await tryOpen(key, message.content, message.channel_id));
    if (typeof line !== "string") return lanes.push("unreadable");
    let sidecar = null;
    if (message.command !== undefined) sidecar = decodeSidecar((await tryOpen(key, message.command, message.channel_id)) ?? "");
    if (sidecar && sidecar.bot !== canonicalId(userId)) return lanes.push("dropped");
    let answer;
    try {
      if (sidecar) {
        const decl = COMMANDS.find((c) => c.name === sidecar.name);
        if (!decl) return lanes.push("ignored"); // not ours: no text fallback either
        answer = run(decl, coerce(decl, sidecar.args));
        lanes.push("structured");
      } else {
        const decl = COMMANDS.find((c) => c.name === matchCommand(line, "/")?.name);
        if (!decl) return lanes.push("ignored");
        answer = run(decl, parseLine(decl, line));
        lanes.push("text");
      }
    } catch (e) {
      if (!(e instanceof GrammarError)) throw e;
      answer = `error: ${e.kind}${e.option ? ` (${e.option})` : ""}`;
      lanes.push("error");
    }
    await conn.ok(30, { channel_id: message.channel_id, content: await seal(key, answer, message.channel_id), reply_to: message.id }, "the bot's reply");
  });
}
function run(decl, args) {
  if (decl.name === "ping") return "pong";
  const label = args.has("label") ? ` for ${args.get("label")}` : "";
  return `rolled ${args.get("count")}d${args.get("sides") ?? 6}${label}`;
}

// -------------------------------------------------- the devserver, the run
let child = null, tmp = null;
function cleanup() {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = null;
}
function die(error) {
  console.error(`outsider-bot: FAIL: ${error instanceof Mismatch ? error.message : error.stack}`);
  process.exit(1); // the "exit" handler cleans up
}
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(1));

// Starts the binary with a config (crates/botlane-devserver/README.md): port 0
// is a free port, and it prints `realtime: <url>` and `rest: <url> (…)`.
async function startDevserver(binary, config) {
  tmp = mkdtempSync(join(tmpdir(), "outsider-bot-"));
  writeFileSync(join(tmp, "devserver.json"), JSON.stringify(config));
  child = spawn(binary, ["--config", join(tmp, "devserver.json")], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (b) => { stderr = (stderr + b).slice(-4000); });
  return new Promise((resolve, reject) => {
    let out = "";
    child.on("error", (e) => reject(new Mismatch(`cannot start ${binary}: ${e.message}`)));
    child.on("exit", (code) => reject(new Mismatch(`the devserver exited (${code}) before printing its URLs:\n${stderr}`)));
    child.stdout.on("data", (b) => {
      out += b;
      const ws = /^realtime: (ws:\S+)$/m.exec(out), rest = /^rest: (http:\S+) /m.exec(out);
      if (ws && rest) resolve({ wsUrl: ws[1], restUrl: rest[1] });
    });
  });
}

async function main() {
  const binary = process.argv[2];
  expect(binary, "usage: node docs/vectors/outsider-bot.mjs path/to/botlane-devserver");
  setTimeout(() => die(new Mismatch(`the run took over ${DEADLINE_MS} ms`)), DEADLINE_MS).unref();
  checkVectors();

  const menu = canonicalMenu(COMMANDS), menuJson = JSON.stringify(menu);
  same(sha256hex(menuJson), "7b60152b0d86569bc01f0cdb694a8341d11016d27309f62a1fc4b5512c4694e1", "the worked example's menu hash");

  const botToken = randomBytes(16).toString("hex"), aliceToken = randomBytes(16).toString("hex");
  const { wsUrl, restUrl } = await startDevserver(binary, {
    listen: "127.0.0.1:0", rest_listen: "127.0.0.1:0", bot_rest_credentials: true,
    bots: [{ name: "dicebot", token: botToken }], users: [{ name: "alice", token: aliceToken }],
    servers: [{ name: "lobby", channels: [{ name: "general", members: ["dicebot", "alice"] }], files: [{ name: "notes.txt", content: "hello, world" }] }],
  });
  step(`devserver at ${wsUrl} and ${restUrl}`);

  // The bot logs in (protocol.md "10 login, 11 ready") and publishes its menu (op 20).
  const bot = new Conn("bot", wsUrl);
  await bot.ready();
  const botMe = await identity();
  const botReady = await bot.login(botToken, botMe, "bot");
  const botId = botReady.user_id;
  const general = botReady.channels.find((c) => c.name === "general");
  expect(general, `bot: ready lists no channel "general": ${JSON.stringify(botReady.channels)}`);
  await bot.ok(20, { menu }, "menu publish");
  step(`bot ${botId} logged in, menu of ${menuJson.length} bytes published (sha256 ${sha256hex(menuJson).slice(0, 12)}…)`);
  const keys = new Map(), lanes = [];
  runBot(bot, botMe, botId, new Set(botReady.channels.map((c) => c.id)), keys, lanes);

  // The human: a second login. She creates the channel key and wraps it to
  // every member but herself (ops 61, 52, 51; the bot gets op 50).
  const alice = new Conn("alice", wsUrl);
  await alice.ready();
  const aliceReady = await alice.login(aliceToken, await identity(), "user");
  const aliceId = aliceReady.user_id;
  const members = (await alice.ok(61, { channel_id: general.id }, "members")).members;
  same([...members].sort(), [botId, aliceId].sort(), "the members of general");
  const fetched = await alice.ok(52, { user_id: botId }, "public key fetch");
  same(fetched.public_key, b64(botMe.publicRaw), "the bot's public key as the service holds it");
  const channelKey = crypto.getRandomValues(new Uint8Array(32));
  await alice.ok(51, { channel_id: general.id, to: botId, wrapped: await wrapChannelKey(channelKey, unb64(fetched.public_key), general.id) }, "key share");
  const deadline = Date.now() + STEP_MS;
  while (!keys.has(general.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  same(b64(keys.get(general.id) ?? []), b64(channelKey), "the channel key the bot unwrapped");
  step("channel key shared and unwrapped");

  // One invocation, then the bot's true reply (op 32) and alice's notification (op 33).
  async function invoke(lane, line, sidecar, expected) {
    const d = { channel_id: general.id, content: await seal(channelKey, line, general.id) };
    if (sidecar) d.command = await seal(channelKey, JSON.stringify(sidecar), general.id);
    const asked = (await alice.ok(30, d, `the ${lane} invocation`)).message_id;
    const reply = await alice.push(32, "the bot's reply", (x) => x.message.author_id === botId && x.message.reply_to === asked);
    same(await open(channelKey, reply.message.content, general.id), expected, `the bot's reply on the ${lane} lane`);
    same(lanes.filter((l) => l !== "own").at(-1), lane, "the lane the bot took");
    const note = await alice.push(33, "reply notification", (x) => x.message_id === reply.message.id);
    same([note.kind, note.channel_id, note.from], ["reply", general.id, botId], "the reply notification");
    step(`${lane} lane: ${JSON.stringify(line)} answered ${JSON.stringify(expected)}`);
    return reply.message;
  }
  // First a sidecar for another bot: dropped, with no text fallback (its
  // line, "/ping", must stay unanswered; the bot reads messages in order).
  const elsewhere = (await alice.ok(30, { channel_id: general.id, content: await seal(channelKey, "/ping", general.id),
    command: await seal(channelKey, JSON.stringify({ v: 1, bot: "f".repeat(32), name: "ping", args: {} }), general.id) }, "an invocation of another bot")).message_id;
  await invoke("text", "/roll 2 6 fire damage", null, "rolled 2d6 for fire damage");
  expect(lanes.includes("dropped"), "the bot did not see the sidecar for another bot");
  expect(!alice.pushes.some((f) => f.op === 32 && f.d.message.reply_to === elsewhere), "the bot answered a sidecar addressed to another bot");
  const last = await invoke("structured", "/roll 3 20 initiative",
    { v: 1, bot: canonicalId(botId), name: "roll", args: { count: 3, label: "initiative", sides: 20 } }, "rolled 3d20 for initiative");

  // History (op 40), oldest first; a heartbeat (op 12).
  const history = (await bot.ok(40, { channel_id: general.id, limit: 2 }, "history")).messages;
  same(history.map((m) => m.id).at(-1), last.id, "the newest message in history");
  expect(history[0].command !== undefined, "history: the structured invocation lost its sidecar");
  await bot.ok(12, {}, "heartbeat");

  // The REST lane (rest.md): a human may not mint; the bot mints, exchanges, calls.
  same((await alice.request(638, {})).code, -1, "op 638 from a human");
  const minted = await bot.ok(638, {}, "REST mint");
  expect(/^[A-Za-z0-9_-]{43}$/.test(minted.secret), "the secret is not 43 characters of base64url");
  same(minted.bot_id, botId, "the minted bot_id");
  const exchange = await fetch(`${restUrl}/auth/verify-session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ secret: minted.secret, row_id: minted.row_id }) });
  const session = await exchange.json();
  same([exchange.status, typeof session.verification, typeof session.expires_in], [200, "string", "number"], "the exchange");
  const list = await fetch(`${restUrl}/api/files/list`, { headers: { verification: session.verification } });
  const { files } = await list.json();
  const notes = files?.find((f) => f.name === "notes.txt");
  same([list.status, notes?.size, notes?.room_id], [200, 12, general.server_id], "GET /api/files/list");
  const file = await fetch(`${restUrl}/api/files/${encodeURIComponent(notes.id)}/download?roomIds=${encodeURIComponent(general.server_id)}`, { headers: { verification: session.verification } });
  same([file.status, await file.text()], [200, "hello, world"], "the file's download");
  const reused = await fetch(`${restUrl}/auth/verify-session`, { method: "POST", body: JSON.stringify({ secret: minted.secret, row_id: minted.row_id }) });
  same(reused.status, 401, "a secret presented twice");
  step(`REST lane: minted, exchanged (expires_in ${session.expires_in}), listed and downloaded notes.txt`);

  // Shutdown (protocol.md "Bad input"): on SIGINT (the README's Ctrl-C) the
  // service closes every connection with 1001 and exits 0.
  alice.ws.close(1000);
  const botClosed = new Promise((resolve) => { bot.ws.onclose = (e) => resolve([e.code, e.reason]); });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  child.kill("SIGINT");
  same(await botClosed, [1001, "service shutting down"], "the bot's close when the service shuts down");
  same(await exited, 0, "the devserver's exit status after SIGINT");
  step("ok");
}

main().then(() => process.exit(0), die);
