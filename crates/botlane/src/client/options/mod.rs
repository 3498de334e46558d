//! Client options: the spec's table plus the timings botlane needs.

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;

use crate::commands::limits::DEFAULT_COMMAND_PREFIX;
use crate::framework::cooldown::{Clock, SharedClock};
use crate::framework::dynamic_prefix::DynamicPrefix;
use crate::framework::settings::DEFAULT_HANDLER_TIMEOUT;

mod dynamic_prefix;
mod rest;
mod validate;

/// The service's public REST origin, used when `rest_url` is not set.
pub const DEFAULT_REST_URL: &str = "https://rest.botlane.chat";

/// How a [`Client`](crate::Client) connects. Built with [`ClientOptions::new`]
/// and the builder methods; checked by [`Client::new`](crate::Client::new).
///
/// ```
/// use std::time::Duration;
/// use botlane::ClientOptions;
///
/// let options = ClientOptions::new("bot-token", "bot.keystore", "ws://127.0.0.1:9000/ws")
///     .command_prefix("!")
///     .heartbeat_interval(Duration::from_secs(10));
/// assert_eq!(options.command_prefix, "!");
/// // The token never shows in Debug output.
/// assert!(!format!("{options:?}").contains("bot-token"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The long-lived bot token, presented once per login and nowhere else.
    pub token: SecretString,
    /// Where the keystore file lives (created on first run). Unused with
    /// `keystore_in_memory`.
    pub keystore_path: PathBuf,
    /// Keeps the bot's identity and channel keys in memory only, with no
    /// keystore file (off by default): for hosting platforms that run many
    /// bots in one process and keep no per-bot files; no file is read or
    /// written, so a first run costs no disk sync. The trade-off: a restart
    /// loses the identity and every channel key, so the bot logs in as a
    /// new identity and each channel's key must be shared with it again
    /// before it can read that channel. See
    /// [`Saver::in_memory`](crate::keystore::Saver::in_memory).
    pub keystore_in_memory: bool,
    /// The realtime wire's address: `wss://`, or `ws://` only for the hosts
    /// `localhost`, `127.0.0.1` and `::1` (unless `allow_insecure_ws`).
    pub url: String,
    /// Allows `ws://` (cleartext, token included) to a host other than
    /// `localhost`, `127.0.0.1` or `::1`: for a bot in a container talking to
    /// a devserver on its host. Off by default; when on, `Client::new` logs a
    /// warning.
    pub allow_insecure_ws: bool,
    /// The REST service's origin; `https` except for loopback hosts.
    pub rest_url: String,
    /// Per-frame and per-dispatch diagnostics at DEBUG level through `tracing`
    /// (opcodes, sizes, decisions; never payloads). Secrets are never logged either way.
    pub debug: bool,
    /// The text-lane prefix; non-empty, without whitespace, at most
    /// [`MAX_COMMAND_PREFIX_CHARS`](crate::framework::MAX_COMMAND_PREFIX_CHARS) (32)
    /// characters.
    pub command_prefix: String,
    /// Other text-lane prefixes the client also reads (none by default;
    /// poise's `additional_prefixes`); see
    /// [`additional_prefixes`](Self::additional_prefixes).
    pub additional_prefixes: Vec<String>,
    /// The closure choosing a message's main prefix, if set (shown in
    /// `Debug` only as set); see [`dynamic_prefix`](Self::dynamic_prefix).
    pub(crate) dynamic_prefix: Option<DynamicPrefix>,
    /// How often to send a heartbeat (15 s). Its reply is a frame from the
    /// service, which keeps a healthy but quiet session inside `idle_timeout`.
    pub heartbeat_interval: Duration,
    /// How long the session may go without any frame from the service before
    /// it is declared dead and replaced (30 s). A dead peer is noticed at
    /// most `idle_timeout` after the last frame it sent; it must be above
    /// `heartbeat_interval` (twice it leaves room for a slow round trip).
    pub idle_timeout: Duration,
    /// How long one connection attempt may take, TCP, TLS and the WebSocket
    /// handshake together (10 s). A timed-out attempt is a failed attempt.
    pub connect_timeout: Duration,
    /// How long [`login`](crate::Client::login) keeps trying when an attempt
    /// fails for a reason that may pass (60 s): the service unreachable
    /// (connection refused or reset, DNS, the connect timeout), busy or
    /// restarting (a 5xx or 429 answer to the upgrade, a login answered
    /// `-2` or `-9`), or the connection dropped or silent before the
    /// login's and menu's replies. Attempts are spaced by the reconnect
    /// backoff and any `Retry-After` the service sends; none starts after
    /// the deadline, and `login` returns the last attempt's error once the
    /// next could not start before it. A refused token or a keystore that
    /// cannot be opened fail at once. [`Duration::ZERO`]: one attempt.
    pub login_deadline: Duration,
    /// How long a request waits for its reply before failing (30 s); the
    /// login and menu replies too. A write to the service that stalls this
    /// long ends the connection.
    pub request_timeout: Duration,
    /// The first reconnect delay; it doubles per failed attempt.
    pub reconnect_initial: Duration,
    /// The longest reconnect delay.
    pub reconnect_max: Duration,
    /// How long a session must have stayed up for the next reconnect to
    /// start again from `reconnect_initial` (60 s); a session that ends
    /// sooner continues the backoff, so a service that drops every session
    /// right after login is not hammered.
    pub reconnect_reset_after: Duration,
    /// How long a keystore change (a channel key received or evicted) may
    /// wait in memory so that a burst of changes shares one write (500 ms,
    /// at most 1 s; zero writes after every change). Writes run off the
    /// runtime's workers; [`Client::close`](crate::Client::close) waits for
    /// the last one.
    pub keystore_save_window: Duration,
    /// How many message pushes may wait for dispatch (1024). When the queue
    /// is full (by this count or by [`push_queue_bytes`](Self::push_queue_bytes)),
    /// further messages are dropped and counted
    /// ([`ClientStats::pushes_dropped`](crate::ClientStats)), with a
    /// rate-limited warning. Replies never wait in it, and channel-key,
    /// ready and membership pushes, which share it in wire order, are never
    /// dropped.
    pub push_queue_capacity: usize,
    /// How many bytes the message pushes waiting for dispatch may hold
    /// (16 MiB; a message's bytes are those of its ids, sealed content and
    /// sidecar). A message that would take the queue past it is dropped and
    /// counted like one over [`push_queue_capacity`](Self::push_queue_capacity);
    /// while no message waits, any one is taken (a frame is at most 1 MiB).
    pub push_queue_bytes: usize,
    /// How many bytes the channel-key, ready and membership pushes waiting
    /// for dispatch may hold (64 MiB). These are never dropped (the service
    /// delivers each key once): a service that sends more while dispatch is
    /// behind is closed with 1008 and a stated reason, and the client
    /// reconnects. A well-behaved service sends a few KiB of keys at a time;
    /// a `ready` listing the 10,000 channels a session keeps holds under
    /// 16 MiB, and while no control push waits any one is taken. Lower it to
    /// bound what a hostile service can make each of many bots hold, but
    /// keep room for a `ready` beside what may still wait from the session
    /// before (it is kept across a reconnect): a budget too small for both
    /// closes each new session until dispatch has drained.
    pub control_queue_bytes: usize,
    /// How many command handlers may run at once (64; at most
    /// `tokio::sync::Semaphore::MAX_PERMITS`, `usize::MAX >> 3`). When all are busy,
    /// dispatch waits for one to finish before starting the next, in arrival
    /// order; messages wait in the push queue meanwhile.
    pub max_concurrent_handlers: usize,
    /// How long a command's checks and handler may run together before the
    /// handler's task is aborted and the failure reported with reason
    /// [`Timeout`](crate::CommandErrorReason::Timeout), its permit released
    /// (5 minutes; `None`: no limit). A command's own
    /// [`CommandSettings::timeout`](crate::framework::CommandSettings::timeout) replaces it.
    /// Error hooks run under the same limit.
    pub handler_timeout: Option<Duration>,
    /// How many error answers one user gets in one channel in a burst (3);
    /// see [`error_answer_limit`](Self::error_answer_limit).
    pub error_answer_burst: u32,
    /// After the burst, one error answer per user and channel per this
    /// interval (10 s).
    pub error_answer_interval: Duration,
    /// Extra root certificates (DER) trusted besides the webpki roots, by the
    /// realtime wire (`wss://`) and the REST lane alike: for a service with a
    /// private or self-signed CA.
    pub root_certificates: Vec<Vec<u8>>,
    /// How long one REST request (each attempt) may take before it fails
    /// with status 0.
    pub rest_timeout: Duration,
    /// How long before its expiry the REST credential is replaced (at most a
    /// quarter of its lifetime is given up); 60 s by default.
    pub rest_refresh_margin: Duration,
    /// The largest body `rest().json` parses, in bytes;
    /// [`DEFAULT_JSON_LIMIT`](crate::rest::DEFAULT_JSON_LIMIT) (16 MiB) by default.
    pub rest_json_limit: usize,
    /// The largest body `rest().binary` and `Response::bytes` read, in
    /// bytes; [`MAX_FILE_BYTES`](crate::rest::MAX_FILE_BYTES) (100 MiB) by
    /// default. Stream larger bodies with `Response::chunk`.
    pub rest_binary_limit: usize,
    /// The most REST requests in flight at once, each on an HTTP/1.1
    /// connection of its own to `rest_url`;
    /// [`DEFAULT_MAX_CONNECTIONS`](crate::rest::DEFAULT_MAX_CONNECTIONS)
    /// (32) by default. Further calls wait for a free one, within their
    /// timeout; see [`rest_max_connections`](Self::rest_max_connections).
    pub rest_max_connections: usize,
    /// The bot's owners' user ids (none by default); see
    /// [`owners`](Self::owners).
    pub owners: Vec<String>,
    /// Whether the owners skip every command's checks and cooldown (off by
    /// default); see [`skip_checks_for_owners`](Self::skip_checks_for_owners).
    pub skip_checks_for_owners: bool,
    /// The value of the `bot` label on every metric series of this client
    /// (none by default); see [`metrics_bot_label`](Self::metrics_bot_label).
    pub metrics_bot_label: Option<String>,
    /// Where the cooldowns and the error answers' rate limit read the
    /// time; see [`clock`](Self::clock).
    pub(crate) clock: SharedClock,
}

impl ClientOptions {
    /// Options with the spec's defaults (`rest_url` = [`DEFAULT_REST_URL`],
    /// `command_prefix` = `/`, `debug` off).
    pub fn new(
        token: impl Into<String>,
        keystore_path: impl Into<PathBuf>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            token: SecretString::from(token.into()),
            keystore_path: keystore_path.into(),
            keystore_in_memory: false,
            url: url.into(),
            rest_url: DEFAULT_REST_URL.to_owned(),
            debug: false,
            command_prefix: DEFAULT_COMMAND_PREFIX.to_owned(),
            additional_prefixes: Vec::new(),
            dynamic_prefix: None,
            allow_insecure_ws: false,
            heartbeat_interval: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            login_deadline: Duration::from_secs(60),
            request_timeout: Duration::from_secs(30),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(30),
            reconnect_reset_after: Duration::from_secs(60),
            keystore_save_window: Duration::from_millis(500),
            push_queue_capacity: 1024,
            push_queue_bytes: 16 * 1024 * 1024,
            control_queue_bytes: 64 * 1024 * 1024,
            max_concurrent_handlers: 64,
            handler_timeout: Some(DEFAULT_HANDLER_TIMEOUT),
            error_answer_burst: crate::framework::answer::DEFAULT_ANSWER_BURST,
            error_answer_interval: crate::framework::answer::DEFAULT_ANSWER_INTERVAL,
            root_certificates: Vec::new(),
            rest_timeout: Duration::from_secs(30),
            rest_refresh_margin: Duration::from_secs(60),
            rest_json_limit: crate::rest::DEFAULT_JSON_LIMIT,
            rest_binary_limit: crate::rest::MAX_FILE_BYTES,
            rest_max_connections: crate::rest::DEFAULT_MAX_CONNECTIONS,
            owners: Vec::new(),
            skip_checks_for_owners: false,
            metrics_bot_label: None,
            clock: SharedClock::default(),
        }
    }

    /// Sets `debug`.
    #[must_use]
    pub fn debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }

    /// Sets the text-lane prefix.
    #[must_use]
    pub fn command_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.command_prefix = prefix.into();
        self
    }

    /// Sets the other text-lane prefixes the client reads besides
    /// [`command_prefix`](Self::command_prefix) (poise's
    /// `additional_prefixes`), replacing any set before. A line is read
    /// under the longest prefix it starts with: with `!` and `!!`, `!!roll`
    /// is `roll`, not `!roll`. Everything the client writes (usage lines,
    /// the help) uses `command_prefix`; the help's list names the others
    /// once, and error answers are made safe against all of them. Each
    /// follows `command_prefix`'s rules; at most
    /// [`MAX_ADDITIONAL_PREFIXES`](crate::framework::MAX_ADDITIONAL_PREFIXES) (8),
    /// none twice nor equal to `command_prefix`, as
    /// [`Client::new`](crate::Client::new) checks.
    ///
    /// ```
    /// use botlane::ClientOptions;
    ///
    /// let options = ClientOptions::new("bot-token", "bot.keystore", "ws://127.0.0.1:9000/ws")
    ///     .command_prefix("!")
    ///     .additional_prefixes(["?", "!!"]);
    /// assert_eq!(options.additional_prefixes, ["?", "!!"]);
    /// ```
    #[must_use]
    pub fn additional_prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.additional_prefixes = prefixes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the heartbeat interval.
    #[must_use]
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    /// Sets the inbound-idle timeout (see [`idle_timeout`](Self::idle_timeout)).
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets the connect timeout (TCP, TLS and WebSocket handshake together).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets how long a first login keeps trying (see
    /// [`login_deadline`](Self::login_deadline)); [`Duration::ZERO`] for one
    /// attempt.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws");
    /// assert_eq!(options.login_deadline, Duration::from_secs(60));
    /// let once = options.login_deadline(Duration::ZERO);
    /// assert!(once.login_deadline.is_zero());
    /// ```
    #[must_use]
    pub fn login_deadline(mut self, deadline: Duration) -> Self {
        self.login_deadline = deadline;
        self
    }

    /// Allows `ws://` to a host that is not loopback (see
    /// [`allow_insecure_ws`](Self::allow_insecure_ws)).
    #[must_use]
    pub fn allow_insecure_ws(mut self, allow: bool) -> Self {
        self.allow_insecure_ws = allow;
        self
    }

    /// Sets how long a session must stay up before the reconnect backoff
    /// starts over.
    #[must_use]
    pub fn reconnect_reset_after(mut self, after: Duration) -> Self {
        self.reconnect_reset_after = after;
        self
    }

    /// Keeps the identity and channel keys in memory only (see the field
    /// `keystore_in_memory` for the trade-off).
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("token", "unused", "ws://127.0.0.1:9000/ws")
    ///     .keystore_in_memory(true);
    /// assert!(options.keystore_in_memory);
    /// ```
    #[must_use]
    pub fn keystore_in_memory(mut self, in_memory: bool) -> Self {
        self.keystore_in_memory = in_memory;
        self
    }

    /// Sets how long keystore changes may be coalesced before their write.
    #[must_use]
    pub fn keystore_save_window(mut self, window: Duration) -> Self {
        self.keystore_save_window = window;
        self
    }

    /// Sets how many message pushes may wait for dispatch.
    #[must_use]
    pub fn push_queue_capacity(mut self, capacity: usize) -> Self {
        self.push_queue_capacity = capacity;
        self
    }

    /// Sets how many bytes the message pushes waiting for dispatch may hold.
    #[must_use]
    pub fn push_queue_bytes(mut self, bytes: usize) -> Self {
        self.push_queue_bytes = bytes;
        self
    }

    /// Sets how many bytes the channel-key, ready and membership pushes
    /// waiting for dispatch may hold.
    #[must_use]
    pub fn control_queue_bytes(mut self, bytes: usize) -> Self {
        self.control_queue_bytes = bytes;
        self
    }

    /// Sets how many command handlers may run at once.
    #[must_use]
    pub fn max_concurrent_handlers(mut self, max: usize) -> Self {
        self.max_concurrent_handlers = max;
        self
    }

    /// Sets the request timeout.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets the reconnect delays (first and longest).
    #[must_use]
    pub fn reconnect_delays(mut self, initial: Duration, max: Duration) -> Self {
        self.reconnect_initial = initial;
        self.reconnect_max = max;
        self
    }

    /// Adds a root certificate (DER) for both lanes to trust: `wss://` on
    /// the realtime wire and `https` on the REST lane.
    ///
    /// ```
    /// # let der: Vec<u8> = Vec::new();
    /// let options = botlane::ClientOptions::new("t", "k", "wss://chat.example:8443/ws")
    ///     .rest_url("https://chat.example:8444")
    ///     .root_certificate(der);
    /// assert_eq!(options.root_certificates.len(), 1);
    /// ```
    #[must_use]
    pub fn root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(der.into());
        self
    }

    /// Sets how long a command's checks and handler may run (`None`: no
    /// limit).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws");
    /// assert_eq!(options.handler_timeout, Some(Duration::from_secs(300)));
    /// let options = options.handler_timeout(Duration::from_secs(20));
    /// assert_eq!(options.handler_timeout, Some(Duration::from_secs(20)));
    /// assert_eq!(options.handler_timeout(None).handler_timeout, None);
    /// ```
    #[must_use]
    pub fn handler_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.handler_timeout = timeout.into();
        self
    }

    /// Sets the rate limit of the answers to failed commands: per user and
    /// channel, `burst` answers, then one per `interval`. A burst of 0
    /// answers nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    ///     .error_answer_limit(1, Duration::from_secs(30));
    /// assert_eq!((options.error_answer_burst, options.error_answer_interval), (1, Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub fn error_answer_limit(mut self, burst: u32, interval: Duration) -> Self {
        self.error_answer_burst = burst;
        self.error_answer_interval = interval;
        self
    }

    /// Sets the clock the client's cooldowns and the error answers' rate
    /// limit read: [`TokioClock`](crate::framework::TokioClock) by default.
    /// A test gives a [`ManualClock`](crate::framework::ManualClock) and
    /// advances it to see a cooldown run out through the running client,
    /// over real sockets, where tokio's paused time cannot go. Handler
    /// timeouts, the session's timers and the REST lane stay on tokio's
    /// time. The client reads it once per decision: a cooldown to start,
    /// an error answer to send; never for a command without either. The
    /// default clock is read once per invocation: dispatch's reading at
    /// its start (its timeout and latency count from it) is also when its
    /// cooldown starts.
    ///
    /// ```
    /// use botlane::framework::ManualClock;
    /// let clock = ManualClock::new();
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").clock(clock.clone());
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn clock(mut self, clock: impl Clock + RefUnwindSafe + UnwindSafe) -> Self {
        self.clock = SharedClock::Injected(Arc::new(clock));
        self
    }

    /// Sets the bot's owners (poise's `FrameworkOptions::owners`), replacing
    /// any set before: the only users who may run a command set to
    /// [`owners_only`](crate::framework::CommandSettings::owners_only), and those who
    /// skip the checks with
    /// [`skip_checks_for_owners`](Self::skip_checks_for_owners). Ids are
    /// compared in canonical form (dashes removed, ASCII lower-case), as
    /// [`Check::allowed_users`](crate::framework::Check::allowed_users) compares them.
    /// [`Client::new`](crate::Client::new) refuses an id that is empty or
    /// only dashes (it would match no one), or one with whitespace (a list
    /// pasted whole, `"u1, u2"`), naming it and its place. Owners are
    /// the bot's own idea: nothing is sent to the service.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    ///     .owners(["3f2504e0-4f89-11d3-9a0c-0305e82c3301"])
    ///     .skip_checks_for_owners(true);
    /// assert_eq!(options.owners.len(), 1);
    /// ```
    #[must_use]
    pub fn owners<I, S>(mut self, user_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.owners = user_ids.into_iter().map(Into::into).collect();
        self
    }

    /// Lets the [`owners`](Self::owners) skip every command's checks, the
    /// client's ([`Client::add_check`](crate::Client::add_check)) and the
    /// command's, and its cooldown (poise's `skip_checks_for_owners`): an
    /// owner's invocation neither waits for a cooldown nor starts one, so
    /// no one else waits for the owner's tries. The arguments are still
    /// checked, and the handler's timeout still applies. Off by default.
    #[must_use]
    pub fn skip_checks_for_owners(mut self, skip: bool) -> Self {
        self.skip_checks_for_owners = skip;
        self
    }

    /// Labels every metric series of this client `bot="{label}"`, for a
    /// process that runs many bots and wants them apart; without it (the
    /// default) the clients of a process share each series, which then
    /// sums them. Each label multiplies the series a recorder keeps, so
    /// give one to a few bots, not to thousands; never an id a user
    /// chose. 1 to 64 characters, none of them a control character.
    /// Metrics and their names: `docs/operations.md`.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    ///     .metrics_bot_label("dicebot-eu-1");
    /// assert_eq!(options.metrics_bot_label.as_deref(), Some("dicebot-eu-1"));
    /// ```
    #[must_use]
    pub fn metrics_bot_label(mut self, label: impl Into<String>) -> Self {
        self.metrics_bot_label = Some(label.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ClientOptions {
        ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    }

    #[test]
    fn defaults_follow_the_spec() {
        let o = base();
        assert_eq!(o.rest_url, DEFAULT_REST_URL);
        assert_eq!(o.command_prefix, "/");
        assert!(!o.debug);
        assert!(o.validate().is_ok());
        assert_eq!(o.connect_timeout, Duration::from_secs(10));
        assert!(o.idle_timeout <= Duration::from_secs(30) && o.idle_timeout > o.heartbeat_interval);
        assert_eq!(o.reconnect_reset_after, Duration::from_secs(60));
    }

    #[test]
    fn the_metrics_bot_label_is_short_and_printable() {
        for ok in ["a", "dicebot-eu-1", &"é".repeat(64)] {
            assert!(base().metrics_bot_label(ok).validate().is_ok(), "{ok}");
        }
        for bad in ["", "a\nb", &"x".repeat(65)] {
            let err = base().metrics_bot_label(bad).validate().unwrap_err();
            assert!(
                err.to_string().starts_with(
                    "invalid client option `metrics_bot_label`: must be 1 to 64 characters, \
                     none of them a control character"
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn ws_is_for_loopback_only_unless_allowed() {
        for ok in [
            "wss://chat.example/ws",
            "wss://10.0.0.2:9000/ws",
            "ws://localhost:9000/ws",
            "ws://127.0.0.1:9000/ws",
            "ws://[::1]:9000/ws",
        ] {
            assert!(ClientOptions::new("t", "k", ok).validate().is_ok(), "{ok}");
        }
        for bad in [
            "ws://chat.example/ws",
            "ws://localhost.example.com/ws",
            "ws://127.0.0.1.nip.io/ws",
            "ws://127.0.0.2/ws",
            "ws://host.docker.internal:9000/ws",
        ] {
            let err = ClientOptions::new("t", "k", bad).validate().expect_err(bad);
            let text = err.to_string();
            assert!(
                text.starts_with("invalid client option `url`: must use wss unless the host is localhost, 127.0.0.1 or ::1"),
                "{bad}: {text}"
            );
            assert!(text.contains("allow_insecure_ws"), "{text}");
            let allowed = ClientOptions::new("t", "k", bad).allow_insecure_ws(true);
            assert!(allowed.validate().is_ok(), "{bad}");
        }
    }

    #[test]
    fn bad_options_are_named() {
        let cases = [
            (base().command_prefix(""), "command_prefix"),
            (base().command_prefix("! "), "command_prefix"),
            (base().command_prefix("!".repeat(33)), "command_prefix"),
            (ClientOptions::new("", "k", "ws://h/ws"), "token"),
            (ClientOptions::new("t", "k", "http://h/ws"), "url"),
            (ClientOptions::new("t", "k", "not a url"), "url"),
            (base().rest_url("::"), "rest_url"),
            (base().rest_timeout(Duration::ZERO), "rest_timeout"),
            (
                base().keystore_save_window(Duration::from_secs(2)),
                "keystore_save_window",
            ),
            (base().rest_json_limit(0), "rest_json_limit"),
            (base().rest_binary_limit(0), "rest_binary_limit"),
            (base().rest_max_connections(0), "rest_max_connections"),
            (
                base().heartbeat_interval(Duration::ZERO),
                "heartbeat_interval",
            ),
            (base().connect_timeout(Duration::ZERO), "connect_timeout"),
            (base().idle_timeout(Duration::from_secs(15)), "idle_timeout"),
            (base().push_queue_capacity(0), "push_queue_capacity"),
            (base().push_queue_bytes(0), "push_queue_bytes"),
            (base().control_queue_bytes(0), "control_queue_bytes"),
            (base().max_concurrent_handlers(0), "max_concurrent_handlers"),
            (
                base().max_concurrent_handlers(usize::MAX),
                "max_concurrent_handlers",
            ),
            (base().handler_timeout(Duration::ZERO), "handler_timeout"),
            (
                base().error_answer_limit(3, Duration::ZERO),
                "error_answer_interval",
            ),
            (base().owners(["u1", ""]), "owners"),
        ];
        for (options, name) in cases {
            let err = options.validate().expect_err(name).to_string();
            assert!(err.contains(name), "{err}");
        }
    }

    #[test]
    fn a_bad_owner_id_is_named_with_its_place() {
        assert!(base().owners(["u1", "U-2"]).validate().is_ok());
        // The longest prefix, in characters, not bytes.
        assert!(base().command_prefix("é".repeat(32)).validate().is_ok());
        let err = base()
            .command_prefix("é".repeat(33))
            .validate()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid client option `command_prefix`: must be at most 32 characters (it has 33)"
        );
        for (owners, named) in [
            (vec!["u1", ""], r#"owners[1] is """#),
            (vec!["u1, u2"], r#"owners[0] is "u1, u2""#),
            (vec!["u1", " u2"], r#"owners[1] is " u2""#),
            (vec!["--"], r#"owners[0] is "--""#),
        ] {
            let err = base().owners(owners).validate().unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "invalid client option `owners`: {named}: an owner id must be non-empty \
                     (dashes aside), without whitespace"
                )
            );
        }
    }

    #[test]
    fn each_additional_prefix_follows_the_prefix_rules_and_is_another_prefix() {
        let with = |prefixes: &[&str]| {
            base()
                .command_prefix("!")
                .additional_prefixes(prefixes.to_vec())
        };
        assert!(with(&[]).validate().is_ok());
        assert!(with(&["!!", "?", "bot"]).validate().is_ok());
        // The longest, in characters, not bytes.
        assert!(with(&[&"é".repeat(32)]).validate().is_ok());
        let eight: Vec<String> = (0..8).map(|i| format!("{i}!")).collect();
        assert!(base().additional_prefixes(eight.clone()).validate().is_ok());
        let nine = base().additional_prefixes(eight.into_iter().chain(["9!".to_owned()]));
        let long = "é".repeat(33);
        for (options, rule) in [
            (nine, "must hold at most 8 prefixes (it has 9)"),
            (with(&["?", ""]), "additional_prefixes[1] must not be empty"),
            (
                with(&[&long]),
                "additional_prefixes[0] must be at most 32 characters (it has 33)",
            ),
            (
                with(&["? "]),
                "additional_prefixes[0] must not contain whitespace",
            ),
            (
                with(&["?", "\u{a0}"]),
                "additional_prefixes[1] must not contain whitespace",
            ),
            (
                with(&["?", "!"]),
                r#"additional_prefixes[1] is "!", the command_prefix already"#,
            ),
            (
                with(&["?", "!!", "?"]),
                r#"additional_prefixes[2] is "?", as additional_prefixes[0] is"#,
            ),
        ] {
            let err = options.validate().unwrap_err().to_string();
            assert_eq!(
                err,
                format!("invalid client option `additional_prefixes`: {rule}")
            );
        }
    }
}
