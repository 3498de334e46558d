//! An application that caps `log` at INFO and uses botlane: it must build.

fn main() {
    log::info!("an application line");
    let options = botlane::ClientOptions::new("token", "bot.keystore", "ws://127.0.0.1:9000/ws");
    assert!(botlane::Client::new(options).is_ok());
}
