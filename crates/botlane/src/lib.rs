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
//! - The command area (declarations, [`validate_declaration`], the canonical
//!   menu and [`compute_menu_hash`], the text grammar
//!   ([`parse_invocation_text`], [`format_invocation_text`]), the sidecar
//!   codec ([`encode_command_data`], [`decode_command_data`]) and
//!   [`CommandRegistry`]) is re-exported here from [`commands`].
//! - [`Client`] runs the realtime session and reports [`Event`]s through
//!   [`Events`]; [`crypto`] and [`keystore`] are the end-to-end encryption
//!   (`docs/crypto.md`). The opcode wire (`docs/protocol.md`) is a crate
//!   of its own, `botlane-proto`; the module `wire`, its former name here,
//!   is an alias of it, hidden from the docs and outside the stability
//!   promise.
//! - Typed commands: [`Command`](derive@Command) and
//!   [`CommandChoice`](derive@CommandChoice) derive a declaration from a
//!   struct or an enum, and `registry.command::<T>(..)` hands the handler
//!   the value; checks ([`Check`]), cooldowns ([`Cooldown`]), shared state
//!   ([`Client::with_data`]), error answers ([`OnError`]) and the generated
//!   help are the rest of the framework (`docs/guide.md`; coming from
//!   poise: `docs/coming-from-poise.md`).
#![deny(missing_docs)]

// The parts, bottom to top (`docs/architecture.md`; `tests/architecture.rs`
// fails on any cycle between them): shared helpers, telemetry and errors; the wire,
// the crypto and the keystore; the command area and the REST lane; the
// events; the transport; the session; dispatch; and the client, which
// wires them together.
mod deadline;
mod human;
mod loopback;
mod share;
mod sync;
mod telemetry;
mod throttle;

mod client;
pub mod commands;
pub mod crypto;
mod dispatch;
mod error;
mod events;
pub mod keystore;
pub mod rest;
mod session;
mod transport;
#[doc(hidden)]
pub mod wire;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

// The derives share their names with the traits they implement, as serde's do.
#[cfg(feature = "macros")]
pub use botlane_macros::{Command, CommandChoice};
pub use client::{
    ChannelInfo, Client, ClientOptions, ClientStats, Emoji, WeakClient, DEFAULT_HANDLER_TIMEOUT,
    DEFAULT_REST_URL,
};
pub use commands::*;
pub use error::{ClientError, ConnectError, ConnectErrorKind};
pub use events::{Event, EventRecvError, Events, SendRejected, EVENT_BYTES, EVENT_CAPACITY};
pub use rest::{
    BinaryResponse, RequestInit, RestError, RestLane, ServiceActionError, ServiceRestError,
};
