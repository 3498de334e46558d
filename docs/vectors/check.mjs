// Checks the vectors of docs/vectors/ without any Rust: recomputes, from the
// inputs stored in each file, every computed value of menus.json (canonical
// bytes and SHA-256) and crypto.json (sealed payloads, wrapped keys with
// their intermediate values, and the kind of every refusal), with node's
// WebCrypto and the reference code of lib.mjs; and checks that every
// placeholder (`<name>`) a transcript's events use is explained under its
// `placeholders`.
//
//     node docs/vectors/check.mjs
//
// node >= 20, no packages. Exits with status 1 and one line per mismatch.
// scripts/test runs it when node is installed.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { CryptoFailure, hex, menuBytesAndHash, open, seal, unhex, unwrapChannelKey, wrapChannelKey, x25519Public } from "./lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const load = (name) => JSON.parse(readFileSync(join(here, name), "utf8"));
const problems = [];
let checked = 0;

function expectEqual(what, actual, expected) {
  checked += 1;
  const same = typeof expected === "object" ? JSON.stringify(actual) === JSON.stringify(expected) : actual === expected;
  if (!same) problems.push(`${what}: computed ${JSON.stringify(actual)}, file has ${JSON.stringify(expected)}`);
}

async function failureOf(run) {
  try {
    await run();
    return "none (it succeeded)";
  } catch (e) {
    if (e instanceof CryptoFailure) return e.kind;
    throw e;
  }
}

const menus = load("menus.json");
for (const c of menus.cases) {
  const { json, sha256 } = menuBytesAndHash(c.declarations);
  expectEqual(`menus.json "${c.name}" json`, json, c.json);
  expectEqual(`menus.json "${c.name}" sha256`, sha256, c.sha256);
}

const crypto = load("crypto.json");
for (const c of crypto.seal) {
  const key = unhex(c.key);
  expectEqual(`crypto.json seal "${c.name}" wire`, await seal(key, unhex(c.plaintext), c.aad, unhex(c.nonce)), c.wire);
  expectEqual(`crypto.json seal "${c.name}" opens`, hex(await open(key, c.wire, c.aad)), c.plaintext);
}
for (const f of crypto.open_failures) {
  expectEqual(`crypto.json open_failures "${f.name}"`, await failureOf(() => open(unhex(f.key), f.wire, f.aad)), f.error);
}
for (const c of crypto.wrap) {
  const recipientPublic = await x25519Public(unhex(c.recipient_secret));
  expectEqual(`crypto.json wrap "${c.name}" recipient_public`, hex(recipientPublic), c.recipient_public);
  const w = await wrapChannelKey(unhex(c.channel_key), recipientPublic, c.channel_id, unhex(c.ephemeral_secret), unhex(c.nonce));
  expectEqual(`crypto.json wrap "${c.name}" ephemeral_public`, hex(w.ephemeralPublic), c.ephemeral_public);
  expectEqual(`crypto.json wrap "${c.name}" shared`, hex(w.shared), c.shared);
  expectEqual(`crypto.json wrap "${c.name}" salt`, hex(w.salt), c.salt);
  expectEqual(`crypto.json wrap "${c.name}" kek`, hex(w.kek), c.kek);
  expectEqual(`crypto.json wrap "${c.name}" wrapped`, w.wrapped, c.wrapped);
  const unwrapped = await unwrapChannelKey(unhex(c.recipient_secret), c.wrapped, c.channel_id);
  expectEqual(`crypto.json wrap "${c.name}" unwraps`, hex(unwrapped), c.channel_key);
}
for (const f of crypto.unwrap_failures) {
  const error = await failureOf(() => unwrapChannelKey(unhex(f.recipient_secret), f.wrapped, f.channel_id));
  expectEqual(`crypto.json unwrap_failures "${f.name}"`, error, f.error);
}

// Every `<name>` in a transcript's events, anywhere in a string (a header
// such as `Bearer <admin-token>` too), is listed under `placeholders`.
const transcripts = readdirSync(join(here, "transcripts")).filter((name) => name.endsWith(".json")).sort();
for (const name of transcripts) {
  const file = load(join("transcripts", name));
  const used = new Set();
  const walk = (value) => {
    if (typeof value === "string") {
      for (const match of value.matchAll(/<[a-z][a-z0-9-]*>/g)) used.add(match[0]);
    } else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) {
        walk(key);
        walk(inner);
      }
    }
  };
  walk(file.events);
  for (const placeholder of [...used].sort()) {
    expectEqual(`transcripts/${name} lists ${placeholder} under placeholders`, placeholder in file.placeholders, true);
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`docs/vectors/check.mjs: ${problems.length} of ${checked} checks failed`);
  process.exit(1);
}
console.log(`docs/vectors/check.mjs: ${checked} checks passed (menus.json, crypto.json, the transcripts' placeholders)`);
