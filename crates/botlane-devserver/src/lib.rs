//! botlane-devserver: a reference chat service for developing and testing
//! botlane bots, on your machine and in your tests.
//!
//! It speaks the service's side of the realtime wire of `docs/protocol.md`
//! (one WebSocket at `/ws`, JSON frames `{"op", "d"}`, replies correlated by
//! opcode) with everything in memory: accounts and tokens (kept only as
//! SHA-256), identity public keys, servers, channels and members, messages
//! (sealed content and sidecar only: it never sees plaintext), each bot's
//! published menu (command names casefolded) and channel keys waiting for
//! offline members.
//!
//! It also serves the REST lane on a second listener ([`DevServer::rest_url`],
//! plain http or https with a certificate made at start): opcode 638 mints a
//! one-time secret, `POST /auth/verify-session` exchanges it for a
//! `verification` value, and `/api/*` checks that value and then the
//! `bot-rest` allowlist ([`BOT_REST_ALLOWLIST`]). The server flag
//! `BOT_REST_CREDENTIALS` is off by default, as on the real service: 638
//! then answers `-7`. `docs/rest.md` has the bodies, codes and lifetimes.
//!
//! Two ways to use it:
//!
//! * **The binary** `botlane-devserver [--listen ADDR] [--config FILE]
//!   [--realtime-tls [--realtime-root-cert FILE]] [--rest-listen ADDR]
//!   [--rest-credentials] [--rest-tls [--rest-root-cert FILE]] [--playground]
//!   [--prelogin-connections N] [--login-timeout SECS] [--sessions N]
//!   [--admin [--admin-listen ADDR]]` runs it until Ctrl-C (or SIGTERM) and prints its URLs and the ids of
//!   the configured accounts, servers, channels and files (see
//!   [`DevServerConfig`] for the file); with `--playground`, also the URL of
//!   the playground page; with `--admin`, the URL of the HTTP admin
//!   endpoint and its token. It honours the environment variable
//!   `BOT_REST_CREDENTIALS`.
//! * **The library**, in a bot's own tests: [`DevServer::start`] on a free
//!   port, accounts and channels made through the handle's admin calls, the
//!   bot pointed at [`DevServer::ws_url`] with the bot's token, and one or
//!   more [`TestUser`]s playing the humans. What the service received from
//!   and sent to logged-in clients is recorded (the newest records, within
//!   the caps of [`Limits`]), so a test can assert on it
//!   ([`DevServer::frames`], [`DevServer::messages`], [`DevServer::menu`],
//!   [`DevServer::notifications_for`]) and await a change without sleeping
//!   ([`DevServer::wait_for`]).
//!
//! # Testing a bot in one line: [`Scene`]
//!
//! [`Scene::start`] sets up a devserver, the bot's logged-in [`Client`](botlane::Client)
//! with the commands the closure registers, and a human [`TestUser`] in one
//! channel with the key shared. [`Scene::invoke`] ([`TestUser::invoke`]
//! outside a scene) sends a typed command on the structured lane, formatted
//! and encoded by botlane's own code; [`Sidecar`] builds deliberately wrong
//! sidecars (a wrong type, an unknown choice, another bot…) for
//! [`Scene::send_sidecar`] / [`TestUser::send_with_sidecar`].
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use botlane::Command;
//! use botlane_devserver::{Scene, Sidecar};
//!
//! /// Roll some dice
//! #[derive(Command, Debug, PartialEq)]
//! struct Roll {
//!     /// How many dice
//!     #[option(min = 1, max = 20)]
//!     count: u8,
//! }
//!
//! let scene = Scene::start(|commands| {
//!     commands.command::<Roll>(|ctx, roll| async move {
//!         ctx.reply(&format!("rolled {}", roll.count)).await
//!     })?;
//!     Ok(())
//! })
//! .await?;
//!
//! scene.say("/roll 2").await?; // the text lane
//! assert_eq!(scene.answer().await?.content, "rolled 2");
//! scene.invoke(&Roll { count: 3 }).await?; // the structured lane, typed
//! assert_eq!(scene.answer().await?.content, "rolled 3");
//!
//! // A sidecar addressed to another bot: dropped, the valid line ignored.
//! let elsewhere = Sidecar::to(scene.bot_id()).invoking(&Roll { count: 4 }).for_another_bot();
//! scene.send_sidecar("/roll 4", &elsewhere).await?;
//! scene.say("/roll 5").await?;
//! assert_eq!(scene.answer().await?.content, "rolled 5");
//! scene.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The crate's `README.md` shows the same with an argument error, and the
//! table of every kind of wrong sidecar.
//!
//! # Testing a bot step by step
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use botlane::{CommandArgValue, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
//! use botlane_devserver::{Denial, DevServer, TestUser};
//!
//! let server = DevServer::start(Default::default()).await?;
//! let channel = server.create_channel(&server.create_server("lobby"), "general")?;
//! let bot = server.add_bot("dicebot");
//! let alice = server.add_user("alice");
//! server.add_member(&channel, &bot.id)?;
//! server.add_member(&channel, &alice.id)?;
//!
//! // Start the bot under test here with `server.ws_url()` and `bot.token`,
//! // and wait until it has logged in, so that it has an identity key:
//! // server.wait_for(|s| s.is_online(&bot.id), Duration::from_secs(5)).await?;
//!
//! let alice = TestUser::connect(&server.ws_url(), &alice.token).await?;
//! alice.open_channel(&channel).await?; // a channel key, wrapped to every member
//!
//! let roll = CommandDeclaration::new("roll", "Roll dice")
//!     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
//! let args = CommandArgs::from([("count".to_owned(), CommandArgValue::Integer(2))]);
//! let invocation = alice.send_command(&channel, &bot.id, &roll, &args).await?;
//!
//! // With a bot running, wait for its answer:
//! // let answer = alice.wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(5)).await?;
//! // assert_eq!(answer.reply_to.as_deref(), Some(invocation.as_str()));
//! // assert_eq!(alice.notifications().len(), 1); // a true reply notifies alice
//!
//! // The service stored ciphertext, never the line alice typed.
//! let stored = server.messages(&channel);
//! assert_eq!(stored[0].id, invocation);
//! assert_ne!(stored[0].content, "/roll 2");
//!
//! // Make the channel refuse sends to exercise the bot's `sendRejected` path.
//! server.deny_sends(&channel, Some(Denial::RateLimited))?;
//! // And cut every connection to exercise its reconnect.
//! server.drop_connections();
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # The playground
//!
//! With [`DevServerConfig::playground`] (the binary's `--playground`) the
//! realtime listener also serves a web page at `/playground`
//! ([`DevServer::playground_url`]) where a person chats with their bots: a
//! message list, a text box (plain lines on the text lane) and a command
//! picker built from each bot's published menu (typed inputs, choices as
//! selects, required options marked) that sends on the structured lane.
//! Replies, denied sends and the bots' answers to lines that do not parse
//! are shown. The page is plain HTML, CSS and JavaScript embedded in the
//! binary (no build step, nothing loaded from elsewhere).
//!
//! The setup, made at start:
//!
//! * a human account `you` (or the configured user of that name), a server
//!   and a channel both named `playground` ([`DevServer::playground_channel`]);
//! * every bot account joins that channel: the configured ones at once,
//!   later ones (such as [`DevServer::add_bot`]) the next time the page asks
//!   for the session or the menus, which it polls every two seconds.
//!
//! The page is an ordinary client of `/ws`: it gets the token of `you` from
//! `GET /playground/session`, logs in with an X25519 identity it makes with
//! WebCrypto, creates the channel key (or reuses the one it kept in the
//! browser's local storage, or one a member shared with it), wraps it to
//! every member that has a public key (again before each send, so a bot
//! restarted with a fresh keystore gets it too), and seals every message and
//! sidecar with AES-256-GCM as `docs/crypto.md` says. The service relays
//! ciphertext only. `GET /playground/menus` returns the bots of the channel
//! with their stored menus in canonical form (plaintext by the spec).
//!
//! Both endpoints exist only with the playground on. Because the session
//! endpoint hands out a login token, the playground refuses a non-loopback
//! listen address, and every playground route answers `403` unless the
//! request's `Host` is `localhost`, `127.x.x.x` or `[::1]` (so a page on
//! another host name rebound to 127.0.0.1 gets nothing).
//!
//! # Decisions the protocol leaves to the service
//!
//! * Menus (op 20) are checked strictly and independently of botlane's own
//!   validation: the canonical arrays exactly (`[name, description,
//!   options]`, options `[name, typeCode, description, required, choices]`),
//!   `required` a real boolean, every limit of the spec, required options
//!   before optional ones, typed choices that coerce, commands in canonical
//!   order (sorted by name, no duplicates). Command names are casefolded
//!   (Unicode lower case) and must then match `^[a-z0-9_-]{1,32}$`; option
//!   names must match it as sent. The size cap counts the compact JSON the
//!   service re-serializes. `-5` / `-8`; a human account gets `-1`.
//! * Sends (op 30): `-4` for an unknown channel or a non-member, the
//!   channel's [`Denial`] if one is set, `-8` for content over
//!   [`MAX_CONTENT_BYTES`] or a sidecar over `MAX_COMMAND_WIRE` characters,
//!   `-5` for content or a sidecar that cannot be a sealed payload (not
//!   canonical base64, or fewer than 28 bytes: nonce and tag) and for a
//!   `reply_to` naming no message of the channel. A reply notifies the
//!   replied-to author unless they reply to themselves. Each channel keeps
//!   its newest [`Limits::channel_history`] messages.
//! * History (op 40): the last `limit` messages (default
//!   [`DEFAULT_HISTORY`], at most [`MAX_HISTORY`]), oldest first, as many of
//!   them as fit in one frame of [`MAX_FRAME_BYTES`].
//! * Keys: op 51 only between members; op 52 answers without a key for an
//!   account that never logged in; op 61 lists a channel's members for its
//!   members. Only humans join channels themselves (op 60; bots get `-3`).
//!   A key for an offline member waits for its next login, one per channel
//!   and sender.
//! * Membership pushes: adding an online account to a channel (the admin
//!   call, or op 60) pushes op 34 `{"channel": {"id", "server_id",
//!   "name"}}`; [`DevServer::remove_member`] pushes op 35 `{"channel_id"}`
//!   and stops the channel's messages and keys for that account.
//! * Login: `d` must be `{token, public_key, client}`; the public key must be
//!   canonical base64 of 32 bytes and not a low-order X25519 point (`-5`);
//!   an unknown or revoked token gets `-6` and the socket is closed (code
//!   1008); a full session pool gets `-9`; a second login `-5`.
//! * Bad input: a frame whose envelope cannot be read (not a JSON object, a
//!   repeated top-level key, `op` missing or not an integer in 0..=65535)
//!   closes the connection with 1007 `malformed frame envelope: <what>`, so
//!   every pending request fails at once; a known request with `d` missing,
//!   not an object, repeating a key at any depth, or not decoding gets its
//!   opcode's `-5` with a reason (naming fields, never quoting values); an
//!   unknown opcode, or a push sent by a client, gets `{"code": -5,
//!   "reason": "unknown opcode N"}` on opcode N; a binary frame closes with
//!   1003; a message over [`MAX_FRAME_BYTES`] with 1009; more than 32
//!   WebSocket pings in one 10 s window (`botlane_proto::ping`) with 1008
//!   `more than 32 pings within 10 s` (the WebSocket layer queues a pong
//!   for each, read or not), and a 9th ping while the socket has taken no
//!   byte from the service since the 1st (a client that does not read)
//!   with 1008 too.
//! * Budgets (all in [`Limits`]): connections that have not logged in and
//!   logged-in sessions are separate pools (when the first is full, a
//!   newcomer takes the place of the oldest idle stranger, else `503` with
//!   `Retry-After` before the upgrade; close 1008 `no login within N s`
//!   after the login timeout); slowloris and silent TLS clients are closed by the
//!   header-read timeout; a client that does not read its pushes is closed
//!   with 1008 `outbound queue full: the client is not reading`.
//! * Test controls for any client: with [`DevServerConfig::admin`] (the
//!   binary's `--admin`) the admin calls of [`DevServer`] are also JSON
//!   routes (`/admin/<method name>`) on a loopback-only listener of their
//!   own ([`DevServer::admin_url`]), guarded by a random bearer token
//!   ([`DevServer::admin_token`], compared in constant time) and a `Host`
//!   check against DNS rebinding, with no CORS. [`DevServer::fail_next_requests`]
//!   makes any request of a logged-in session answer `-2`.
//! * [`DevServer::drop_connections`] drops sockets with no close frame;
//!   [`DevServer::revoke_bot`] and shutdown send a close frame (1008, 1001).
//!   Every close completes the closing handshake within
//!   [`Limits::flush_timeout`], then the socket is dropped.
//! * REST (details in `docs/rest.md`): 638 checks the flag (`-7`), then the
//!   session kind (`-1`), then a per-bot sliding-window rate limit of
//!   [`DEFAULT_MINT_LIMIT`] successful mints per [`DEFAULT_MINT_WINDOW`]
//!   (`-9`), then injected failures (`-2`). Secrets (32 random bytes,
//!   base64url) and `verification` values are kept only as SHA-256; a secret
//!   is consumed by its first presentation and expires after
//!   [`SECRET_LIFETIME`]; a session lasts [`DEFAULT_SESSION_LIFETIME`] on
//!   tokio's clock. Revoking a bot purges its rows. Bodies over
//!   [`Limits::max_request_body`] get `413`, bodies slower than
//!   [`Limits::request_body_timeout`] `408`.
//! * Records: frames only from logged-in connections (a login frame, all
//!   but its public key redacted, once it succeeds), HTTP requests with every header verbatim
//!   and the body up to [`Limits::http_record_body_bytes`], notifications;
//!   each in a ring capped by count (and bytes), the oldest dropped first.
//!   Logs carry opcodes, sizes, counts, ids and error kinds: never a
//!   payload, a header value, a path, a token or a secret.
#![deny(missing_docs)]

mod admin;
mod body;
mod config;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod limits;
mod listener;
mod playground;
mod realtime;
mod records;
mod rest;
mod scene;
mod server;
mod state;
mod test_user;
mod throttle;
mod tls;

/// The Rust blocks of the crate's README, compiled (and run, unless marked
/// `no_run`) as doctests, so the README cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use config::{
    parse_flag, AccountConfig, ChannelConfig, DevServerConfig, FileConfig, ServerConfig,
    BOT_REST_CREDENTIALS,
};
pub use error::{DevServerError, WaitTimeout};
pub use limits::Limits;
pub use limits::MAX_HTTP_BODY_BYTES;
pub use realtime::{
    DEFAULT_HISTORY, EMOJI_CATALOG, MAX_CONTENT_BYTES, MAX_FRAME_BYTES, MAX_HISTORY,
};
pub use records::{Direction, FrameRecord, HttpRecord, NotificationRecord};
pub use rest::BOT_REST_ALLOWLIST;
pub use scene::{BotSetup, Scene, SceneBuilder, SceneError, ANSWER_TIMEOUT};
pub use server::DevServer;
pub use state::menu::{MenuRejection, StoredCommand, StoredMenu, StoredOption};
pub use state::{
    BotAccount, Denial, StateView, StoredFile, UserAccount, DEFAULT_MINT_LIMIT,
    DEFAULT_MINT_WINDOW, DEFAULT_SESSION_LIFETIME, SECRET_LIFETIME,
};
pub use test_user::{
    History, ReceivedMessage, Sidecar, TestUser, TestUserError, CONNECT_TIMEOUT,
    MAX_KEPT_NOTIFICATIONS, MAX_QUEUED_MESSAGES, MAX_UNSENT_BYTES, REQUEST_TIMEOUT,
};
