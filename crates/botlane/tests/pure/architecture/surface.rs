//! One path to each public item (issue 31, item 1), read from the public
//! API listing `docs/api/botlane.txt` (which `scripts/public-api --check`
//! keeps equal to the code): the crate root holds exactly [`ROOT`], at most
//! [`MAX_ROOT`] names, and every other public name is at one path, in a
//! named module; only `botlane::prelude` may name an item a second time.

use std::collections::{BTreeMap, BTreeSet};

/// The most names the root may hold.
pub(crate) const MAX_ROOT: usize = 80;

/// The root: the spec's command area as `shared/api.md` spells it, the
/// client, REST, event and error types, the derives, and the public modules.
pub(crate) const ROOT: &[&str] = &[
    // The spec's constants.
    "COMMAND_DATA_VERSION",
    "COMMAND_OPTION_TYPE_CODES",
    "DEFAULT_COMMAND_PREFIX",
    "DEFAULT_REST_URL",
    "MAX_CHOICES_PER_OPTION",
    "MAX_CHOICE_LEN",
    "MAX_COMMANDS_PAYLOAD",
    "MAX_COMMANDS_PER_BOT",
    "MAX_COMMAND_DESC",
    "MAX_COMMAND_WIRE",
    "MAX_OPTIONS_PER_COMMAND",
    "MAX_OPTION_LENGTH",
    // The spec's command types.
    "CanonicalCommand",
    "CanonicalMenu",
    "CanonicalOption",
    "CommandArgValue",
    "CommandArgs",
    "CommandContext",
    "CommandData",
    "CommandDeclaration",
    "CommandInvocation",
    "CommandLookup",
    "CommandOption",
    "CommandOptionType",
    "CommandSource",
    "TextParseResult",
    // The registry and the spec's helpers.
    "CommandRegistry",
    "RegisteredCommand",
    "canonical_menu_json",
    "canonicalize_menu",
    "compute_menu_hash",
    "decode_command_data",
    "encode_command_data",
    // Both lanes of one structured invocation, for a client of one's own (the devserver's TestUser).
    "OutgoingInvocation",
    "format_invocation_text",
    "match_command_name",
    "parse_invocation_text",
    "validate_declaration",
    // The command area's errors.
    "ArgumentError",
    "ArgumentRule",
    "DeclarationError",
    "DeclarationRule",
    "FormatError",
    "ParseError",
    "ParseErrorKind",
    "UnknownOptionType",
    "Violation",
    // What a handler is and is given.
    "BoxError",
    "Channel",
    "CommandHandler",
    "Message",
    // The client.
    "ChannelInfo",
    "Client",
    "ClientOptions",
    "ClientStats",
    "Commands",
    "Emoji",
    "WeakClient",
    // REST.
    "BinaryResponse",
    "RequestInit",
    "RestError",
    "ServiceActionError",
    "ServiceRestError",
    // Events.
    "CommandError",
    "CommandErrorReason",
    "Event",
    "EventRecvError",
    "Events",
    "SendRejected",
    // The client's errors.
    "ClientError",
    "ConnectError",
    "ConnectErrorKind",
    // The derives, with the traits they implement.
    "Command",
    "CommandChoice",
    // The modules.
    "crypto",
    "framework",
    "keystore",
    "prelude",
    "rest",
];

/// Every public item of crate `krate` in a listing that is defined at
/// module level, as (module path, name): `botlane::framework::Check` is
/// (`botlane::framework`, `Check`). Methods, fields, variants, impls and
/// other crates' items (a trait's impl for `bool`) are not items of a
/// module of `krate`; a glob re-export has no name.
pub(crate) fn items(listing: &str, krate: &str) -> Vec<(String, String)> {
    const KINDS: &[&str] = &[
        "pub struct ",
        "pub enum ",
        "pub union ",
        "pub trait ",
        "pub type ",
        "pub const fn ",
        "pub async fn ",
        "pub const ",
        "pub static ",
        "pub fn ",
        "pub mod ",
        "pub macro ",
        "pub use ",
    ];
    let mut out = Vec::new();
    for line in listing.lines() {
        let line = line.strip_prefix("#[non_exhaustive] ").unwrap_or(line);
        let Some(rest) = KINDS.iter().find_map(|kind| line.strip_prefix(kind)) else {
            continue;
        };
        if rest.contains("<<") {
            continue;
        }
        let path = rest
            .split([' ', '(', '<'])
            .next()
            .unwrap_or_default()
            .trim_end_matches(':');
        let segments: Vec<&str> = path.split("::").collect();
        let Some((name, modules)) = segments.split_last() else {
            continue;
        };
        let is_module = |s: &&str| s.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if modules.first() != Some(&krate) || !modules.iter().all(is_module) {
            continue;
        }
        out.push((modules.join("::"), (*name).to_owned()));
    }
    out
}

/// The names at the crate root.
pub(crate) fn root_names(items: &[(String, String)], krate: &str) -> BTreeSet<String> {
    items
        .iter()
        .filter(|(module, _)| module == krate)
        .map(|(_, name)| name.clone())
        .collect()
}

/// Each name reachable at more than one module path, except through
/// `prelude`, with its paths; and each prelude name that is at no other
/// path.
pub(crate) fn second_paths(items: &[(String, String)], prelude: &str) -> Vec<String> {
    let mut paths: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (module, name) in items {
        paths.entry(name).or_default().insert(module);
    }
    let mut problems = Vec::new();
    for (name, modules) in paths {
        let others: Vec<&str> = modules.iter().copied().filter(|m| *m != prelude).collect();
        if others.len() > 1 {
            problems.push(format!("{name} is at {}", others.join(", ")));
        } else if others.is_empty() {
            problems.push(format!("{name} is in the prelude only"));
        }
    }
    problems
}
