//! Servers (rooms), channels, members and the denial a test sets on a channel.

use std::collections::VecDeque;

use botlane_proto::payload::{ChannelAdded, ChannelInfo, ChannelRemoved, WireMessage};
use botlane_proto::{OpCode, ReplyCode};

use super::State;
use crate::DevServerError;

pub(crate) struct Server {
    pub(crate) name: String,
}

pub(crate) struct Channel {
    pub(crate) id: String,
    pub(crate) server_id: String,
    pub(crate) name: String,
    pub(crate) members: Vec<String>,
    pub(crate) denial: Option<Denial>,
    pub(crate) messages: VecDeque<WireMessage>,
}

/// A refusal [`DevServer::deny_sends`](crate::DevServer::deny_sends) makes a
/// channel give to every send (op 30), so that `sendRejected` can be tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Denial {
    /// `-3`: no permission to post in this channel.
    NoPermission,
    /// `-4`: the channel is unknown.
    UnknownChannel,
    /// `-9`: rate limited.
    RateLimited,
}

impl Denial {
    /// The reply code the denial gives.
    ///
    /// ```
    /// use botlane_proto::ReplyCode;
    /// use botlane_devserver::Denial;
    /// assert_eq!(Denial::RateLimited.code(), ReplyCode::RateLimited);
    /// assert_eq!(Denial::NoPermission.code().code(), -3);
    /// ```
    pub const fn code(self) -> ReplyCode {
        match self {
            Self::NoPermission => ReplyCode::NoPermission,
            Self::UnknownChannel => ReplyCode::UnknownChannel,
            Self::RateLimited => ReplyCode::RateLimited,
        }
    }

    pub(crate) const fn reason(self) -> &'static str {
        match self {
            Self::NoPermission => "no permission to post in this channel",
            Self::UnknownChannel => "unknown channel",
            Self::RateLimited => "rate limited",
        }
    }
}

impl State {
    pub(crate) fn create_server(
        &mut self,
        name: &str,
        id: Option<&str>,
    ) -> Result<String, DevServerError> {
        let id = self.fresh_id(id, "server", |s, id| s.servers.contains_key(id))?;
        self.servers.insert(
            id.clone(),
            Server {
                name: name.to_owned(),
            },
        );
        Ok(id)
    }

    pub(crate) fn create_channel(
        &mut self,
        server_id: &str,
        name: &str,
        id: Option<&str>,
    ) -> Result<String, DevServerError> {
        if !self.servers.contains_key(server_id) {
            return Err(DevServerError::UnknownServer(server_id.to_owned()));
        }
        let id = self.fresh_id(id, "channel", |s, id| s.channels.contains_key(id))?;
        self.channels.insert(
            id.clone(),
            Channel {
                id: id.clone(),
                server_id: server_id.to_owned(),
                name: name.to_owned(),
                members: Vec::new(),
                denial: None,
                messages: VecDeque::new(),
            },
        );
        self.channel_order.push(id.clone());
        Ok(id)
    }

    pub(crate) fn add_member(
        &mut self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), DevServerError> {
        if !self.accounts.contains_key(account_id) {
            return Err(DevServerError::UnknownAccount(account_id.to_owned()));
        }
        let channel = self
            .channels
            .get_mut(channel_id)
            .ok_or_else(|| DevServerError::UnknownChannel(channel_id.to_owned()))?;
        if channel.members.iter().any(|m| m == account_id) {
            return Ok(());
        }
        channel.members.push(account_id.to_owned());
        let added = ChannelAdded::new(ChannelInfo::new(
            channel.id.clone(),
            channel.server_id.clone(),
            channel.name.clone(),
        ));
        self.push(account_id, OpCode::ChannelAdded, &added);
        Ok(())
    }

    /// Takes an account out of a channel; a no-op if it is not a member. It
    /// stops getting the channel's messages and keys (the keys waiting for it
    /// are dropped), and its connections get `channel_removed`.
    pub(crate) fn remove_member(
        &mut self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), DevServerError> {
        if !self.accounts.contains_key(account_id) {
            return Err(DevServerError::UnknownAccount(account_id.to_owned()));
        }
        let channel = self
            .channels
            .get_mut(channel_id)
            .ok_or_else(|| DevServerError::UnknownChannel(channel_id.to_owned()))?;
        let before = channel.members.len();
        channel.members.retain(|m| m != account_id);
        if channel.members.len() == before {
            return Ok(());
        }
        if let Some(keys) = self.pending_keys.get_mut(account_id) {
            keys.retain(|k| k.channel_id != channel_id);
        }
        let removed = ChannelRemoved::new(channel_id);
        self.push(account_id, OpCode::ChannelRemoved, &removed);
        Ok(())
    }

    /// The channels `account_id` is a member of, in creation order.
    pub(crate) fn channels_of(&self, account_id: &str) -> Vec<ChannelInfo> {
        self.channel_order
            .iter()
            .filter_map(|id| self.channels.get(id))
            .filter(|c| c.members.iter().any(|m| m == account_id))
            .map(|c| ChannelInfo::new(c.id.clone(), c.server_id.clone(), c.name.clone()))
            .collect()
    }
}
