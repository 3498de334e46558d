//! The admin routes: one per admin call of the `DevServer` handle, with the
//! same name and the same arguments as JSON, plus two read-only routes.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::actions::Actions;
use super::AdminError;
use crate::{Denial, DevServerError};

/// Every route, in the order `GET /admin` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    Index,
    State,
    AddBot,
    AddUser,
    CreateServer,
    CreateChannel,
    AddMember,
    RemoveMember,
    DenySends,
    DropConnections,
    RevokeBot,
    SetRestCredentials,
    SetMintRateLimit,
    FailNextMints,
    FailNextRequests,
    SetSessionLifetime,
    PurgeRestCredentials,
}

impl Route {
    pub(super) const ALL: [Self; 17] = [
        Self::Index,
        Self::State,
        Self::AddBot,
        Self::AddUser,
        Self::CreateServer,
        Self::CreateChannel,
        Self::AddMember,
        Self::RemoveMember,
        Self::DenySends,
        Self::DropConnections,
        Self::RevokeBot,
        Self::SetRestCredentials,
        Self::SetMintRateLimit,
        Self::FailNextMints,
        Self::FailNextRequests,
        Self::SetSessionLifetime,
        Self::PurgeRestCredentials,
    ];

    /// The route's name, the `DevServer` method it calls; for the logs too.
    pub(super) const fn name(self) -> &'static str {
        match self {
            Self::Index => "index",
            Self::State => "state",
            Self::AddBot => "add_bot",
            Self::AddUser => "add_user",
            Self::CreateServer => "create_server",
            Self::CreateChannel => "create_channel",
            Self::AddMember => "add_member",
            Self::RemoveMember => "remove_member",
            Self::DenySends => "deny_sends",
            Self::DropConnections => "drop_connections",
            Self::RevokeBot => "revoke_bot",
            Self::SetRestCredentials => "set_rest_credentials",
            Self::SetMintRateLimit => "set_mint_rate_limit",
            Self::FailNextMints => "fail_next_mints",
            Self::FailNextRequests => "fail_next_requests",
            Self::SetSessionLifetime => "set_session_lifetime",
            Self::PurgeRestCredentials => "purge_rest_credentials",
        }
    }

    pub(super) fn path(self) -> String {
        match self {
            Self::Index => "/admin".to_owned(),
            other => format!("/admin/{}", other.name()),
        }
    }

    pub(super) fn method(self) -> Method {
        match self {
            Self::Index | Self::State => Method::GET,
            _ => Method::POST,
        }
    }

    /// The route serving `path`, if any.
    pub(super) fn find(path: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.path() == path)
    }

    /// Runs the route with its request body (empty reads as `{}`).
    pub(super) fn run(self, actions: &Actions, body: &Bytes) -> Result<Value, AdminError> {
        match self {
            Self::Index => {
                let routes: Vec<Value> = Self::ALL
                    .iter()
                    .map(|r| json!({"method": r.method().as_str(), "path": r.path()}))
                    .collect();
                Ok(json!({ "routes": routes }))
            }
            Self::State => Ok(json!(actions.summary())),
            Self::AddBot => {
                let Name { name } = read(self, body)?;
                let bot = actions.add_bot(&name);
                Ok(json!({"id": bot.id, "token": bot.token}))
            }
            Self::AddUser => {
                let Name { name } = read(self, body)?;
                let user = actions.add_user(&name);
                Ok(json!({"id": user.id, "token": user.token}))
            }
            Self::CreateServer => {
                let Name { name } = read(self, body)?;
                Ok(json!({"id": actions.create_server(&name)}))
            }
            Self::CreateChannel => {
                let NewChannel { server_id, name } = read(self, body)?;
                Ok(json!({"id": actions.create_channel(&server_id, &name)?}))
            }
            Self::AddMember => {
                let m: Membership = read(self, body)?;
                actions.add_member(&m.channel_id, &m.account_id)?;
                Ok(json!({}))
            }
            Self::RemoveMember => {
                let m: Membership = read(self, body)?;
                actions.remove_member(&m.channel_id, &m.account_id)?;
                Ok(json!({}))
            }
            Self::DenySends => {
                let DenySends { channel_id, denial } = read(self, body)?;
                actions.deny_sends(&channel_id, denial.map(DenialName::denial))?;
                Ok(json!({}))
            }
            Self::DropConnections => {
                let Nothing {} = read(self, body)?;
                actions.drop_connections();
                Ok(json!({}))
            }
            Self::RevokeBot => {
                let BotId { bot_id } = read(self, body)?;
                actions.revoke_bot(&bot_id)?;
                Ok(json!({}))
            }
            Self::SetRestCredentials => {
                let Flag { on } = read(self, body)?;
                actions.set_rest_credentials(on);
                Ok(json!({}))
            }
            Self::SetMintRateLimit => {
                let MintRateLimit { max, window_ms } = read(self, body)?;
                actions.set_mint_rate_limit(max, Duration::from_millis(window_ms));
                Ok(json!({}))
            }
            Self::FailNextMints => {
                let Count { count } = read(self, body)?;
                actions.fail_next_mints(count);
                Ok(json!({}))
            }
            Self::FailNextRequests => {
                let FailRequests { op, count } = read(self, body)?;
                actions.fail_next_requests(op, count)?;
                Ok(json!({}))
            }
            Self::SetSessionLifetime => {
                let Lifetime { lifetime_ms } = read(self, body)?;
                actions.set_session_lifetime(Duration::from_millis(lifetime_ms));
                Ok(json!({}))
            }
            Self::PurgeRestCredentials => {
                let BotId { bot_id } = read(self, body)?;
                Ok(json!({"purged": actions.purge_rest_credentials(&bot_id)?}))
            }
        }
    }
}

/// The body of `route` as `T`: a JSON object with exactly `T`'s fields
/// (unknown or repeated fields refused); an empty body reads as `{}`.
fn read<T: DeserializeOwned>(route: Route, body: &Bytes) -> Result<T, AdminError> {
    let text: &[u8] = if body.is_empty() { b"{}" } else { body };
    serde_json::from_slice(text).map_err(|e| {
        AdminError::bad_request(format!(
            "the body of {} is not what it takes: {}",
            route.name(),
            crate::realtime::handlers::describe(&e)
        ))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Name {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewChannel {
    server_id: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Membership {
    channel_id: String,
    account_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DenySends {
    channel_id: String,
    /// Absent or `null`: sends are accepted again.
    #[serde(default)]
    denial: Option<DenialName>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum DenialName {
    NoPermission,
    UnknownChannel,
    RateLimited,
}

impl DenialName {
    const fn denial(self) -> Denial {
        match self {
            Self::NoPermission => Denial::NoPermission,
            Self::UnknownChannel => Denial::UnknownChannel,
            Self::RateLimited => Denial::RateLimited,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BotId {
    bot_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Flag {
    on: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MintRateLimit {
    max: u32,
    window_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Count {
    count: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailRequests {
    op: u16,
    count: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lifetime {
    lifetime_ms: u64,
}

impl From<DevServerError> for AdminError {
    fn from(e: DevServerError) -> Self {
        let (status, code) = match &e {
            DevServerError::UnknownAccount(_) => (StatusCode::NOT_FOUND, "unknown_account"),
            DevServerError::UnknownServer(_) => (StatusCode::NOT_FOUND, "unknown_server"),
            DevServerError::UnknownChannel(_) => (StatusCode::NOT_FOUND, "unknown_channel"),
            DevServerError::NotABot(_) => (StatusCode::BAD_REQUEST, "not_a_bot"),
            DevServerError::NotFailable(_) => (StatusCode::BAD_REQUEST, "not_failable"),
            DevServerError::Random => (StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
            _ => (StatusCode::BAD_REQUEST, "bad_request"),
        };
        Self {
            status,
            code,
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_its_own_path_and_is_found_by_it() {
        for route in Route::ALL {
            assert_eq!(Route::find(&route.path()), Some(route));
        }
        assert_eq!(Route::find("/admin/"), None);
        assert_eq!(Route::find("/admin/add_bot/"), None);
        assert_eq!(Route::find("/add_bot"), None);
    }

    /// Every admin action (`actions.rs`, behind the `DevServer` methods)
    /// has its route of the same name, so an action added for tests in Rust
    /// is there for tests in any language too.
    #[test]
    fn every_admin_action_has_a_route() {
        // Read from the source: the actions are plain methods, not a list.
        let actions: Vec<&str> = include_str!("actions.rs")
            .lines()
            .filter_map(|line| line.trim().strip_prefix("pub(crate) fn "))
            .map(|rest| rest.split(['(', '<']).next().unwrap_or(rest))
            .filter(|name| !["new", "summary"].contains(name))
            .collect();
        assert!(
            actions.len() >= 15,
            "actions.rs lost its actions: {actions:?}"
        );
        let routes: Vec<&str> = Route::ALL.iter().map(|route| route.name()).collect();
        for action in actions {
            assert!(
                routes.contains(&action),
                "the admin action {action} has no route in admin/routes.rs"
            );
        }
    }

    #[test]
    fn bodies_are_strict_and_empty_means_no_fields() {
        let body = |text: &'static str| Bytes::from_static(text.as_bytes());
        assert!(read::<Nothing>(Route::DropConnections, &body("")).is_ok());
        let err = read::<Name>(Route::AddBot, &body("")).err().unwrap();
        assert_eq!(
            err.message,
            "the body of add_bot is not what it takes: missing field `name`"
        );
        let err = read::<Name>(Route::AddBot, &body(r#"{"name":"a","nmae":"b"}"#))
            .err()
            .unwrap();
        assert!(
            err.message.contains("unknown field `nmae`"),
            "{}",
            err.message
        );
        let err = read::<Name>(Route::AddBot, &body(r#"{"name":"a","name":"b"}"#))
            .err()
            .unwrap();
        assert!(
            err.message.contains("duplicate field `name`"),
            "{}",
            err.message
        );
        let err = read::<Count>(Route::FailNextMints, &body(r#"{"count":"sekrit"}"#))
            .err()
            .unwrap();
        assert!(!err.message.contains("sekrit"), "{}", err.message);
    }
}
