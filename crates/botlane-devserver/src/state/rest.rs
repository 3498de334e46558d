//! The REST lane's state: credential rows (opcode 638 and the exchange),
//! redirects, the files the `/api/files` routes serve, and the record of
//! every HTTP request.
//!
//! Everything here lives inside [`State`](crate::state::State), under the one
//! lock, so revoking a bot purges its rows atomically with its token.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use botlane_proto::payload::{AccountKind, RestMintReply};
use botlane_proto::ReplyCode;
use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};
use tokio::time::Instant;
use uuid::Uuid;

use crate::records::{HttpRecord, Ring};
use crate::Limits;

/// How long a one-time secret can be exchanged after its mint.
pub const SECRET_LIFETIME: Duration = Duration::from_secs(60);
/// How long a `verification` value stays valid unless changed with
/// [`DevServer::set_session_lifetime`](crate::DevServer::set_session_lifetime).
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Mints one bot may make per [`DEFAULT_MINT_WINDOW`] unless changed with
/// [`DevServer::set_mint_rate_limit`](crate::DevServer::set_mint_rate_limit).
pub const DEFAULT_MINT_LIMIT: u32 = 30;
/// The sliding window of the default mint rate limit.
pub const DEFAULT_MINT_WINDOW: Duration = Duration::from_secs(60);

/// Random bytes in a one-time secret and in a `verification` value.
const VALUE_BYTES: usize = 32;

/// The most ended `verification` values remembered, so that `/api` answers
/// `session_expired` rather than `unauthorized` for them; the first ended
/// are forgotten first (about 6 MiB at most: the set's table and the
/// order's ring of 32-byte hashes).
pub(crate) const MAX_ENDED: usize = 65_536;

/// Sessions (live or expired, not yet pruned) below which expired ones are
/// not looked for: pruning runs when the map has doubled since the last
/// prune, so it costs O(1) per exchange on average.
const PRUNE_FLOOR: usize = 1_024;

/// The SHA-256 of a secret or a `verification` value: the only form kept.
type ValueHash = [u8; 32];

fn hash_value(value: &str) -> ValueHash {
    Sha256::digest(value.as_bytes()).into()
}

/// A fresh random value, base64url without padding; `None` if the system
/// random source fails.
pub(super) fn random_value(bytes: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; bytes];
    OsRng.try_fill_bytes(&mut buf).ok()?;
    Some(buf)
}

/// A minted secret waiting for its exchange.
struct PendingSecret {
    row_id: String,
    bot_id: String,
    deadline: Instant,
}

/// An exchanged credential: the row behind a `verification` value.
struct Session {
    bot_id: String,
    expires: Instant,
}

/// Why `/auth/verify-session` refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExchangeRefusal {
    /// Unknown, already used, expired or not of this row.
    InvalidSecret,
    /// The random source failed.
    ServerError,
}

/// Why `/api` refused a `verification` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthRefusal {
    /// Missing, or never issued.
    Unauthorized,
    /// Issued, but past its expiry or purged.
    SessionExpired,
}

impl AuthRefusal {
    pub(crate) const fn error_code(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::SessionExpired => "session_expired",
        }
    }
}

/// The REST lane's part of the state.
pub(crate) struct RestState {
    /// `BOT_REST_CREDENTIALS`: whether opcode 638 mints.
    pub(crate) enabled: bool,
    mint_limit: u32,
    mint_window: Duration,
    recent_mints: HashMap<String, VecDeque<Instant>>,
    failures_to_inject: u32,
    session_lifetime: Duration,
    secrets: HashMap<ValueHash, PendingSecret>,
    sessions: HashMap<ValueHash, Session>,
    /// Expired sessions are looked for when `sessions` reaches this size.
    prune_at: usize,
    /// Values that were valid once; kept so that `/api` can tell
    /// `session_expired` from `unauthorized`: the newest [`MAX_ENDED`],
    /// in the order they ended.
    ended: HashSet<ValueHash>,
    ended_order: VecDeque<ValueHash>,
    pub(crate) mints: u64,
    pub(crate) exchanges: u64,
    pub(crate) http: Ring<HttpRecord>,
    redirects: HashMap<String, String>,
    pub(crate) files: Vec<StoredFile>,
}

impl RestState {
    pub(crate) fn new(enabled: bool, limits: &Limits) -> Self {
        Self {
            enabled,
            mint_limit: DEFAULT_MINT_LIMIT,
            mint_window: DEFAULT_MINT_WINDOW,
            recent_mints: HashMap::new(),
            failures_to_inject: 0,
            session_lifetime: DEFAULT_SESSION_LIFETIME,
            secrets: HashMap::new(),
            sessions: HashMap::new(),
            prune_at: PRUNE_FLOOR,
            ended: HashSet::new(),
            ended_order: VecDeque::new(),
            mints: 0,
            exchanges: 0,
            http: Ring::new(limits.http_records, limits.http_record_bytes),
            redirects: HashMap::new(),
            files: Vec::new(),
        }
    }

    pub(crate) fn set_mint_rate_limit(&mut self, max: u32, window: Duration) {
        self.mint_limit = max;
        self.mint_window = window;
        self.recent_mints.clear();
    }

    pub(crate) fn fail_next_mints(&mut self, count: u32) {
        self.failures_to_inject = count;
    }

    pub(crate) fn set_session_lifetime(&mut self, lifetime: Duration) {
        self.session_lifetime = lifetime;
    }

    /// Answers opcode 638 from account `me` of kind `kind`. The checks run
    /// in the order of the reply codes' precedence: flag, session kind, rate
    /// limit, injected failure.
    pub(crate) fn mint(&mut self, me: &str, kind: AccountKind, now: Instant) -> RestMintReply {
        let refuse = |code: ReplyCode| RestMintReply::new(code.code());
        if !self.enabled {
            return refuse(ReplyCode::FlagOff);
        }
        if kind != AccountKind::Bot {
            return refuse(ReplyCode::NotBot);
        }
        let window = self.mint_window;
        let recent = self.recent_mints.entry(me.to_owned()).or_default();
        while recent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= window)
        {
            recent.pop_front();
        }
        if recent.len() >= usize::try_from(self.mint_limit).unwrap_or(usize::MAX) {
            return refuse(ReplyCode::RateLimited);
        }
        if self.failures_to_inject > 0 {
            self.failures_to_inject -= 1;
            return refuse(ReplyCode::ServerError);
        }
        let Some(secret) = random_value(VALUE_BYTES) else {
            tracing::error!("the system random source failed: mint refused");
            return refuse(ReplyCode::ServerError);
        };
        let secret = URL_SAFE_NO_PAD.encode(secret);
        recent.push_back(now);
        self.secrets.retain(|_, s| s.deadline > now);
        let row_id = Uuid::new_v4().hyphenated().to_string();
        self.secrets.insert(
            hash_value(&secret),
            PendingSecret {
                row_id: row_id.clone(),
                bot_id: me.to_owned(),
                deadline: now + SECRET_LIFETIME,
            },
        );
        self.mints += 1;
        tracing::info!(bot = %me, row = %row_id, "rest credential minted");
        RestMintReply::new(0)
            .with_secret(secret)
            .with_row_id(row_id)
            .with_bot_id(me)
    }

    /// Exchanges a secret for a `verification` value and its lifetime in
    /// seconds. A secret is consumed by its first presentation, whether or
    /// not the rest of the request matches, so it can never be tried twice.
    pub(crate) fn exchange(
        &mut self,
        secret: &str,
        row_id: &str,
        now: Instant,
    ) -> Result<(String, u64), ExchangeRefusal> {
        let pending = self
            .secrets
            .remove(&hash_value(secret))
            .ok_or(ExchangeRefusal::InvalidSecret)?;
        if pending.deadline <= now || pending.row_id != row_id {
            return Err(ExchangeRefusal::InvalidSecret);
        }
        let value = random_value(VALUE_BYTES).ok_or(ExchangeRefusal::ServerError)?;
        let value = URL_SAFE_NO_PAD.encode(value);
        // A bot that exchanges and never presents its old values would
        // otherwise grow the map by one entry per exchange, forever.
        if self.sessions.len() >= self.prune_at {
            self.prune(now);
        }
        self.sessions.insert(
            hash_value(&value),
            Session {
                bot_id: pending.bot_id.clone(),
                // A lifetime past what the clock can name is forever.
                expires: crate::limits::deadline_from(now, self.session_lifetime),
            },
        );
        self.exchanges += 1;
        tracing::info!(bot = %pending.bot_id, row = %pending.row_id, "rest credential exchanged");
        Ok((value, self.session_lifetime.as_secs()))
    }

    /// The bot a `verification` value authenticates.
    pub(crate) fn authenticate(
        &mut self,
        value: Option<&str>,
        now: Instant,
    ) -> Result<String, AuthRefusal> {
        let hash = hash_value(value.ok_or(AuthRefusal::Unauthorized)?);
        match self.sessions.get(&hash) {
            Some(session) if session.expires > now => Ok(session.bot_id.clone()),
            Some(_) => {
                self.sessions.remove(&hash);
                self.end(hash);
                Err(AuthRefusal::SessionExpired)
            }
            None if self.ended.contains(&hash) => Err(AuthRefusal::SessionExpired),
            None => Err(AuthRefusal::Unauthorized),
        }
    }

    /// Deletes every row of a bot, pending secrets and sessions alike;
    /// returns how many there were.
    pub(crate) fn purge(&mut self, bot_id: &str) -> usize {
        let before = self.secrets.len() + self.sessions.len();
        self.secrets.retain(|_, s| s.bot_id != bot_id);
        let ended: Vec<ValueHash> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.bot_id == bot_id)
            .map(|(hash, _)| *hash)
            .collect();
        for hash in ended {
            self.sessions.remove(&hash);
            self.end(hash);
        }
        before - self.secrets.len() - self.sessions.len()
    }

    /// Ends every expired session, and sets the size of the next prune.
    fn prune(&mut self, now: Instant) {
        let expired: Vec<ValueHash> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.expires <= now)
            .map(|(hash, _)| *hash)
            .collect();
        for hash in expired {
            self.sessions.remove(&hash);
            self.end(hash);
        }
        self.prune_at = (2 * self.sessions.len()).max(PRUNE_FLOOR);
    }

    /// Remembers that `hash` was valid once, forgetting the first ended
    /// value when [`MAX_ENDED`] are remembered (before the new one is
    /// added, so neither collection grows past the cap).
    fn end(&mut self, hash: ValueHash) {
        if self.ended.contains(&hash) {
            return;
        }
        if self.ended_order.len() == MAX_ENDED
            && let Some(first) = self.ended_order.pop_front()
        {
            self.ended.remove(&first);
        }
        self.ended.insert(hash);
        self.ended_order.push_back(hash);
    }

    pub(crate) fn redirect(&mut self, path: &str, to: &str) {
        self.redirects.insert(path.to_owned(), to.to_owned());
    }

    pub(crate) fn redirect_for(&self, path: &str) -> Option<&str> {
        self.redirects.get(path).map(String::as_str)
    }
}

/// Random bytes in a file's IV.
const IV_BYTES: usize = 12;

/// A file the `/api/files` routes serve.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredFile {
    /// Its id (a UUID v4 unless configured).
    pub id: String,
    /// The server (room) holding it.
    pub server_id: String,
    /// Its name.
    pub name: String,
    /// Its content, served as is by the download route.
    pub bytes: Vec<u8>,
    /// Its IV, base64 (standard alphabet, padded), sent in `X-File-IV`.
    pub iv: String,
}

impl RestState {
    /// Stores a file with a fresh IV; `None` if the random source fails.
    pub(crate) fn add_file(
        &mut self,
        server_id: &str,
        name: &str,
        bytes: Vec<u8>,
        id: Option<&str>,
    ) -> Option<String> {
        let iv = STANDARD.encode(random_value(IV_BYTES)?);
        let id = id.map_or_else(|| Uuid::new_v4().hyphenated().to_string(), str::to_owned);
        self.files.push(StoredFile {
            id: id.clone(),
            server_id: server_id.to_owned(),
            name: name.to_owned(),
            bytes,
            iv,
        });
        Some(id)
    }

    pub(crate) fn file(&self, file_id: &str) -> Option<&StoredFile> {
        self.files.iter().find(|f| f.id == file_id)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn enabled() -> RestState {
        RestState::new(true, &Limits::default())
    }

    #[test]
    fn refusals_follow_their_precedence() {
        let now = Instant::now();
        let mut off = RestState::new(false, &Limits::default());
        assert_eq!(off.mint("u", AccountKind::User, now).code, -7);
        let mut rest = enabled();
        assert_eq!(rest.mint("u", AccountKind::User, now).code, -1);
        rest.set_mint_rate_limit(1, Duration::from_secs(60));
        rest.fail_next_mints(1);
        assert_eq!(rest.mint("b", AccountKind::Bot, now).code, -2);
        assert_eq!(rest.mint("b", AccountKind::Bot, now).code, 0);
        assert_eq!(rest.mint("b", AccountKind::Bot, now).code, -9);
        // The window slides: one window later the bot may mint again.
        assert_eq!(
            rest.mint("b", AccountKind::Bot, now + Duration::from_secs(60))
                .code,
            0
        );
        assert_eq!(rest.mints, 2);
    }

    #[test]
    fn only_hashes_are_kept_and_a_secret_works_once() {
        let now = Instant::now();
        let mut rest = enabled();
        let reply = rest.mint("b", AccountKind::Bot, now);
        let secret = reply.secret.unwrap();
        let row = reply.row_id.unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(&secret).unwrap().len(), VALUE_BYTES);
        assert!(rest.secrets.contains_key(&hash_value(&secret)));
        let (value, expires_in) = rest.exchange(&secret, &row, now).unwrap();
        assert_eq!(expires_in, 900);
        assert!(rest.sessions.contains_key(&hash_value(&value)));
        assert_eq!(
            rest.exchange(&secret, &row, now),
            Err(ExchangeRefusal::InvalidSecret)
        );
        assert_eq!(rest.authenticate(Some(&value), now).unwrap(), "b");
    }

    #[test]
    fn a_wrong_row_consumes_the_secret() {
        let now = Instant::now();
        let mut rest = enabled();
        let reply = rest.mint("b", AccountKind::Bot, now);
        let secret = reply.secret.unwrap();
        assert!(rest.exchange(&secret, "other-row", now).is_err());
        assert!(rest.exchange(&secret, &reply.row_id.unwrap(), now).is_err());
    }

    #[test]
    fn expiry_and_purge_give_session_expired() {
        let now = Instant::now();
        let mut rest = enabled();
        let mint = |rest: &mut RestState| {
            let reply = rest.mint("b", AccountKind::Bot, now);
            rest.exchange(&reply.secret.unwrap(), &reply.row_id.unwrap(), now)
                .unwrap()
                .0
        };
        rest.set_session_lifetime(Duration::from_secs(5));
        let short = mint(&mut rest);
        let later = now + Duration::from_secs(5);
        assert_eq!(
            rest.authenticate(Some(&short), later),
            Err(AuthRefusal::SessionExpired)
        );
        let other = mint(&mut rest);
        assert_eq!(rest.purge("b"), 1);
        assert_eq!(
            rest.authenticate(Some(&other), now),
            Err(AuthRefusal::SessionExpired)
        );
        assert_eq!(
            rest.authenticate(Some("never-issued"), now),
            Err(AuthRefusal::Unauthorized)
        );
        assert_eq!(rest.authenticate(None, now), Err(AuthRefusal::Unauthorized));
    }

    #[test]
    fn secrets_expire_after_their_deadline() {
        let now = Instant::now();
        let mut rest = enabled();
        let reply = rest.mint("b", AccountKind::Bot, now);
        assert_eq!(
            rest.exchange(
                &reply.secret.unwrap(),
                &reply.row_id.unwrap(),
                now + SECRET_LIFETIME
            ),
            Err(ExchangeRefusal::InvalidSecret)
        );
    }

    #[test]
    fn expired_sessions_and_ended_values_stay_bounded() {
        let start = Instant::now();
        let mut rest = enabled();
        rest.set_mint_rate_limit(u32::MAX, Duration::from_secs(60));
        rest.set_session_lifetime(Duration::from_secs(1));
        // 3,000 exchanges a second apart, none presented again: at most
        // one session is live at a time.
        let mut first = None;
        let mut most = 0;
        for i in 0..3_000 {
            let now = start + Duration::from_secs(i);
            let reply = rest.mint("b", AccountKind::Bot, now);
            let row = reply.row_id.unwrap();
            let (value, _) = rest.exchange(&reply.secret.unwrap(), &row, now).unwrap();
            first.get_or_insert(value);
            most = most.max(rest.sessions.len());
        }
        assert!(most <= PRUNE_FLOOR, "{most} sessions kept at once");
        // A pruned value was valid once: still `session_expired`.
        let later = start + Duration::from_secs(3_000);
        assert_eq!(
            rest.authenticate(first.as_deref(), later),
            Err(AuthRefusal::SessionExpired)
        );
        // A value ended twice is remembered once.
        let again = hash_value(first.as_deref().unwrap());
        let before = rest.ended_order.len();
        rest.end(again);
        assert_eq!(rest.ended_order.len(), before);
        // Ended values are remembered up to the cap, the first forgotten.
        for i in 0..MAX_ENDED + 10 {
            let mut hash = [0u8; 32];
            hash[..8].copy_from_slice(&(i as u64).to_le_bytes());
            rest.end(hash);
        }
        assert_eq!(rest.ended.len(), MAX_ENDED);
        assert_eq!(rest.ended_order.len(), MAX_ENDED);
        assert_eq!(
            rest.authenticate(first.as_deref(), later),
            Err(AuthRefusal::Unauthorized),
            "the oldest ended value is forgotten"
        );
    }
}
