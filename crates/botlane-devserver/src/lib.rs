//! botlane-devserver: a reference chat service for developing and testing
//! botlane bots.
#![deny(missing_docs)]

mod config;
mod emoji;
mod error;
mod handlers;
mod menu;
mod server;
mod state;
mod test_user;

pub use config::{AccountConfig, ChannelConfig, DevServerConfig, ServerConfig};
pub use emoji::EMOJI_CATALOG;
pub use error::{DevServerError, WaitTimeout};
pub use handlers::{DEFAULT_HISTORY, MAX_CONTENT_BYTES, MAX_HISTORY};
pub use menu::{MenuRejection, StoredCommand, StoredMenu, StoredOption};
pub use server::{DevServer, MAX_FRAME_BYTES};
pub use state::{
    BotAccount, Denial, Direction, FrameRecord, NotificationRecord, StateView, UserAccount,
};
pub use test_user::{ReceivedMessage, TestUser, TestUserError, REQUEST_TIMEOUT};
