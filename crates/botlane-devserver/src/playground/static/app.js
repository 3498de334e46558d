// The botlane playground: a human member of one channel, in the browser.
//
// It speaks the realtime wire of docs/protocol.md over the same-origin `/ws`
// and does all the cryptography of docs/crypto.md itself with WebCrypto:
// its X25519 identity, the channel key (created here, wrapped to every
// member), AES-256-GCM sealing of content and command sidecars. The service
// only ever relays ciphertext. The text formatter follows
// docs/text-grammar.md §5 so that a command picked here reads exactly as
// `botlane::format_invocation_text` would write it.
//
// No build step and nothing outside this origin: plain browser JavaScript.
"use strict";

(() => {
  // ---------------------------------------------------------------- bytes

  const subtle = globalThis.crypto.subtle;
  const enc = new TextEncoder();
  const utf8 = new TextDecoder("utf-8", { fatal: true });

  function b64(bytes) {
    let text = "";
    for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
    return btoa(text);
  }

  // Strict like botlane: only the one canonical spelling of every byte string.
  function unb64(text) {
    if (typeof text !== "string") throw new Error("base64 text expected");
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    if (b64(bytes) !== text) throw new Error("not canonical base64");
    return bytes;
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  const asBytes = (data) => (typeof data === "string" ? enc.encode(data) : new Uint8Array(data));

  // ------------------------------------------------ crypto (docs/crypto.md)

  // §1: base64(nonce(12) || ciphertext || tag(16)), AAD = UTF-8(channel id).
  async function seal(rawKey, plaintext, channelId, nonce = crypto.getRandomValues(new Uint8Array(12))) {
    const key = await subtle.importKey("raw", asBytes(rawKey), "AES-GCM", false, ["encrypt"]);
    const sealed = await subtle.encrypt(
      { name: "AES-GCM", iv: asBytes(nonce), additionalData: enc.encode(channelId) },
      key,
      asBytes(plaintext),
    );
    return b64(concat(asBytes(nonce), new Uint8Array(sealed)));
  }

  async function open(rawKey, wire, channelId) {
    const bytes = unb64(wire);
    if (bytes.length < 28) throw new Error("sealed payload too short");
    const key = await subtle.importKey("raw", asBytes(rawKey), "AES-GCM", false, ["decrypt"]);
    return new Uint8Array(
      await subtle.decrypt(
        { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: enc.encode(channelId) },
        key,
        bytes.slice(12),
      ),
    );
  }

  async function openText(rawKey, wire, channelId) {
    return utf8.decode(await open(rawKey, wire, channelId));
  }

  // §2: kek = HKDF-SHA256(ikm = X25519 secret, salt = E || R, info = "botlane channel key v1").
  async function wrappingKey(ownPrivate, theirPublicRaw, ephemeralRaw, recipientRaw, usage) {
    const theirPublic = await subtle.importKey("raw", theirPublicRaw, { name: "X25519" }, false, []);
    // deriveBits rejects an all-zero (low-order) result with an OperationError.
    const shared = await subtle.deriveBits({ name: "X25519", public: theirPublic }, ownPrivate, 256);
    const ikm = await subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    return subtle.deriveKey(
      {
        name: "HKDF",
        hash: "SHA-256",
        salt: concat(ephemeralRaw, recipientRaw),
        info: enc.encode("botlane channel key v1"),
      },
      ikm,
      { name: "AES-GCM", length: 256 },
      false,
      [usage],
    );
  }

  async function wrapChannelKey(rawChannelKey, recipientRaw, channelId, ephemeral = null,
                                nonce = crypto.getRandomValues(new Uint8Array(12))) {
    const recipient = asBytes(recipientRaw);
    if (recipient.length !== 32) throw new Error("a public key is 32 bytes");
    ephemeral ??= await subtle.generateKey({ name: "X25519" }, true, ["deriveBits"]);
    const ephemeralRaw = new Uint8Array(await subtle.exportKey("raw", ephemeral.publicKey));
    const kek = await wrappingKey(ephemeral.privateKey, recipient, ephemeralRaw, recipient, "encrypt");
    const sealed = await subtle.encrypt(
      { name: "AES-GCM", iv: asBytes(nonce), additionalData: enc.encode(channelId) },
      kek,
      asBytes(rawChannelKey),
    );
    return { ephemeral: b64(ephemeralRaw), ciphertext: b64(concat(asBytes(nonce), new Uint8Array(sealed))) };
  }

  async function unwrapChannelKey(identityPrivate, identityPublicRaw, wrapped, channelId) {
    const ephemeralRaw = unb64(wrapped.ephemeral);
    const bytes = unb64(wrapped.ciphertext);
    if (ephemeralRaw.length !== 32 || bytes.length !== 60) throw new Error("bad wrapped key");
    const kek = await wrappingKey(identityPrivate, ephemeralRaw, ephemeralRaw, asBytes(identityPublicRaw), "decrypt");
    return new Uint8Array(
      await subtle.decrypt(
        { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: enc.encode(channelId) },
        kek,
        bytes.slice(12),
      ),
    );
  }

  // ---------------------------------- the text grammar (text-grammar.md)

  const TYPE_NAMES = { 1: "string", 2: "integer", 3: "boolean", 4: "user", 5: "channel", 6: "role", 7: "number" };
  const MAX_SAFE_INTEGER = 9007199254740991;
  // Rust's char::is_whitespace is the Unicode White_Space property; JavaScript's
  // \s and String.prototype.trim differ from it (U+FEFF, U+0085).
  const WHITESPACE = /\p{White_Space}/u;
  const OPEN_QUOTES = ["\"", "\u201c", "\u00ab"];

  const asciiLower = (text) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const trimWhitespace = (text) => text.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, "");
  const startsWithOpenQuote = (text) => OPEN_QUOTES.includes(text.charAt(0));
  const isPlain = (text) => text !== "" && !WHITESPACE.test(text) && !startsWithOpenQuote(text);

  // Whether `text` starts with `NAME:` for a declared option NAME (ASCII case-insensitively).
  function startsWithNamedOption(options, text) {
    if (startsWithOpenQuote(text)) return false;
    const end = text.search(WHITESPACE);
    const run = end < 0 ? text : text.slice(0, end);
    const colon = run.indexOf(":");
    if (colon < 0) return false;
    const name = asciiLower(run.slice(0, colon));
    return options.some((option) => asciiLower(option.name) === name);
  }

  // §4: ^[+-]?[0-9]+$ within ±(2^53 − 1).
  function parseInteger(text) {
    if (!/^[+-]?[0-9]+$/.test(text)) return null;
    const value = Number(text);
    return Math.abs(value) <= MAX_SAFE_INTEGER ? value : null;
  }

  // §4: a finite decimal literal.
  function parseNumber(text) {
    if (!/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(text)) return null;
    const value = Number(text);
    return Number.isFinite(value) ? value : null;
  }

  function parseBoolean(text) {
    const lower = asciiLower(text);
    if (["true", "yes", "1"].includes(lower)) return true;
    if (["false", "no", "0"].includes(lower)) return false;
    return null;
  }

  // The coercion table of §4 for one piece of text; null when it does not fit.
  function coerceText(type, text) {
    switch (type) {
      case 1: return text;
      case 4: case 5: case 6: return text === "" ? null : text;
      case 2: return parseInteger(text);
      case 7: return parseNumber(text);
      case 3: return parseBoolean(text);
      default: return null;
    }
  }

  // §5.3: the shortest digits that parse back to the same float, written
  // positionally or in exponent form, whichever is shorter (as Rust's
  // `{}` and `{:e}` would write them).
  function formatNumber(n) {
    const sign = n < 0 || Object.is(n, -0) ? "-" : "";
    const [mantissa, exponentText] = Math.abs(n).toExponential().split("e");
    const digits = mantissa.replace(".", "");
    const exponent = Number(exponentText);
    let plain;
    if (exponent >= digits.length - 1) {
      plain = digits + "0".repeat(exponent - digits.length + 1);
    } else if (exponent >= 0) {
      plain = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
    } else {
      plain = `0.${"0".repeat(-exponent - 1)}${digits}`;
    }
    const scientific = `${mantissa}e${exponent}`;
    return sign + (scientific.length < plain.length ? scientific : plain);
  }

  class FormatError extends Error {
    constructor(kind, option, message) {
      super(message);
      this.name = "FormatError";
      this.kind = kind;
      this.option = option;
    }
  }

  // The text of `value` for an option of `type`, or null when the value is not of that type.
  function valueText(type, value) {
    switch (type) {
      case 1: return typeof value === "string" ? value : null;
      case 4: case 5: case 6: return typeof value === "string" && value !== "" ? value : null;
      case 2: return Number.isSafeInteger(value) ? String(value) : null;
      case 7: return typeof value === "number" && Number.isFinite(value) ? formatNumber(value) : null;
      case 3: return typeof value === "boolean" ? String(value) : null;
      default: return null;
    }
  }

  function inChoices(option, value) {
    if (!option.choices || option.choices.length === 0) return true;
    return option.choices.some((choice) => {
      if (typeof value === "string") return value === choice;
      if (typeof value === "number") {
        const parsed = option.type === 2 ? parseInteger(choice) : parseNumber(choice);
        return parsed !== null && parsed === value;
      }
      return false;
    });
  }

  function quote(text) {
    return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }

  // §5: the readable line for `command` (as made by commandFromCanonical)
  // with `args` (option name → string, number or boolean).
  function formatInvocationText(command, args, prefix = "/") {
    const options = command.options;
    for (const key of Object.keys(args)) {
      if (!options.some((option) => option.name === key)) {
        throw new FormatError("unknown-option", key, `/${command.name} has no option ${key}`);
      }
    }
    let line = prefix + command.name;
    let positional = true;
    options.forEach((option, index) => {
      if (!Object.prototype.hasOwnProperty.call(args, option.name)) {
        if (option.required) {
          throw new FormatError("missing-required", option.name, `${option.name} is required`);
        }
        positional = false;
        return;
      }
      const value = args[option.name];
      const text = valueText(option.type, value);
      if (text === null) {
        throw new FormatError("wrong-type", option.name,
          `${option.name} must be ${TYPE_NAMES[option.type] ?? "of a known type"}`);
      }
      if (!inChoices(option, value)) {
        throw new FormatError("not-in-choices", option.name,
          `${option.name} must be one of ${option.choices.join(", ")}`);
      }
      line += " ";
      let bare;
      if (positional) {
        const greedy = index + 1 === options.length && option.type === 1;
        const plain = greedy
          ? text !== "" && trimWhitespace(text) === text && !startsWithOpenQuote(text)
          : isPlain(text);
        bare = plain && !startsWithNamedOption(options, text);
      } else {
        line += `${option.name}:`;
        bare = isPlain(text);
      }
      line += bare ? text : quote(text);
    });
    return line;
  }

  // A command of the canonical menu: [name, description, [[name, typeCode, description, required, choices]]].
  function commandFromCanonical([name, description, options]) {
    return {
      name,
      description,
      options: options.map(([optionName, type, optionDescription, required, choices]) => ({
        name: optionName,
        type,
        description: optionDescription,
        required,
        choices,
      })),
    };
  }

  const canonicalBotId = (id) => asciiLower(id.replaceAll("-", ""));

  // The structured sidecar: {"v":1,"bot":<undashed lower-case id>,"name":…,"args":{…}}.
  function encodeCommandData(botId, name, args) {
    const sorted = {};
    for (const key of Object.keys(args).sort()) sorted[key] = args[key];
    return JSON.stringify({ v: 1, bot: canonicalBotId(botId), name: asciiLower(name), args: sorted });
  }

  // ----------------------------------------- the wire (docs/protocol.md)

  const OP = {
    login: 10, ready: 11, send: 30, messageCreate: 32, notification: 33, history: 40,
    channelKey: 50, keyShare: 51, publicKey: 52, members: 61,
  };
  const PUSHES = new Set([OP.ready, OP.messageCreate, OP.notification, OP.channelKey]);
  const REQUEST_TIMEOUT_MS = 10000;
  const CODE_NAMES = {
    "-1": "not a bot", "-2": "server error", "-3": "no permission", "-4": "unknown channel",
    "-5": "bad request", "-6": "unauthorized", "-7": "feature off", "-8": "too large", "-9": "rate limited",
  };

  // One WebSocket; replies are matched to requests by opcode, first in first out.
  class Wire {
    constructor(url, onPush, onClose) {
      this.url = url;
      this.onPush = onPush;
      this.onClose = onClose;
      this.pending = new Map();
    }

    connect() {
      return new Promise((resolve, reject) => {
        const socket = new WebSocket(this.url);
        this.socket = socket;
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new Error(`cannot open ${this.url}`));
        socket.onmessage = (event) => this.receive(event.data);
        socket.onclose = (event) => {
          for (const queue of this.pending.values()) {
            for (const slot of queue) if (!slot.done) slot.reject(new Error("the connection closed"));
          }
          this.pending.clear();
          this.onClose(event);
        };
      });
    }

    receive(text) {
      let frame;
      try {
        frame = JSON.parse(text);
      } catch {
        return;
      }
      if (typeof frame !== "object" || frame === null || typeof frame.op !== "number") return;
      if (PUSHES.has(frame.op)) {
        this.onPush(frame.op, frame.d);
        return;
      }
      const slot = this.pending.get(frame.op)?.shift();
      if (slot && !slot.done) {
        slot.done = true;
        clearTimeout(slot.timer);
        slot.resolve(frame.d);
      }
    }

    request(op, d) {
      return new Promise((resolve, reject) => {
        if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
          reject(new Error("not connected"));
          return;
        }
        const slot = { resolve, reject, done: false };
        // A late reply must still consume this slot, so a timed-out request
        // keeps its place in the queue.
        slot.timer = setTimeout(() => {
          slot.done = true;
          reject(new Error(`no reply to opcode ${op} within ${REQUEST_TIMEOUT_MS / 1000} s`));
        }, REQUEST_TIMEOUT_MS);
        if (!this.pending.has(op)) this.pending.set(op, []);
        this.pending.get(op).push(slot);
        this.socket.send(JSON.stringify({ op, d }));
      });
    }
  }

  function refusal(what, reply) {
    const name = CODE_NAMES[String(reply.code)] ?? "refused";
    const reason = reply.reason ? `: ${reply.reason}` : "";
    return new Error(`${what} refused (${reply.code} ${name})${reason}`);
  }

  // ------------------------------------------------------------- the page

  const $ = (id) => document.getElementById(id);

  const app = {
    wire: null,
    me: null,
    channelId: null,
    channelName: null,
    key: null,
    identity: null,
    identityPublic: null,
    sharedWith: new Map(), // member id → the public key (base64) our key was wrapped to
    bots: [],
    menusText: "",
    fieldsShape: "",
    names: new Map(),
    messages: new Map(), // message id → { author, content }
    pushes: Promise.resolve(),
    readyWaiter: null,
  };

  const storageKey = (channelId) => `botlane-playground-key:${channelId}`;

  function setStatus(text, state) {
    $("status").textContent = text;
    if (state) document.body.dataset.state = state;
  }

  function element(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "className") node.className = value;
      else if (name in node && typeof value !== "string") node[name] = value;
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function scrollToEnd() {
    const list = $("messages");
    list.scrollTop = list.scrollHeight;
  }

  function notice(kind, text) {
    $("messages").append(element("li", { className: `notice ${kind}`, role: kind === "info" ? null : "alert" }, text));
    scrollToEnd();
  }

  function nameOf(id) {
    return app.names.get(id) ?? `user ${id.slice(0, 8)}`;
  }

  function isBot(id) {
    return app.bots.some((bot) => bot.id === id);
  }

  // Keeps the key sealed messages are opened with; persisted so a reload
  // of the page still reads the channel's history.
  function useKey(raw) {
    app.key = raw;
    try {
      localStorage.setItem(storageKey(app.channelId), b64(raw));
    } catch {
      // Storage may be disabled; the key then lives as long as the page.
    }
  }

  async function onPush(op, d) {
    if (op === OP.ready) {
      app.readyWaiter?.(d);
    } else if (op === OP.channelKey) {
      if (d.channel_id !== app.channelId) return;
      try {
        const key = await unwrapChannelKey(app.identity.privateKey, app.identityPublic, d.wrapped, d.channel_id);
        if (key.length === 32) useKey(key);
      } catch {
        notice("failure", `${nameOf(d.from)} shared a channel key that does not unwrap; ignored`);
      }
    } else if (op === OP.messageCreate) {
      if (d.message.channel_id === app.channelId) await showMessage(d.message);
    }
  }

  async function showMessage(message) {
    // The history and the pushes around it may both hold a message.
    if (app.messages.has(message.id)) return;
    let content = null;
    let sidecar = null;
    if (app.key) {
      try {
        content = await openText(app.key, message.content, message.channel_id);
        if (message.command) {
          sidecar = JSON.parse(await openText(app.key, message.command, message.channel_id));
        }
      } catch {
        content = null;
      }
    }
    app.messages.set(message.id, { author: message.author_id, content });
    const mine = message.author_id === app.me;
    const kind = mine ? "from-me" : isBot(message.author_id) ? "from-bot" : "from-other";
    const addressed = sidecar && app.bots.find((bot) => canonicalBotId(bot.id) === sidecar.bot);
    const quoted = message.reply_to ? app.messages.get(message.reply_to) : null;
    const item = element(
      "li",
      {
        className: `message ${kind}${content === null ? " sealed" : ""}`,
        "data-id": message.id,
        "data-author": nameOf(message.author_id),
        "data-reply-to": message.reply_to,
        "data-lane": sidecar ? "structured" : "text",
      },
      element("span", { className: "author" }, mine ? "you" : nameOf(message.author_id)),
      element("span", { className: "meta" }, new Date(message.created_at).toLocaleTimeString()),
      sidecar
        ? element("span", { className: "lane", title: "sealed command sidecar" },
          `structured → ${addressed ? addressed.name : sidecar.bot}`)
        : null,
      message.reply_to
        ? element("div", { className: "quote" },
          `↪ ${quoted ? `${quoted.author === app.me ? "you" : nameOf(quoted.author)}: ${quoted.content ?? "🔒"}` : "an earlier message"}`)
        : null,
      element("div", { className: "body" },
        content ?? "🔒 sealed with a channel key this page does not hold"),
    );
    $("messages").append(item);
    scrollToEnd();
  }

  // Wraps the channel key to every member that has a public key we have
  // not wrapped it to yet (a bot that restarted with a fresh keystore has a
  // new one), exactly like TestUser::open_channel.
  async function shareKey() {
    const reply = await app.wire.request(OP.members, { channel_id: app.channelId });
    if (reply.code !== 0) throw refusal("listing the channel's members", reply);
    for (const member of reply.members) {
      if (member === app.me) continue;
      const found = await app.wire.request(OP.publicKey, { user_id: member });
      if (found.code !== 0 || !found.public_key) continue;
      if (app.sharedWith.get(member) === found.public_key) continue;
      const wrapped = await wrapChannelKey(app.key, unb64(found.public_key), app.channelId);
      const shared = await app.wire.request(OP.keyShare, { channel_id: app.channelId, to: member, wrapped });
      if (shared.code !== 0) throw refusal(`sharing the channel key with ${nameOf(member)}`, shared);
      app.sharedWith.set(member, found.public_key);
    }
  }

  async function openChannel() {
    // Keys pushed right after `ready` (shared while we were away) are
    // handled before the reply to this request, which comes after them.
    const members = await app.wire.request(OP.members, { channel_id: app.channelId });
    if (members.code !== 0) throw refusal("opening the channel", members);
    await app.pushes;
    if (!app.key) {
      let stored = null;
      try {
        stored = localStorage.getItem(storageKey(app.channelId));
      } catch {
        stored = null;
      }
      let raw = null;
      try {
        raw = stored ? unb64(stored) : null;
      } catch {
        raw = null;
      }
      useKey(raw && raw.length === 32 ? raw : crypto.getRandomValues(new Uint8Array(32)));
    }
    const history = await app.wire.request(OP.history, { channel_id: app.channelId, limit: 50 });
    if (history.code !== 0) throw refusal("fetching the history", history);
    for (const message of history.messages) await showMessage(message);
    await shareKey();
  }

  async function send(line, sidecar) {
    await shareKey();
    const request = {
      channel_id: app.channelId,
      content: await seal(app.key, line, app.channelId),
    };
    if (sidecar !== undefined) request.command = await seal(app.key, sidecar, app.channelId);
    const reply = await app.wire.request(OP.send, request);
    if (reply.code !== 0) {
      // The service denied the send (sendRejected): say so where the message would have been.
      const name = CODE_NAMES[String(reply.code)] ?? "refused";
      const reason = reply.reason && reply.reason !== name ? `: ${reply.reason}` : "";
      notice("denial", `Not sent, the service refused it: ${name} (${reply.code})${reason}`);
      return false;
    }
    return true;
  }

  // ------------------------------------------------------ command picker

  function selectedBot() {
    return app.bots.find((bot) => bot.id === $("pick-bot").value);
  }

  function selectedCommand() {
    const bot = selectedBot();
    return bot?.commands.find((command) => command.name === $("pick-command").value);
  }

  function fieldFor(option) {
    const id = `option-${option.name}`;
    const title = [
      element("span", { className: "field-name" }, option.name),
      option.required ? element("span", { className: "required-mark", title: "required" }, "*") : null,
      element("span", { className: "field-type" }, `${TYPE_NAMES[option.type] ?? "?"} — ${option.description}`),
    ];
    const common = { id, "data-option": option.name, required: option.required, "aria-required": String(option.required) };
    let control;
    if (option.type === 3 && option.required) {
      control = element("input", { ...common, type: "checkbox" });
      return element("label", { className: "checkbox", for: id }, control, ...title);
    }
    if (option.choices.length > 0 || option.type === 3) {
      const choices = option.type === 3 ? ["true", "false"] : option.choices;
      control = element("select", common,
        element("option", { value: "" }, option.required ? "choose…" : "(not set)"),
        ...choices.map((choice) => element("option", { value: choice }, choice)));
    } else if (option.type === 2 || option.type === 7) {
      control = element("input", { ...common, type: "number", step: option.type === 2 ? "1" : "any", inputmode: "decimal" });
    } else {
      control = element("input", { ...common, type: "text" });
    }
    return element("label", { for: id }, element("span", {}, ...title), control);
  }

  // The arguments the fields hold, coerced by the §4 table; throws on a bad or missing value.
  function collectArgs(command) {
    const args = {};
    for (const option of command.options) {
      const control = $("fields").querySelector(`[data-option="${CSS.escape(option.name)}"]`);
      if (control.type === "checkbox") {
        args[option.name] = control.checked;
        continue;
      }
      if (control.validity?.badInput) throw new FormatError("wrong-type", option.name, `${option.name} must be ${TYPE_NAMES[option.type]}`);
      const text = control.value;
      if (text === "") {
        if (option.required) throw new FormatError("missing-required", option.name, `${option.name} is required`);
        continue;
      }
      const value = coerceText(option.type, text);
      if (value === null) throw new FormatError("wrong-type", option.name, `${option.name} must be ${TYPE_NAMES[option.type]}`);
      args[option.name] = value;
    }
    return args;
  }

  function updatePreview() {
    const command = selectedCommand();
    const preview = $("preview");
    if (!command) {
      preview.textContent = "";
      return;
    }
    try {
      preview.textContent = formatInvocationText(command, collectArgs(command));
      preview.classList.remove("invalid");
    } catch (error) {
      preview.textContent = `(${error.message})`;
      preview.classList.add("invalid");
    }
  }

  function renderFields() {
    const command = selectedCommand();
    // A menu poll that changed something else keeps what the person typed.
    const shape = JSON.stringify([$("pick-bot").value, command ?? null]);
    if (shape === app.fieldsShape) {
      updatePreview();
      return;
    }
    app.fieldsShape = shape;
    $("command-description").textContent = command ? command.description : "";
    $("fields").replaceChildren(...(command ? command.options.map(fieldFor) : []));
    $("picker-error").textContent = "";
    updatePreview();
  }

  function renderCommands() {
    const bot = selectedBot();
    const previous = $("pick-command").value;
    const commands = bot ? bot.commands : [];
    $("pick-command").replaceChildren(...commands.map((command) =>
      element("option", { value: command.name }, `/${command.name}`)));
    if (commands.some((command) => command.name === previous)) $("pick-command").value = previous;
    renderFields();
  }

  function renderPicker() {
    const usable = app.bots.filter((bot) => bot.commands.length > 0);
    $("no-bots").hidden = usable.length > 0;
    $("picker").hidden = usable.length === 0;
    const previous = $("pick-bot").value;
    $("pick-bot").replaceChildren(...usable.map((bot) =>
      element("option", { value: bot.id }, bot.online ? bot.name : `${bot.name} (offline)`)));
    if (usable.some((bot) => bot.id === previous)) $("pick-bot").value = previous;
    renderCommands();
  }

  async function refreshMenus() {
    const response = await fetch("/playground/menus", { cache: "no-store" });
    if (!response.ok) throw new Error(`/playground/menus answered ${response.status}`);
    const text = await response.text();
    if (text === app.menusText) return;
    app.menusText = text;
    app.bots = JSON.parse(text).bots.map((bot) => ({
      id: bot.id,
      name: bot.name,
      online: bot.online,
      commands: (bot.menu ?? []).map(commandFromCanonical),
    }));
    for (const bot of app.bots) app.names.set(bot.id, bot.name);
    renderPicker();
  }

  // ------------------------------------------------------------ start-up

  function reportFailure(error) {
    const message = error?.message ?? String(error);
    notice("failure", message);
    if (document.body.dataset.state !== "ready") setStatus(`failed: ${message}`, "error");
  }

  async function boot() {
    const response = await fetch("/playground/session", { cache: "no-store" });
    if (!response.ok) throw new Error(`/playground/session answered ${response.status}`);
    const session = await response.json();
    app.me = session.user_id;
    app.channelId = session.channel_id;
    app.channelName = session.channel_name;
    app.names.set(app.me, session.name);

    app.identity = await subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
    app.identityPublic = new Uint8Array(await subtle.exportKey("raw", app.identity.publicKey));

    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    app.wire = new Wire(`${scheme}//${location.host}/ws`, (op, d) => {
      // Pushes are handled one at a time, in arrival order.
      app.pushes = app.pushes.then(() => onPush(op, d)).catch(reportFailure);
    }, (event) => {
      setStatus(`disconnected (${event.code || "no close frame"}): reload the page to reconnect`, "error");
      $("line").disabled = true;
      $("send-line").disabled = true;
      $("run-command").disabled = true;
    });
    await app.wire.connect();
    const ready = new Promise((resolve) => { app.readyWaiter = resolve; });
    const login = await app.wire.request(OP.login, {
      token: session.token,
      public_key: b64(app.identityPublic),
      client: "botlane-playground/1",
    });
    if (login.code !== 0) throw refusal("login", login);
    await ready;
    await refreshMenus();
    await openChannel();

    setInterval(() => refreshMenus().catch(reportFailure), 2000);
    $("line").disabled = false;
    $("send-line").disabled = false;
    setStatus(`you are “${session.name}” in #${app.channelName} · end-to-end encrypted in this page`, "ready");
    $("line").focus();
  }

  function wireUpForms() {
    $("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      const line = $("line").value;
      if (trimWhitespace(line) === "") return;
      send(line).then((sent) => {
        if (sent) $("line").value = "";
      }).catch(reportFailure);
    });
    $("line").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $("composer").requestSubmit();
      }
    });
    $("pick-bot").addEventListener("change", renderCommands);
    $("pick-command").addEventListener("change", renderFields);
    $("fields").addEventListener("input", updatePreview);
    $("fields").addEventListener("change", updatePreview);
    $("picker").addEventListener("submit", (event) => {
      event.preventDefault();
      const bot = selectedBot();
      const command = selectedCommand();
      if (!bot || !command) return;
      let line;
      let sidecar;
      try {
        const args = collectArgs(command);
        line = formatInvocationText(command, args);
        sidecar = encodeCommandData(bot.id, command.name, args);
        $("picker-error").textContent = "";
      } catch (error) {
        $("picker-error").textContent = error.message;
        return;
      }
      send(line, sidecar).catch(reportFailure);
    });
  }

  // For the browser tests, which compare these with the Rust implementation.
  window.playground = Object.freeze({
    b64, unb64, seal, open, openText, wrapChannelKey, unwrapChannelKey,
    formatInvocationText, formatNumber, commandFromCanonical, encodeCommandData,
    canonicalBotId, parseInteger, parseNumber, parseBoolean, coerceText, FormatError,
  });

  window.addEventListener("unhandledrejection", (event) => reportFailure(event.reason));
  document.addEventListener("DOMContentLoaded", () => {
    wireUpForms();
    boot().catch(reportFailure);
  });
})();
