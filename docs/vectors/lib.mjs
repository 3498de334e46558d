// The reference code behind the vectors of docs/vectors/: the canonical menu
// (docs/protocol.md, "The canonical menu") and the encryption formats
// (docs/crypto.md), in plain JavaScript on node >= 20 with no packages:
// node:crypto's WebCrypto (AES-GCM, X25519, HKDF) is the browser API.
//
// gen-menus.mjs and gen-crypto.mjs write the vector files with it;
// check.mjs recomputes them with it. Nothing here is botlane's Rust code.

import { createHash } from "node:crypto";

const subtle = globalThis.crypto.subtle;
const enc = new TextEncoder();

export const TYPE_CODES = { string: 1, integer: 2, boolean: 3, user: 4, channel: 5, role: 6, number: 7 };

// Commands sorted by name with a stable sort comparing strings by
// JavaScript's `<` (UTF-16 code units; for valid ASCII names that is plain
// byte order), options in declared order, each option
// [name, typeCode, description, required, choices] with a missing `choices`
// as [] and `required` a real boolean; each command [name, description, options].
export function canonicalizeMenu(decls) {
  return [...decls]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((d) => [
      d.name,
      d.description,
      (d.options ?? []).map((o) => [o.name, TYPE_CODES[o.type], o.description, o.required === true, o.choices ?? []]),
    ]);
}

// The published bytes and the lower-case hex SHA-256 of a menu.
export function menuBytesAndHash(decls) {
  const json = JSON.stringify(canonicalizeMenu(decls));
  return { json, sha256: createHash("sha256").update(json, "utf8").digest("hex") };
}

export const hex = (bytes) => Buffer.from(bytes).toString("hex");
export const unhex = (text) => {
  if (!/^(?:[0-9a-f]{2})*$/.test(text)) throw new Error(`not lower-case hex: ${text}`);
  return Uint8Array.from(Buffer.from(text, "hex"));
};
export const b64 = (bytes) => Buffer.from(bytes).toString("base64");

// Strict standard base64 (RFC 4648 §4): padded, no whitespace, no URL-safe
// alphabet, zero trailing bits. atob and Buffer accept more; botlane does not.
export function unb64(text) {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) {
    throw new CryptoFailure("base64");
  }
  const bytes = Uint8Array.from(Buffer.from(text, "base64"));
  if (b64(bytes) !== text) throw new CryptoFailure("base64");
  return bytes;
}

export const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

// A failure with the kind the vectors name: base64, length, decrypt, low_order.
export class CryptoFailure extends Error {
  constructor(kind) {
    super(kind);
    this.kind = kind;
  }
}

// crypto.md §1: base64(nonce(12) || ciphertext || tag(16)), AAD = channel id.
export async function seal(rawKey, plaintext, channelId, nonce) {
  const key = await subtle.importKey("raw", rawKey, "AES-GCM", false, ["encrypt"]);
  const sealed = await subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: enc.encode(channelId) }, key, plaintext);
  return b64(concat(nonce, new Uint8Array(sealed)));
}

export async function open(rawKey, wire, channelId) {
  const bytes = unb64(wire);
  if (bytes.length < 28) throw new CryptoFailure("length");
  const key = await subtle.importKey("raw", rawKey, "AES-GCM", false, ["decrypt"]);
  try {
    return new Uint8Array(
      await subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: enc.encode(channelId) }, key, bytes.slice(12)),
    );
  } catch {
    throw new CryptoFailure("decrypt");
  }
}

// An X25519 private key from its 32 raw secret bytes (PKCS#8 wrapper of RFC 8410).
export async function x25519Private(secret) {
  const pkcs8 = concat(unhex("302e020100300506032b656e04220420"), secret);
  return subtle.importKey("pkcs8", pkcs8, { name: "X25519" }, true, ["deriveBits"]);
}

export async function x25519Public(secret) {
  const jwk = await subtle.exportKey("jwk", await x25519Private(secret));
  return Uint8Array.from(Buffer.from(jwk.x, "base64url"));
}

// crypto.md §2: shared = X25519(own, their); kek = HKDF-SHA256(shared, salt = E || R,
// info = "botlane channel key v1"). Returns every intermediate value.
export async function wrappingKey(ownSecret, theirPublic, ephemeralPublic, recipientPublic) {
  const their = await subtle.importKey("raw", theirPublic, { name: "X25519" }, false, []);
  let shared;
  try {
    // deriveBits refuses an all-zero (low-order) result.
    shared = new Uint8Array(await subtle.deriveBits({ name: "X25519", public: their }, await x25519Private(ownSecret), 256));
  } catch {
    throw new CryptoFailure("low_order");
  }
  const salt = concat(ephemeralPublic, recipientPublic);
  const ikm = await subtle.importKey("raw", shared, "HKDF", false, ["deriveBits"]);
  const kek = new Uint8Array(
    await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info: enc.encode("botlane channel key v1") }, ikm, 256),
  );
  return { shared, salt, kek };
}

export async function wrapChannelKey(channelKey, recipientPublic, channelId, ephemeralSecret, nonce) {
  const ephemeralPublic = await x25519Public(ephemeralSecret);
  const steps = await wrappingKey(ephemeralSecret, recipientPublic, ephemeralPublic, recipientPublic);
  const ciphertext = await seal(steps.kek, channelKey, channelId, nonce);
  return { ...steps, ephemeralPublic, wrapped: { ephemeral: b64(ephemeralPublic), ciphertext } };
}

export async function unwrapChannelKey(recipientSecret, wrapped, channelId) {
  const ephemeralPublic = unb64(wrapped.ephemeral);
  if (ephemeralPublic.length !== 32) throw new CryptoFailure("length");
  const bytes = unb64(wrapped.ciphertext);
  if (bytes.length !== 60) throw new CryptoFailure("length");
  const recipientPublic = await x25519Public(recipientSecret);
  const { kek } = await wrappingKey(recipientSecret, ephemeralPublic, ephemeralPublic, recipientPublic);
  return open(kek, wrapped.ciphertext, channelId);
}
