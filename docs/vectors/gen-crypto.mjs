// Generates docs/vectors/crypto.json: the sealed-payload and wrapped-key
// formats of docs/crypto.md with fixed keys and nonces, every intermediate
// value, and the inputs each implementation must refuse (and how).
//
//     node docs/vectors/gen-crypto.mjs           rewrite crypto.json
//     node docs/vectors/gen-crypto.mjs --check   fail if crypto.json differs
//
// node >= 20, no packages: WebCrypto (the browser API) does the work, through
// the reference code of lib.mjs. botlane's Rust tests read the file
// (crates/botlane/tests/pure/vectors.rs opens and unwraps every case through the
// public API; the unit tests of crates/botlane-proto/src/crypto/mod.rs seal and wrap
// with the fixed nonces); check.mjs recomputes it without any Rust.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { CryptoFailure, b64, hex, open, seal, unb64, unwrapChannelKey, wrapChannelKey, x25519Public } from "./lib.mjs";

const counting = (start, n) => Uint8Array.from({ length: n }, (_, i) => (start + i) & 0xff);
const utf8 = (s) => new TextEncoder().encode(s);

// Low-order X25519 points (RFC 7748 §5 and Bernstein's list): a peer that
// presents one forces an all-zero shared secret.
const ZERO_POINT = new Uint8Array(32);
const ORDER_8_POINT = Uint8Array.from(Buffer.from("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", "hex"));

const sealInputs = [
  {
    name: "docs/crypto.md test vector 1",
    key: counting(0x00, 32),
    nonce: counting(0x10, 12),
    aad: "channel-42",
    plaintext: utf8("botlane test vector: hello, channel!"),
  },
  { name: "empty plaintext: 28 bytes, nonce and tag only", key: counting(0x00, 32), nonce: counting(0x10, 12), aad: "channel-42", plaintext: new Uint8Array(0) },
  { name: "empty channel id as associated data", key: counting(0x00, 32), nonce: counting(0x10, 12), aad: "", plaintext: utf8("no channel") },
  {
    name: "non-ASCII channel id: the AAD is its UTF-8 bytes, as received",
    key: counting(0x80, 32),
    nonce: counting(0xf0, 12),
    aad: "canal-é-🎲",
    plaintext: utf8("dés: ⚀⚁⚂ — 🎲"),
  },
  {
    name: "a command sidecar plaintext",
    key: counting(0x00, 32),
    nonce: counting(0x20, 12),
    aad: "channel-42",
    plaintext: utf8('{"v":1,"bot":"3f2504e04f8911d39a0c0305e82c3301","name":"roll","args":{"count":2}}'),
  },
  { name: "1000 bytes, many AES blocks and a partial last one", key: counting(0x33, 32), nonce: counting(0x44, 12), aad: "c", plaintext: counting(0x00, 1000) },
];

const wrapInputs = [
  {
    name: "docs/crypto.md test vector 2 (RFC 7748 §6.1 keys: Alice is the ephemeral sender, Bob the bot)",
    ephemeralSecret: Buffer.from("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", "hex"),
    recipientSecret: Buffer.from("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb", "hex"),
    channelKey: counting(0x20, 32),
    nonce: counting(0xc0, 12),
    channelId: "channel-42",
  },
  {
    name: "counting secrets, non-ASCII channel id",
    ephemeralSecret: counting(0x40, 32),
    recipientSecret: counting(0x60, 32),
    channelKey: counting(0xa0, 32),
    nonce: counting(0xd0, 12),
    channelId: "canal-é-🎲",
  },
];

async function failureOf(run) {
  try {
    await run();
  } catch (e) {
    if (e instanceof CryptoFailure) return e.kind;
    throw e;
  }
  throw new Error("expected a failure, but it succeeded");
}

// Edits the decoded bytes of a base64 text.
const edited = (wire, edit) => {
  const bytes = Uint8Array.from(unb64(wire));
  return b64(edit(bytes) ?? bytes);
};

async function main() {
  const sealCases = [];
  for (const c of sealInputs) {
    const wire = await seal(c.key, c.plaintext, c.aad, c.nonce);
    sealCases.push({ name: c.name, key: hex(c.key), nonce: hex(c.nonce), aad: c.aad, plaintext: hex(c.plaintext), wire });
  }
  const v1 = sealCases[0];
  const openFailureInputs = [
    { name: "another channel id", aad: "channel-43", wire: v1.wire },
    { name: "channel id differing only in case (no case folding)", aad: "Channel-42", wire: v1.wire },
    { name: "channel id with a trailing space (no trimming)", aad: "channel-42 ", wire: v1.wire },
    { name: "another key", key: hex(counting(0x01, 32)), aad: "channel-42", wire: v1.wire },
    { name: "last tag byte flipped", aad: "channel-42", wire: edited(v1.wire, (b) => void (b[b.length - 1] ^= 1)) },
    { name: "first nonce byte flipped", aad: "channel-42", wire: edited(v1.wire, (b) => void (b[0] ^= 0x80)) },
    { name: "first ciphertext byte flipped", aad: "channel-42", wire: edited(v1.wire, (b) => void (b[12] ^= 1)) },
    { name: "tag removed, 48 bytes left", aad: "channel-42", wire: edited(v1.wire, (b) => b.slice(0, b.length - 16)) },
    { name: "exactly 28 bytes with a wrong tag", aad: "channel-42", wire: b64(new Uint8Array(28)) },
    { name: "27 bytes: shorter than nonce and tag", aad: "channel-42", wire: b64(new Uint8Array(27)) },
    { name: "3 bytes", aad: "channel-42", wire: "AAAA" },
    { name: "empty text: zero bytes", aad: "channel-42", wire: "" },
    { name: "not base64 at all", aad: "channel-42", wire: "not base64!" },
    { name: "padding removed", aad: "channel-42", wire: v1.wire.replace(/=+$/, "") },
    { name: "URL-safe alphabet", aad: "channel-42", wire: v1.wire.replaceAll("+", "-").replaceAll("/", "_") },
    { name: "a line break inside", aad: "channel-42", wire: `${v1.wire.slice(0, 44)}\n${v1.wire.slice(44)}` },
    { name: "leading space", aad: "channel-42", wire: ` ${v1.wire}` },
    { name: "non-zero trailing bits before the padding", aad: "channel-42", wire: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=" },
  ];
  const openFailures = [];
  for (const f of openFailureInputs) {
    const key = f.key ?? v1.key;
    const error = await failureOf(() => open(Buffer.from(key, "hex"), f.wire, f.aad));
    openFailures.push({ name: f.name, key, aad: f.aad, wire: f.wire, error });
  }

  const wrapCases = [];
  for (const c of wrapInputs) {
    const recipientPublic = await x25519Public(c.recipientSecret);
    const w = await wrapChannelKey(c.channelKey, recipientPublic, c.channelId, c.ephemeralSecret, c.nonce);
    wrapCases.push({
      name: c.name,
      ephemeral_secret: hex(c.ephemeralSecret),
      ephemeral_public: hex(w.ephemeralPublic),
      recipient_secret: hex(c.recipientSecret),
      recipient_public: hex(recipientPublic),
      channel_key: hex(c.channelKey),
      nonce: hex(c.nonce),
      channel_id: c.channelId,
      shared: hex(w.shared),
      salt: hex(w.salt),
      kek: hex(w.kek),
      wrapped: w.wrapped,
    });
  }
  const w1 = wrapCases[0];
  const w2 = wrapCases[1];
  const unwrapFailureInputs = [
    { name: "another channel id", channel_id: "channel-43" },
    { name: "another recipient (the sender's own secret)", recipient_secret: w1.ephemeral_secret },
    { name: "last tag byte flipped", wrapped: { ...w1.wrapped, ciphertext: edited(w1.wrapped.ciphertext, (b) => void (b[59] ^= 1)) } },
    { name: "ephemeral key of another wrap", wrapped: { ...w1.wrapped, ephemeral: w2.wrapped.ephemeral } },
    { name: "ephemeral key of 31 bytes", wrapped: { ...w1.wrapped, ephemeral: edited(w1.wrapped.ephemeral, (b) => b.slice(0, 31)) } },
    { name: "ephemeral key of 33 bytes", wrapped: { ...w1.wrapped, ephemeral: b64(new Uint8Array(33).fill(9)) } },
    { name: "ciphertext of 59 bytes", wrapped: { ...w1.wrapped, ciphertext: edited(w1.wrapped.ciphertext, (b) => b.slice(0, 59)) } },
    { name: "ciphertext of 61 bytes", wrapped: { ...w1.wrapped, ciphertext: b64(new Uint8Array(61)) } },
    { name: "ephemeral key not base64", wrapped: { ...w1.wrapped, ephemeral: "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo" } },
    { name: "ciphertext not base64", wrapped: { ...w1.wrapped, ciphertext: "wMHC w8TF" } },
    { name: "low-order ephemeral key: all zero", wrapped: { ...w1.wrapped, ephemeral: b64(ZERO_POINT) } },
    { name: "low-order ephemeral key: a point of order 8", wrapped: { ...w1.wrapped, ephemeral: b64(ORDER_8_POINT) } },
  ];
  const unwrapFailures = [];
  for (const f of unwrapFailureInputs) {
    const c = { recipient_secret: w1.recipient_secret, channel_id: w1.channel_id, wrapped: w1.wrapped, ...f };
    const error = await failureOf(() => unwrapChannelKey(Buffer.from(c.recipient_secret, "hex"), c.wrapped, c.channel_id));
    unwrapFailures.push({ name: c.name, recipient_secret: c.recipient_secret, channel_id: c.channel_id, wrapped: c.wrapped, error });
  }

  return {
    about:
      "The encryption formats of docs/crypto.md with fixed keys and nonces: sealed payloads (section 1) and wrapped channel keys " +
      "(section 2), with every intermediate value, and inputs that must be refused. Made by WebCrypto (node 20) with the reference " +
      "code in docs/vectors/lib.mjs; botlane reproduces every case.",
    conventions:
      "Byte strings are lower-case hex unless the field says base64. base64 is the strict standard alphabet with padding " +
      "(RFC 4648 section 4), as btoa writes it. Channel ids (aad, channel_id) are JSON strings; the associated data is their UTF-8 bytes.",
    fields: {
      "seal[]": "key (32 bytes), nonce (12 bytes), aad (the channel id), plaintext (bytes) -> wire = base64(nonce || ciphertext || tag)",
      "open_failures[]": "key, aad, wire -> error: the kind of refusal",
      "wrap[]":
        "ephemeral_secret and recipient_secret (raw X25519 secrets), their public keys, channel_key, nonce, channel_id -> " +
        "shared = X25519(ephemeral_secret, recipient_public), salt = ephemeral_public || recipient_public, " +
        "kek = HKDF-SHA256(shared, salt, info 'botlane channel key v1', 32 bytes), wrapped = {ephemeral: base64, ciphertext: base64(nonce || sealed key || tag)}",
      "unwrap_failures[]": "recipient_secret, channel_id, wrapped -> error: the kind of refusal",
      error:
        "base64: a field is not strict base64; length: a field decodes to the wrong number of bytes (a sealed payload under 28, " +
        "an ephemeral key other than 32, a wrapped ciphertext other than 60); low_order: the X25519 result is all zero; " +
        "decrypt: AES-GCM authentication failed (wrong key, wrong channel id, altered bytes). Checked in that order: " +
        "for an unwrap, ephemeral (base64, then length), ciphertext (base64, then length), then the agreement, then decryption.",
    },
    generator: "docs/vectors/gen-crypto.mjs",
    regenerate: "node docs/vectors/gen-crypto.mjs",
    seal: sealCases,
    open_failures: openFailures,
    wrap: wrapCases,
    unwrap_failures: unwrapFailures,
  };
}

const out = join(dirname(fileURLToPath(import.meta.url)), "crypto.json");
const text = JSON.stringify(await main(), null, 2) + "\n";
if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== text) {
    console.error(`${out} differs from what gen-crypto.mjs computes; run: node docs/vectors/gen-crypto.mjs`);
    process.exit(1);
  }
  console.log("crypto.json up to date");
} else {
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}
