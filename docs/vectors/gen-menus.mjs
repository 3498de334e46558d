// Generates docs/vectors/menus.json: canonical menu bytes and their SHA-256
// as JavaScript computes them (JSON.stringify, node:crypto), for every
// implementation to compare itself against byte for byte. botlane's Rust
// tests read the file (crates/botlane/tests/menu.rs, vectors.rs); check.mjs
// recomputes it without any Rust.
//
//     node docs/vectors/gen-menus.mjs           rewrite menus.json
//     node docs/vectors/gen-menus.mjs --check   fail if menus.json differs
//
// node >= 20, no packages. The output is deterministic (the pseudo-random case
// uses a fixed seed), so running it again leaves the committed file unchanged.
//
// The rules (canonicalizeMenu in lib.mjs) are those of docs/protocol.md,
// "The canonical menu".
//
// Lone surrogates are left out on purpose: JavaScript strings can hold them
// (JSON.stringify writes them as \udXXX escapes) but Rust strings cannot, so
// no declaration botlane can hold contains one. The script refuses to write a
// vector that has one.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { TYPE_CODES, menuBytesAndHash } from "./lib.mjs";

// A small seeded generator (mulberry32) so the output never changes.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const allControls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join("") + "\u007f";
const pool = [
  ...allControls,
  '"', "\\", "/", "'", "`", "<", ">", "&", ":", " ", "\u00a0",
  "a", "Z", "0", "é", "ß", "Ω", "Ж", "中", "文", "ع", "\u0301", "\u200d", "\ufeff",
  "\u2028", "\u2029", "\ufffd", "\uffff", "😀", "👩‍💻", "🇫🇷", "\u{10ffff}", "\u{1d11e}",
];
const random = rng(0x5eed);
const pick = (n) => Array.from({ length: n }, () => pool[Math.floor(random() * pool.length)]).join("");

const opt = (name, type, description, extra = {}) => ({ name, description, type, ...extra });

const cases = [
  {
    name: "worked example (docs/protocol.md)",
    declarations: [
      {
        name: "roll",
        description: "Roll dice",
        options: [
          opt("count", "integer", "How many", { required: true }),
          opt("sides", "integer", "Sides", { choices: ["6", "20"] }),
          opt("label", "string", "What for"),
        ],
      },
      { name: "ping", description: "Check the bot" },
    ],
  },
  { name: "empty menu", declarations: [] },
  { name: "one command, options omitted", declarations: [{ name: "ping", description: "Check the bot" }] },
  {
    name: "every option type, required present, absent and false, choices present and absent",
    declarations: [
      {
        name: "kitchen",
        description: "Every type",
        options: [
          opt("s", "string", "a string", { required: true, choices: ["a", "b c", ""] }),
          opt("i", "integer", "an integer", { required: true, choices: ["6", "-20", "+007"] }),
          opt("b", "boolean", "a boolean", { required: false }),
          opt("u", "user", "a user"),
          opt("c", "channel", "a channel", { choices: ["c1"] }),
          opt("r", "role", "a role", { required: false, choices: ["admin", "mod"] }),
          opt("n", "number", "a number", { choices: ["1.5", ".5", "-2e3", "1E-2"] }),
        ],
      },
    ],
  },
  {
    name: "control characters U+0000-U+001F and U+007F",
    declarations: [
      {
        name: "controls",
        description: allControls,
        options: [opt("each", "string", "one per choice", { choices: [...allControls] })],
      },
    ],
  },
  {
    name: "quotes, backslashes and slashes",
    declarations: [
      {
        name: "quote",
        description: 'say "hi" \\ back\\slash / slash </script> \\u0041 \\n',
        options: [opt("q", "string", "\"'`", { choices: ['"', "\\", "/", "\\\"", '""', "\\\\"] })],
      },
    ],
  },
  {
    name: "non-ascii, combining marks, bidi, bom, noncharacters",
    declarations: [
      {
        name: "intl",
        description: "café ßtraße Ωmega Жук 中文 عربى e\u0301 \u200f\u202e rtl \ufeff bom \ufffd \uffff",
        options: [opt("x", "string", "ünïcødé", { choices: ["é", "e\u0301", "中", "\u00a0"] })],
      },
    ],
  },
  {
    name: "emoji and astral planes",
    declarations: [
      {
        name: "emoji",
        description: "😀 👩‍💻 🇫🇷 👍🏽 \u{1d11e} \u{10ffff}",
        options: [opt("e", "string", "🎲", { choices: ["😀", "👩‍💻", "🇫🇷"] })],
      },
    ],
  },
  {
    name: "line and paragraph separators U+2028 U+2029",
    declarations: [
      {
        name: "seps",
        description: "line\u2028para\u2029end",
        options: [opt("s", "string", "\u2028", { choices: ["\u2029", "a\u2028b"] })],
      },
    ],
  },
  {
    name: "long strings",
    declarations: [
      {
        name: "long",
        description: "x".repeat(5000) + '"\\\n' + "é".repeat(3000) + "😀".repeat(1000),
        options: [opt("l", "string", "\u0000".repeat(500), { choices: ["y".repeat(2000), "\u2028".repeat(300)] })],
      },
    ],
  },
  {
    name: "commands sorted by name, options kept in declared order",
    declarations: [
      { name: "zeta", description: "last", options: [opt("b", "string", "b"), opt("a", "string", "a")] },
      { name: "alpha", description: "first" },
      { name: "mid-2", description: "m2" },
      { name: "mid_1", description: "m1" },
      { name: "mid-10", description: "m10" },
      { name: "0num", description: "digit first" },
    ],
  },
  {
    name: "equal names keep declared order (stable sort)",
    declarations: [
      { name: "dup", description: "first" },
      { name: "aaa", description: "a" },
      { name: "dup", description: "second" },
    ],
  },
  {
    name: "names compare by utf-16 code units, upper case before lower case",
    declarations: [
      { name: "\uff5e", description: "fullwidth tilde (0xFF5E)" },
      { name: "\u{1f600}", description: "emoji (0xD83D 0xDE00)" },
      { name: "b", description: "lower b" },
      { name: "B", description: "upper B" },
      { name: "é", description: "e acute" },
      { name: "", description: "empty name" },
    ],
  },
  {
    name: "pseudo-random strings from a pool of awkward characters",
    declarations: Array.from({ length: 8 }, (_, i) => ({
      name: `r${7 - i}`,
      description: pick(30 + i * 17),
      options: Array.from({ length: i % 4 }, (_, j) =>
        opt(`o${j}`, Object.keys(TYPE_CODES)[(i + j) % 7], pick(20 + j), {
          required: j === 0,
          ...(j % 2 === 1 ? { choices: [pick(5), pick(9)] } : {}),
        }),
      ),
    })),
  },
  {
    name: "fifty commands with options",
    declarations: Array.from({ length: 50 }, (_, i) => ({
      name: `cmd${String(49 - i).padStart(2, "0")}`,
      description: `Command number ${49 - i}`,
      options: [
        opt("count", "integer", "How many", { required: true }),
        opt("sides", "integer", "Sides", { choices: ["4", "6", "8", "10", "12", "20"] }),
        opt("label", "string", "A label"),
      ],
    })),
  },
];

const hasLoneSurrogate = (s) => !s.isWellFormed();
const walk = (v, f) => (typeof v === "string" ? f(v) : v && typeof v === "object" && Object.values(v).forEach((x) => walk(x, f)));

const vectors = cases.map(({ name, declarations }) => {
  walk(declarations, (s) => {
    if (hasLoneSurrogate(s)) throw new Error(`case "${name}" has a lone surrogate; Rust strings cannot hold one`);
  });
  return { name, declarations, ...menuBytesAndHash(declarations) };
});

const out = join(dirname(fileURLToPath(import.meta.url)), "menus.json");
const file = {
  about:
    "Canonical menus: declarations in the spec's JSON shape, the exact bytes that are published (op 20) and hashed, and the hash. " +
    "See docs/protocol.md, 'The canonical menu'.",
  fields: {
    "cases[].name": "what the case covers",
    "cases[].declarations": "CommandDeclaration objects: name, description, options[] of {name, description, type, required?, choices?}",
    "cases[].json": "the canonical menu as compact JSON text (JSON.stringify of the arrays); its UTF-8 bytes are what is hashed",
    "cases[].sha256": "lower-case hex SHA-256 of the UTF-8 bytes of json",
  },
  generator: "docs/vectors/gen-menus.mjs",
  regenerate: "node docs/vectors/gen-menus.mjs",
  cases: vectors,
};
const text = JSON.stringify(file, null, 2) + "\n";
if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== text) {
    console.error(`${out} differs from what gen-menus.mjs computes; run: node docs/vectors/gen-menus.mjs`);
    process.exit(1);
  }
  console.log(`menus.json: ${vectors.length} vectors up to date`);
} else {
  writeFileSync(out, text);
  console.log(`wrote ${vectors.length} vectors to ${out}`);
}
