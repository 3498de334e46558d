//! The service's start-up configuration, readable from a JSON file.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use serde::Deserialize;

use crate::{DevServerError, Limits};

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
///     "rest_listen": "127.0.0.1:7701",
///     "bot_rest_credentials": true,
///     "bots": [{"name": "dicebot", "token": "bot-token"}],
///     "users": [{"name": "alice", "token": "alice-token"}],
///     "servers": [{"name": "lobby", "channels": [
///         {"name": "general", "members": ["dicebot", "alice"]}
///     ], "files": [{"name": "notes.txt", "content": "hello, world"}]}]
/// }"#)?;
/// assert_eq!(config.listen.port(), 7700);
/// assert!(config.bot_rest_credentials && !config.rest_tls);
/// # Ok::<(), botlane_devserver::DevServerError>(())
/// ```
///
/// The REST lane is off unless `bot_rest_credentials` is set. The library
/// never reads the environment, so a test's outcome does not depend on the
/// shell it runs in; the binary applies [`BOT_REST_CREDENTIALS`] through
/// [`DevServerConfig::with_env`].
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
    /// Servers (rooms) with their channels and files.
    #[serde(default)]
    pub servers: Vec<ServerConfig>,
    /// The address of the REST (HTTP) listener; port 0 picks a free port.
    #[serde(default = "default_listen")]
    pub rest_listen: SocketAddr,
    /// The server flag `BOT_REST_CREDENTIALS`: whether opcode 638 mints REST
    /// credentials. Off by default, as on the real service; while off, 638
    /// answers `-7`.
    #[serde(default)]
    pub bot_rest_credentials: bool,
    /// Whether the REST listener serves https, with a certificate for
    /// `localhost`, `127.0.0.1` and `::1` signed by a root made at start
    /// (see [`DevServer::rest_root_certificate_der`](crate::DevServer::rest_root_certificate_der)).
    #[serde(default)]
    pub rest_tls: bool,
    /// Serve the playground page at `/playground` (see [`DevServerConfig::playground`]).
    #[serde(default)]
    pub playground: bool,
    /// Whether the realtime listener serves `wss` (and the playground
    /// https), with a certificate made at start like the REST listener's
    /// (see [`DevServer::realtime_root_certificate_der`](crate::DevServer::realtime_root_certificate_der)).
    #[serde(default)]
    pub realtime_tls: bool,
    /// Connection budgets, timeouts, queue and record caps.
    #[serde(default)]
    pub limits: Limits,
    /// Serve the HTTP admin endpoint (see [`DevServerConfig::admin`]).
    #[serde(default)]
    pub admin: bool,
    /// The address of the admin endpoint's listener: a loopback address;
    /// port 0 picks a free port.
    #[serde(default = "default_listen")]
    pub admin_listen: SocketAddr,
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
            rest_listen: default_listen(),
            bot_rest_credentials: false,
            rest_tls: false,
            playground: false,
            realtime_tls: false,
            limits: Limits::default(),
            admin: false,
            admin_listen: default_listen(),
        }
    }
}

/// The environment variable that sets the REST lane's server flag in the
/// binary (see [`DevServerConfig::with_env`]).
pub const BOT_REST_CREDENTIALS: &str = "BOT_REST_CREDENTIALS";

/// Reads a flag's value: `1`, `true`, `yes`, `on` turn it on; `0`, `false`,
/// `no`, `off` and the empty string turn it off (case and surrounding
/// blanks ignored); anything else is `None`.
///
/// ```
/// use botlane_devserver::parse_flag;
/// assert_eq!(parse_flag("1"), Some(true));
/// assert_eq!(parse_flag(" TRUE "), Some(true));
/// assert_eq!(parse_flag("0"), Some(false));
/// assert_eq!(parse_flag(""), Some(false));
/// assert_eq!(parse_flag("maybe"), None);
/// ```
pub fn parse_flag(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
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

    /// Applies the environment: [`BOT_REST_CREDENTIALS`], when set,
    /// overrides `bot_rest_credentials` (on or off). The binary calls it;
    /// [`DevServer::start`](crate::DevServer::start) never reads the
    /// environment.
    ///
    /// ```no_run
    /// let config = botlane_devserver::DevServerConfig::default().with_env()?;
    /// # Ok::<(), botlane_devserver::DevServerError>(())
    /// ```
    pub fn with_env(self) -> Result<Self, DevServerError> {
        let value = std::env::var_os(BOT_REST_CREDENTIALS);
        match value {
            None => Ok(self),
            Some(value) => self.with_env_value(Some(&value.to_string_lossy())),
        }
    }

    /// [`with_env`](Self::with_env) with the variable's value given rather
    /// than read: `None` when it is unset.
    ///
    /// ```
    /// use botlane_devserver::DevServerConfig;
    /// let on = DevServerConfig::default().with_env_value(Some("1"))?;
    /// assert!(on.bot_rest_credentials);
    /// let off = on.clone().with_env_value(Some("false"))?;
    /// assert!(!off.bot_rest_credentials);
    /// assert!(on.clone().with_env_value(None)?.bot_rest_credentials);
    /// assert!(on.with_env_value(Some("sometimes")).is_err());
    /// # Ok::<(), botlane_devserver::DevServerError>(())
    /// ```
    pub fn with_env_value(mut self, value: Option<&str>) -> Result<Self, DevServerError> {
        if let Some(value) = value {
            self.bot_rest_credentials = parse_flag(value).ok_or_else(|| {
                DevServerError::Config(format!(
                    "{BOT_REST_CREDENTIALS} must be 1/true/yes/on or 0/false/no/off, not {value:?}"
                ))
            })?;
        }
        Ok(self)
    }

    /// Sets the REST listen address.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().rest_listen(([127, 0, 0, 1], 7701).into());
    /// assert_eq!(config.rest_listen.port(), 7701);
    /// ```
    pub fn rest_listen(mut self, addr: SocketAddr) -> Self {
        self.rest_listen = addr;
        self
    }

    /// Sets the server flag `BOT_REST_CREDENTIALS` (off by default).
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().bot_rest_credentials(true);
    /// assert!(config.bot_rest_credentials);
    /// ```
    pub fn bot_rest_credentials(mut self, on: bool) -> Self {
        self.bot_rest_credentials = on;
        self
    }

    /// Serves the REST listener over https with a certificate made at start.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().rest_tls(true);
    /// assert!(config.rest_tls);
    /// ```
    pub fn rest_tls(mut self, on: bool) -> Self {
        self.rest_tls = on;
        self
    }

    /// Serves the realtime listener over `wss` with a certificate made at start.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().realtime_tls(true);
    /// assert!(config.realtime_tls);
    /// ```
    pub fn realtime_tls(mut self, on: bool) -> Self {
        self.realtime_tls = on;
        self
    }

    /// Sets the connection budgets, timeouts, queue and record caps.
    ///
    /// ```
    /// use botlane_devserver::{DevServerConfig, Limits};
    /// let config = DevServerConfig::default().limits(Limits::default().sessions(8));
    /// assert_eq!(config.limits.sessions, 8);
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
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

    /// Turns the HTTP admin endpoint on or off (off by default): the admin
    /// calls of [`DevServer`](crate::DevServer) as JSON routes under
    /// `/admin/` on a listener of their own at
    /// [`admin_listen`](Self::admin_listen), for clients in any language.
    /// Every request needs `Authorization: Bearer <token>` with the token
    /// made at start ([`DevServer::admin_token`](crate::DevServer::admin_token))
    /// and a `Host` naming the listener by a loopback name; the listen
    /// address must be a loopback address. `docs/protocol.md` lists the routes.
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().admin(true);
    /// assert!(config.admin);
    /// ```
    pub fn admin(mut self, on: bool) -> Self {
        self.admin = on;
        self
    }

    /// Sets the admin endpoint's listen address (a loopback address).
    ///
    /// ```
    /// let config = botlane_devserver::DevServerConfig::default().admin_listen(([127, 0, 0, 1], 7702).into());
    /// assert_eq!(config.admin_listen.port(), 7702);
    /// ```
    pub fn admin_listen(mut self, addr: SocketAddr) -> Self {
        self.admin_listen = addr;
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
    /// The files it holds, served by `/api/files`.
    #[serde(default)]
    pub files: Vec<FileConfig>,
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
            files: Vec::new(),
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

    /// Adds a file.
    ///
    /// ```
    /// use botlane_devserver::{FileConfig, ServerConfig};
    /// let server = ServerConfig::new("lobby").file(FileConfig::new("notes.txt", "hello"));
    /// assert_eq!(server.files[0].content, "hello");
    /// ```
    pub fn file(mut self, file: FileConfig) -> Self {
        self.files.push(file);
        self
    }
}

/// A predefined file of a server. Its IV is drawn at random at start.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FileConfig {
    /// The file's name.
    pub name: String,
    /// Its content, as text.
    pub content: String,
    /// A fixed id; a random UUID v4 when absent.
    #[serde(default)]
    pub id: Option<String>,
}

impl FileConfig {
    /// A file with a random id.
    ///
    /// ```
    /// let file = botlane_devserver::FileConfig::new("notes.txt", "hello");
    /// assert!(file.id.is_none());
    /// ```
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            content: content.into(),
            id: None,
        }
    }

    /// Fixes the file's id.
    ///
    /// ```
    /// let file = botlane_devserver::FileConfig::new("notes.txt", "hello").id("f1");
    /// assert_eq!(file.id.as_deref(), Some("f1"));
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
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
        assert!(!config.bot_rest_credentials && !config.rest_tls);
        assert_eq!(config.rest_listen, default_listen());
    }

    #[test]
    fn the_admin_endpoint_is_off_unless_asked_for() {
        let off = DevServerConfig::from_json_str("{}").unwrap();
        assert!(!off.admin);
        let on =
            DevServerConfig::from_json_str(r#"{"admin": true, "admin_listen": "127.0.0.1:7702"}"#)
                .unwrap();
        assert!(on.admin);
        assert_eq!(on.admin_listen, "127.0.0.1:7702".parse().unwrap());
    }

    #[test]
    fn the_env_value_overrides_the_file_both_ways() {
        let on = DevServerConfig::from_json_str(r#"{"bot_rest_credentials": true}"#).unwrap();
        assert!(
            on.clone()
                .with_env_value(None)
                .unwrap()
                .bot_rest_credentials
        );
        assert!(
            !on.clone()
                .with_env_value(Some("0"))
                .unwrap()
                .bot_rest_credentials
        );
        let off = DevServerConfig::default();
        assert!(
            off.clone()
                .with_env_value(Some("yes"))
                .unwrap()
                .bot_rest_credentials
        );
        let err = off.with_env_value(Some("2")).unwrap_err().to_string();
        assert!(
            err.contains(BOT_REST_CREDENTIALS) && err.contains("\"2\""),
            "{err}"
        );
    }
}
