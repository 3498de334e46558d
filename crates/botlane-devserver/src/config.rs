//! The service's start-up configuration, readable from a JSON file.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use serde::Deserialize;

use crate::DevServerError;

/// What the service starts with: where it listens and which accounts,
/// servers and channels exist from the start.
///
/// Build it in code:
///
/// ```
/// use botlane_devserver::{AccountConfig, ChannelConfig, DevServerConfig, ServerConfig};
///
/// let config = DevServerConfig::default()
///     .bot(AccountConfig::new("dicebot", "bot-token"))
///     .user(AccountConfig::new("alice", "alice-token"))
///     .server(ServerConfig::new("lobby").channel(
///         ChannelConfig::new("general").member("dicebot").member("alice"),
///     ));
/// assert_eq!(config.listen.port(), 0);
/// assert_eq!(config.servers[0].channels[0].members, ["dicebot", "alice"]);
/// ```
///
/// or read it from JSON (every field may be left out):
///
/// ```
/// let config = botlane_devserver::DevServerConfig::from_json_str(r#"{
///     "listen": "127.0.0.1:7700",
///     "bots": [{"name": "dicebot", "token": "bot-token"}],
///     "users": [{"name": "alice", "token": "alice-token"}],
///     "servers": [{"name": "lobby", "channels": [
///         {"name": "general", "members": ["dicebot", "alice"]}
///     ]}]
/// }"#)?;
/// assert_eq!(config.listen.port(), 7700);
/// # Ok::<(), botlane_devserver::DevServerError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct DevServerConfig {
    /// The address of the realtime listener; port 0 picks a free port.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Bot accounts.
    #[serde(default)]
    pub bots: Vec<AccountConfig>,
    /// Human accounts.
    #[serde(default)]
    pub users: Vec<AccountConfig>,
    /// Servers (rooms) with their channels.
    #[serde(default)]
    pub servers: Vec<ServerConfig>,
    /// Serve the playground page at `/playground` (see [`DevServerConfig::playground`]).
    #[serde(default)]
    pub playground: bool,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

impl Default for DevServerConfig {
    fn default() -> Self {
        Self {
            listen: default_listen(),
            bots: Vec::new(),
            users: Vec::new(),
            servers: Vec::new(),
            playground: false,
        }
    }
}

impl DevServerConfig {
    /// Reads a configuration from JSON text.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::from_json_str("{}")?;
    /// assert!(config.bots.is_empty());
    /// assert!(botlane_devserver::DevServerConfig::from_json_str(r#"{"bogus": 1}"#).is_err());
    /// # Ok::<(), botlane_devserver::DevServerError>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<Self, DevServerError> {
        serde_json::from_str(text).map_err(DevServerError::ConfigSyntax)
    }

    /// Reads a configuration from a JSON file.
    ///
    /// ```no_run
    /// let config = botlane_devserver::DevServerConfig::from_json_file("devserver.json")?;
    /// # Ok::<(), botlane_devserver::DevServerError>(())
    /// ```
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Self, DevServerError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| DevServerError::ConfigRead {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json_str(&text)
    }

    /// Sets the realtime listen address.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().listen(([127, 0, 0, 1], 7700).into());
    /// assert_eq!(config.listen.port(), 7700);
    /// ```
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// Adds a bot account.
    ///
    /// ```
    /// use botlane_devserver::{AccountConfig, DevServerConfig};
    /// let config = DevServerConfig::default().bot(AccountConfig::new("dicebot", "t"));
    /// assert_eq!(config.bots[0].name, "dicebot");
    /// ```
    pub fn bot(mut self, account: AccountConfig) -> Self {
        self.bots.push(account);
        self
    }

    /// Adds a human account.
    ///
    /// ```
    /// use botlane_devserver::{AccountConfig, DevServerConfig};
    /// let config = DevServerConfig::default().user(AccountConfig::new("alice", "t"));
    /// assert_eq!(config.users[0].name, "alice");
    /// ```
    pub fn user(mut self, account: AccountConfig) -> Self {
        self.users.push(account);
        self
    }

    /// Turns the playground on or off (off by default): a web page at
    /// `/playground`, on the realtime listener, where a person chats with the
    /// bots as the human account `you` in the channel `playground`. The
    /// listen address must then be a loopback address, because the page
    /// gets that account's token from `GET /playground/session`.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().playground(true);
    /// assert!(config.playground);
    /// ```
    pub fn playground(mut self, on: bool) -> Self {
        self.playground = on;
        self
    }

    /// Adds a server.
    ///
    /// ```
    /// use botlane_devserver::{DevServerConfig, ServerConfig};
    /// let config = DevServerConfig::default().server(ServerConfig::new("lobby"));
    /// assert_eq!(config.servers[0].name, "lobby");
    /// ```
    pub fn server(mut self, server: ServerConfig) -> Self {
        self.servers.push(server);
        self
    }
}

/// A predefined account: a name, its login token and optionally a fixed id.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AccountConfig {
    /// The display name; also how channel members refer to the account.
    pub name: String,
    /// The login token. The service keeps only its SHA-256.
    pub token: String,
    /// A fixed id (a UUID); a random UUID v4 when absent.
    #[serde(default)]
    pub id: Option<String>,
}

impl AccountConfig {
    /// An account with a random id.
    ///
    /// ```
    /// let bot = botlane_devserver::AccountConfig::new("dicebot", "bot-token");
    /// assert!(bot.id.is_none());
    /// ```
    pub fn new(name: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            token: token.into(),
            id: None,
        }
    }

    /// Fixes the account's id (must be a UUID).
    ///
    /// ```
    /// let bot = botlane_devserver::AccountConfig::new("dicebot", "t")
    ///     .id("6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55");
    /// assert!(bot.id.is_some());
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

impl fmt::Debug for AccountConfig {
    // The token is a credential: never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccountConfig")
            .field("name", &self.name)
            .field("token", &"[REDACTED]")
            .field("id", &self.id)
            .finish()
    }
}

/// A predefined server (room) and its channels.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The server's name.
    pub name: String,
    /// A fixed id; a random UUID v4 when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// Its channels.
    #[serde(default)]
    pub channels: Vec<ChannelConfig>,
}

impl ServerConfig {
    /// A server with no channels.
    ///
    /// ```
    /// assert!(botlane_devserver::ServerConfig::new("lobby").channels.is_empty());
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            id: None,
            channels: Vec::new(),
        }
    }

    /// Fixes the server's id.
    ///
    /// ```
    /// let server = botlane_devserver::ServerConfig::new("lobby").id("s-1");
    /// assert_eq!(server.id.as_deref(), Some("s-1"));
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Adds a channel.
    ///
    /// ```
    /// use botlane_devserver::{ChannelConfig, ServerConfig};
    /// let server = ServerConfig::new("lobby").channel(ChannelConfig::new("general"));
    /// assert_eq!(server.channels[0].name, "general");
    /// ```
    pub fn channel(mut self, channel: ChannelConfig) -> Self {
        self.channels.push(channel);
        self
    }
}

/// A predefined channel and its members.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ChannelConfig {
    /// The channel's name.
    pub name: String,
    /// A fixed id; a random UUID v4 when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// The members, by account name (bots and users alike).
    #[serde(default)]
    pub members: Vec<String>,
}

impl ChannelConfig {
    /// A channel with no members.
    ///
    /// ```
    /// assert!(botlane_devserver::ChannelConfig::new("general").members.is_empty());
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            id: None,
            members: Vec::new(),
        }
    }

    /// Fixes the channel's id.
    ///
    /// ```
    /// let channel = botlane_devserver::ChannelConfig::new("general").id("c-1");
    /// assert_eq!(channel.id.as_deref(), Some("c-1"));
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Adds a member by account name.
    ///
    /// ```
    /// let channel = botlane_devserver::ChannelConfig::new("general").member("alice");
    /// assert_eq!(channel.members, ["alice"]);
    /// ```
    pub fn member(mut self, account_name: impl Into<String>) -> Self {
        self.members.push(account_name.into());
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_tokens() {
        let config = DevServerConfig::default().bot(AccountConfig::new("b", "sekrit-token"));
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sekrit-token") && shown.contains("[REDACTED]"),
            "{shown}"
        );
    }

    #[test]
    fn json_defaults_and_errors() {
        let config =
            DevServerConfig::from_json_str(r#"{"users":[{"name":"a","token":"t"}]}"#).unwrap();
        assert_eq!(config.listen, default_listen());
        assert_eq!(config.users[0].name, "a");
        let err = DevServerConfig::from_json_str(r#"{"bots":[{"name":"b"}]}"#).unwrap_err();
        assert!(err.to_string().contains("token"), "{err}");
    }
}
