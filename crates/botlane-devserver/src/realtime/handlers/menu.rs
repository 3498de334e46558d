//! Menu publish (op 20): the strict reading of `state::menu`, stored per bot.

use botlane_proto::payload::{AccountKind, CodeReply, MenuPublish};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;

use super::{decode, Handled, Refusal};
use crate::state::menu::MenuRejection;
use crate::state::State;
use crate::StoredMenu;

pub(crate) fn menu_publish(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::MenuPublish;
    let request: MenuPublish = decode(d)?;
    if state.account(me).map(|a| a.kind) != Some(AccountKind::Bot) {
        return Err(Refusal::new(ReplyCode::NotBot, "only bots publish menus"));
    }
    let value: serde_json::Value = serde_json::from_str(request.menu.get())
        .map_err(|e| Refusal::new(ReplyCode::BadRequest, format!("menu is not JSON: {e}")))?;
    let menu = StoredMenu::from_value(&value).map_err(|rejection| match rejection {
        MenuRejection::TooLarge(_) => Refusal::new(ReplyCode::TooLarge, rejection.to_string()),
        _ => Refusal::new(ReplyCode::BadRequest, rejection.to_string()),
    })?;
    tracing::info!(connection = conn, account = %me, commands = menu.commands.len(), "menu stored");
    state.set_menu(me, menu);
    state.send(conn, op, &CodeReply::default());
    Ok(())
}
