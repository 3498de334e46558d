//! The payload of every exchange on the realtime wire, one file per
//! exchange: login and ready (ops 10, 11), the menu (20), messages (30, 32,
//! 33, 40), membership (34, 35, 60, 61), keys (50, 51, 52), the emoji
//! catalog (240), the REST lane's mint (638), and the replies that carry
//! only a code. See `docs/protocol.md`.
//!
//! Each is built with `new` and `with_<field>` (see [Building a
//! payload](crate#building-a-payload)).
//!
//! Types whose fields hold a token or a secret ([`LoginRequest`],
//! [`RestMintReply`]) redact them in `Debug`.

mod emoji;
mod keys;
mod login;
mod membership;
mod menu;
mod message;
mod reply;
mod rest;

pub use emoji::{Emoji, EmojiReply};
pub use keys::{ChannelKeyPush, KeyShare, PublicKeyReply, PublicKeyRequest};
pub use login::{AccountKind, LoginReply, LoginRequest, Ready};
pub use membership::{
    ChannelAdded, ChannelInfo, ChannelRemoved, JoinRequest, MembersReply, MembersRequest,
};
pub use menu::MenuPublish;
pub use message::{
    HistoryReply, HistoryRequest, MessageCreate, Notification, SendReply, SendRequest, WireMessage,
};
pub use reply::{CodeReply, Empty};
pub use rest::RestMintReply;
