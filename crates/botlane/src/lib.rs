//! botlane: bots for an end-to-end-encrypted chat service.
//!
//! A bot declares slash commands, logs in over the realtime wire (the token
//! is presented once, at login), publishes its canonical command menu, and
//! receives invocations on two lanes: an encrypted structured sidecar
//! addressed to this one bot, and a readable text line such as
//! `/roll 2 sides:6`. When both are present the structured lane wins.
//! Handlers get a [`CommandContext`]; failures become
//! [`Event::CommandError`].
//!
//! The example below is complete and runs as a test: it starts the reference
//! service (`botlane-devserver`) on loopback, runs a bot, and drives it with a
//! human [`TestUser`](../botlane_devserver/struct.TestUser.html).
//!
//! ```
//! use std::time::Duration;
//! use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration, CommandOption, CommandOptionType};
//! use botlane_devserver::{DevServer, DevServerConfig, TestUser};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The reference service, with a bot and a human in one channel.
//! let server = DevServer::start(DevServerConfig::default()).await?;
//! let bot = server.add_bot("greeter");
//! let human = server.add_user("alice");
//! let room = server.create_server("room");
//! let general = server.create_channel(&room, "general")?;
//! server.add_member(&general, &bot.id)?;
//! server.add_member(&general, &human.id)?;
//!
//! // The bot.
//! let dir = tempfile::tempdir()?;
//! let client = Client::new(ClientOptions::new(bot.token.clone(), dir.path().join("keystore"), server.ws_url()))?;
//! let greet = CommandDeclaration::new("greet", "Say hello")
//!     .option(CommandOption::new("name", "Who to greet", CommandOptionType::String).required(true));
//! client.commands().register(greet, |ctx: CommandContext| async move {
//!     let name = ctx.get_string("name").unwrap_or_default();
//!     ctx.reply(&format!("hello, {name}!")).await
//! })?;
//! client.login().await?;
//!
//! // A human sends a text line and gets a true reply.
//! let alice = TestUser::connect(&server.ws_url(), &human.token).await?;
//! alice.open_channel(&general).await?;
//! alice.send_text(&general, "/greet Ada Lovelace").await?;
//! let reply = alice.wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(10)).await?;
//! assert_eq!(reply.content, "hello, Ada Lovelace!");
//! # client.shutdown();
//! # Ok(()) }
//! ```
//!
//! ## Where things are
//!
//! - Here, at the root: the spec's command area (declarations,
//!   [`validate_declaration`], the canonical menu and
//!   [`compute_menu_hash`], the text grammar ([`parse_invocation_text`],
//!   [`format_invocation_text`]), the sidecar codec
//!   ([`encode_command_data`], [`decode_command_data`]), [`CommandRegistry`]
//!   and [`CommandContext`]), the client, the events, the REST types and
//!   the errors. Every public name has one path; [`prelude`] gathers the
//!   common ones a second time.
//! - [`Client`] runs the realtime session and reports [`Event`]s through
//!   [`Events`]; [`crypto`] and [`keystore`] are the end-to-end encryption
//!   (`docs/crypto.md`). The opcode wire (`docs/protocol.md`) is a crate
//!   of its own, `botlane-proto`; the module `wire`, its former name here,
//!   is an alias of it, hidden from the docs and outside the stability
//!   promise.
//! - Typed commands: [`Command`](derive@Command) and
//!   [`CommandChoice`](derive@CommandChoice) derive a declaration from a
//!   struct or an enum, and `registry.command::<T>(..)` hands the handler
//!   the value; checks ([`Check`](framework::Check)), cooldowns
//!   ([`Cooldown`](framework::Cooldown)), shared state
//!   ([`Client::with_data`]), error answers ([`OnError`](framework::OnError))
//!   and the generated help are the rest of the [`framework`] (`docs/guide.md`; coming from
//!   poise: `docs/coming-from-poise.md`).
#![deny(missing_docs)]

// The parts, bottom to top (`docs/architecture.md`; `tests/pure/architecture.rs`
// fails on any cycle between them, and between the concept folders inside
// each): shared helpers, telemetry and errors; the wire, the crypto and the
// keystore; the spec's command area and the REST lane; messages; the
// command framework; the events; the transport; the session; dispatch; and
// the client, which wires them together.
mod deadline;
mod human;
mod loopback;
mod share;
mod sync;
mod telemetry;
mod throttle;

mod client;
mod commands;
pub mod crypto;
mod dispatch;
mod error;
mod events;
pub mod framework;
pub mod keystore;
mod message;
pub mod rest;
mod session;
mod transport;
#[doc(hidden)]
pub mod wire;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

pub mod prelude;

// The root: the spec's command area as `api.md` spells it, the client,
// REST, event and error types, and the derives; every name once
// (`tests/pure/architecture/surface.rs` holds the list). The rest of the
// framework is in `framework`, the REST lane's responses in `rest`.

// The derives share their names with the traits they implement, as serde's do.
#[cfg(feature = "macros")]
pub use botlane_macros::{Command, CommandChoice};
pub use client::{
    ChannelInfo, Client, ClientOptions, ClientStats, Emoji, WeakClient, DEFAULT_REST_URL,
};
pub use commands::argument_error::{ArgumentError, ArgumentRule};
pub use commands::data::{
    decode_command_data, encode_command_data, CommandLookup, OutgoingInvocation,
};
pub use commands::limits::{
    COMMAND_DATA_VERSION, DEFAULT_COMMAND_PREFIX, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN,
    MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT, MAX_COMMAND_DESC, MAX_COMMAND_WIRE,
    MAX_OPTIONS_PER_COMMAND, MAX_OPTION_LENGTH,
};
pub use commands::menu::{
    canonical_menu_json, canonicalize_menu, compute_menu_hash, CanonicalCommand, CanonicalMenu,
    CanonicalOption,
};
pub use commands::option::CommandOption;
pub use commands::option_type::{CommandOptionType, UnknownOptionType, COMMAND_OPTION_TYPE_CODES};
pub use commands::text::error::{FormatError, ParseError, ParseErrorKind};
pub use commands::text::format::format_invocation_text;
pub use commands::text::{match_command_name, parse_invocation_text, TextParseResult};
pub use commands::types::{
    CommandArgValue, CommandArgs, CommandData, CommandDeclaration, CommandInvocation, CommandSource,
};
pub use commands::validate::checks::validate_declaration;
pub use commands::validate::{DeclarationError, DeclarationRule, Violation};
pub use error::{ClientError, ConnectError, ConnectErrorKind};
pub use events::{Event, EventRecvError, Events, SendRejected};
pub use framework::command_error::{CommandError, CommandErrorReason};
pub use framework::context::CommandContext;
pub use framework::handler::{BoxError, CommandHandler};
pub use framework::live::Commands;
pub use framework::registered::RegisteredCommand;
pub use framework::registry::CommandRegistry;
pub use framework::typed::{Command, CommandChoice};
pub use message::{Channel, Message};
pub use rest::error::{RestError, ServiceActionError, ServiceRestError};
pub use rest::init::{BinaryResponse, RequestInit};

/// What generated code names (`#[derive(Command)]`, `#[derive(CommandChoice)]`):
/// outside the stability promise, and not for hand-written code.
#[doc(hidden)]
pub mod __private {
    pub use crate::commands::argument_error::ArgumentError;
    pub use crate::commands::option::CommandOption;
    pub use crate::commands::option_type::CommandOptionType;
    pub use crate::commands::types::{CommandArgs, CommandDeclaration};
    pub use crate::framework::typed::{
        check_arg_names, optional_arg, put_arg, required_arg, Command, CommandChoice,
        CommandOptionValue,
    };
}
