//! The playground: a web page, served next to `/ws`, where a person chats
//! with their bot as a human member of a channel.
//!
//! The page is plain HTML, CSS and JavaScript embedded in the binary. It is
//! an ordinary client of the realtime wire: it logs in with its own X25519
//! identity, creates the channel key, wraps it to every member and seals
//! what it sends with WebCrypto, so the service still relays ciphertext only.
//!
//! Besides the page and its two assets, the playground adds two JSON
//! endpoints that exist only when it is on:
//!
//! * `GET /playground/session`: the login token of the playground's human
//!   account (`you`) and the id of its channel. This hands a credential to
//!   whoever asks, which is why the playground is refused on a non-loopback
//!   listen address and every playground route answers only requests whose
//!   `Host` is a loopback name (a DNS-rebinding page gets `403`), by the
//!   admin endpoint's rule (`400` for more than one `Host`; the authority
//!   of an absolute-form request line counts as its `Host`).
//! * `GET /playground/menus`: the bots of the playground channel with their
//!   stored menus in canonical form (menus are plaintext by the spec).
//!
//! Every bot account joins the playground channel: those configured at start
//! at once, those added later on the next request to either endpoint (the
//! page polls the menus), so a bot made with [`DevServer::add_bot`](crate::DevServer::add_bot) shows up
//! without a reload.

use std::sync::Arc;

use axum::extract::{Request, State as AxumState};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use botlane_proto::payload::AccountKind;
use serde_json::{json, Value};

use crate::admin::{addressed_here, HostRefusal};
use crate::state::{new_token, Shared, State};
use crate::{DevServerConfig, DevServerError, StoredMenu};

/// The name of the human account the page logs in as.
pub(crate) const USER_NAME: &str = "you";
/// The name of the server and of the channel the page chats in.
pub(crate) const CHANNEL_NAME: &str = "playground";

const INDEX_HTML: &str = include_str!("static/index.html");
const APP_JS: &str = include_str!("static/app.js");
const STYLE_CSS: &str = include_str!("static/style.css");

/// Nothing outside this origin: no CDN, no inline script, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// The playground's account and channel, made when the service starts.
pub(crate) struct Playground {
    user_id: String,
    token: String,
    pub(crate) channel_id: String,
}

impl std::fmt::Debug for Playground {
    // The token is a credential: never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Playground")
            .field("user_id", &self.user_id)
            .field("token", &"[REDACTED]")
            .field("channel_id", &self.channel_id)
            .finish()
    }
}

impl Playground {
    /// Makes the account `you` (or reuses a configured user of that name),
    /// a server and channel `playground`, and puts `you` and every bot in it.
    pub(crate) fn setup(
        config: &DevServerConfig,
        shared: &Shared,
    ) -> Result<Arc<Self>, DevServerError> {
        if !config.listen.ip().is_loopback() {
            return Err(DevServerError::Config(format!(
                "the playground hands out a login token, so it is served on loopback only, \
                 not on {}",
                config.listen
            )));
        }
        if config.bots.iter().any(|b| b.name == USER_NAME) {
            return Err(DevServerError::Config(format!(
                "the playground's human account is named {USER_NAME:?}; a bot has that name"
            )));
        }
        let configured = config.users.iter().find(|u| u.name == USER_NAME);
        shared.update(|state| {
            let (user_id, token) = match configured {
                Some(user) => {
                    let id = state
                        .account_by_token(&user.token)
                        .map(|a| a.id.clone())
                        .ok_or_else(|| {
                            DevServerError::Config(format!(
                                "the configured user {USER_NAME:?} has no account"
                            ))
                        })?;
                    (id, user.token.clone())
                }
                None => {
                    let token = new_token("usr");
                    let id = state.add_account(USER_NAME, AccountKind::User, &token, None)?;
                    (id, token)
                }
            };
            let server_id = state.create_server(CHANNEL_NAME, None)?;
            let channel_id = state.create_channel(&server_id, CHANNEL_NAME, None)?;
            state.add_member(&channel_id, &user_id)?;
            let playground = Self {
                user_id,
                token,
                channel_id,
            };
            playground.enlist_bots(state);
            Ok(Arc::new(playground))
        })
    }

    /// Adds every bot account that is not yet a member to the channel.
    fn enlist_bots(&self, state: &mut State) {
        let mut bots: Vec<_> = state
            .accounts()
            .filter(|a| a.kind == AccountKind::Bot && !a.revoked)
            .map(|a| (a.created, a.id.clone()))
            .collect();
        bots.sort();
        for (_, bot) in bots {
            // The channel and the account both exist: this cannot fail.
            let _ = state.add_member(&self.channel_id, &bot);
        }
    }
}

/// The routes of the playground, to be merged into the realtime router.
pub(crate) fn router(playground: Arc<Playground>, shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/playground", get(index))
        .route("/playground/", get(index))
        .route("/playground/app.js", get(app_js))
        .route("/playground/style.css", get(style_css))
        .route("/playground/session", get(session))
        .route("/playground/menus", get(menus))
        .route_layer(middleware::from_fn(host_check))
        .with_state(App { playground, shared })
}

#[derive(Clone)]
struct App {
    playground: Arc<Playground>,
    shared: Arc<Shared>,
}

/// What every playground route checks first: the host the request names
/// (the admin endpoint's rule) is a loopback one.
async fn host_check(request: Request, next: Next) -> Response {
    match addressed_here(request.uri(), request.headers(), is_loopback_host) {
        Ok(()) => next.run(request).await,
        Err(HostRefusal::Repeated) => (
            StatusCode::BAD_REQUEST,
            [(CONTENT_TYPE, "text/plain; charset=utf-8")],
            "a request carries one Host header (RFC 9112 section 3.2); this one carries several\n",
        )
            .into_response(),
        Err(HostRefusal::Foreign) => refused(),
    }
}

/// Whether `host` names this machine: `localhost`, `127.x.x.x` or `[::1]`,
/// with any port. A page on another origin that rebinds its own host name
/// to 127.0.0.1 still sends its own name, and is refused.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, _)) => inside,
            None => return false,
        }
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn refused() -> Response {
    (
        StatusCode::FORBIDDEN,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        "the playground answers only requests to a loopback host name\n",
    )
        .into_response()
}

fn reply(content_type: &'static str, body: String) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    // A dev tool is rebuilt often: never serve a stale page or a stale token.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

async fn index() -> Response {
    reply("text/html; charset=utf-8", INDEX_HTML.to_owned())
}

async fn app_js() -> Response {
    reply("text/javascript; charset=utf-8", APP_JS.to_owned())
}

async fn style_css() -> Response {
    reply("text/css; charset=utf-8", STYLE_CSS.to_owned())
}

async fn session(headers: HeaderMap, AxumState(app): AxumState<App>) -> Response {
    // A cross-site page could not read the answer anyway; refuse it outright.
    let cross_site = headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"cross-site");
    if cross_site {
        return refused();
    }
    let playground = &app.playground;
    let body = app.shared.update(|state| {
        playground.enlist_bots(state);
        let channel_name = state
            .channel(&playground.channel_id)
            .map_or(CHANNEL_NAME, |c| c.name.as_str());
        json!({
            "token": playground.token,
            "user_id": playground.user_id,
            "name": USER_NAME,
            "channel_id": playground.channel_id,
            "channel_name": channel_name,
        })
    });
    reply("application/json", body.to_string())
}

async fn menus(AxumState(app): AxumState<App>) -> Response {
    let playground = &app.playground;
    let body = app.shared.update(|state| {
        playground.enlist_bots(state);
        menus_json(state, &playground.channel_id)
    });
    reply("application/json", body.to_string())
}

/// `{"bots": [{"id", "name", "online", "menu"}]}` for the bots of the
/// channel in the order they joined, `menu` the canonical arrays or `null`.
fn menus_json(state: &State, channel_id: &str) -> Value {
    let members = state
        .channel(channel_id)
        .map_or(&[][..], |c| c.members.as_slice());
    let bots: Vec<Value> = members
        .iter()
        .filter_map(|id| state.account(id))
        .filter(|a| a.kind == AccountKind::Bot)
        .map(|bot| {
            json!({
                "id": bot.id,
                "name": bot.name,
                "online": state.is_online(&bot.id),
                "menu": state.menu(&bot.id).map(canonical_menu),
            })
        })
        .collect();
    json!({ "bots": bots })
}

/// The canonical arrays of a stored menu: `[name, description, options]`,
/// options `[name, typeCode, description, required, choices]`.
fn canonical_menu(menu: &StoredMenu) -> Value {
    menu.commands
        .iter()
        .map(|command| {
            let options: Vec<Value> = command
                .options
                .iter()
                .map(|o| json!([o.name, o.type_code, o.description, o.required, o.choices]))
                .collect();
            json!([command.name, command.description, options])
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::AccountConfig;

    #[test]
    fn only_loopback_host_names_are_served() {
        for ok in [
            "127.0.0.1:7700",
            "127.0.0.1",
            "127.1.2.3:80",
            "localhost:7700",
            "LOCALHOST",
            "[::1]:7700",
            "[::1]",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example:7700",
            "localhost.evil.example",
            "10.0.0.1:7700",
            "[::2]:7700",
            "[::1",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    /// The page names option types by botlane's table: a new type shows
    /// with its name, not `undefined`.
    #[test]
    fn the_page_knows_every_option_type() {
        let pairs: Vec<String> = botlane::COMMAND_OPTION_TYPE_CODES
            .iter()
            .map(|(kind, code)| format!("{code}: \"{kind}\""))
            .collect();
        let line = format!("const TYPE_NAMES = {{ {} }};", pairs.join(", "));
        assert!(APP_JS.contains(&line), "app.js must spell {line}");
    }

    #[test]
    fn menus_are_served_in_canonical_form() {
        let json = r#"[["roll","Roll dice",[["count",2,"How many",true,[]],["sides",2,"Sides",false,["6","20"]]]]]"#;
        let menu = StoredMenu::from_canonical_json(json).unwrap();
        assert_eq!(canonical_menu(&menu).to_string(), json);
    }

    #[test]
    fn setup_enlists_bots_and_reuses_a_configured_you() {
        let config = DevServerConfig::default()
            .bot(AccountConfig::new("dicebot", "bot-token"))
            .user(AccountConfig::new(USER_NAME, "you-token"));
        let shared = Shared::new(State::from_config(&config).unwrap());
        let playground = Playground::setup(&config, &shared).unwrap();
        assert_eq!(playground.token, "you-token");
        let state = shared.lock();
        let members = &state.channel(&playground.channel_id).unwrap().members;
        assert_eq!(members.len(), 2);
        assert_eq!(members[0], playground.user_id);
        assert_eq!(state.account(&members[1]).unwrap().name, "dicebot");
        let menus = menus_json(&state, &playground.channel_id);
        assert_eq!(menus["bots"][0]["name"], "dicebot");
        assert_eq!(menus["bots"][0]["menu"], Value::Null);
        assert_eq!(menus["bots"][0]["online"], false);
    }

    #[test]
    fn setup_refuses_a_non_loopback_listener_and_a_bot_named_you() {
        let config = DevServerConfig::default().listen(([0, 0, 0, 0], 0).into());
        let shared = Shared::new(State::from_config(&config).unwrap());
        let err = Playground::setup(&config, &shared).unwrap_err();
        assert!(err.to_string().contains("loopback only"), "{err}");

        let config = DevServerConfig::default().bot(AccountConfig::new(USER_NAME, "t"));
        let shared = Shared::new(State::from_config(&config).unwrap());
        let err = Playground::setup(&config, &shared).unwrap_err();
        assert!(err.to_string().contains("a bot has that name"), "{err}");
    }

    #[test]
    fn the_token_is_never_shown() {
        let playground = Playground {
            user_id: "u".into(),
            token: "sekrit".into(),
            channel_id: "c".into(),
        };
        let shown = format!("{playground:?}");
        assert!(!shown.contains("sekrit") && shown.contains("[REDACTED]"));
    }
}
