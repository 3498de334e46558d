//! botlane against hostile services, in one binary: fake realtime services
//! on loopback (`tests/peer`) that stall, flood, garble, grow the bot's
//! state without end or drop it at the worst moment, the key and membership
//! rules against a scripted service, and `wss://` against a TLS service of
//! its own. Every wait is bounded and every assertion structural.
//!
//! One test (`wss::a_process_default_provider_does_not_matter`) installs a
//! crippled process-wide default rustls provider. Nothing here uses that
//! default: botlane names ring itself (which that test shows) and the fake
//! services here name it too, so the other tests run beside it unchanged.
#![allow(clippy::unwrap_used)]

#[path = "../peer/mod.rs"]
mod peer;

mod hostile;
mod hostile_control;
mod hostile_crowds;
mod hostile_membership;
mod hostile_pings;
mod hostile_reconnect;
mod hostile_reconnect_ends;
mod hostile_reconnect_order;
mod hostile_stalls;
mod hostile_unanswered;
mod membership;
mod wss;
