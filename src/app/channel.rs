//! The channels a question arrives on: one enum for the app layer, the metrics' labels,
//! the store keys and the logs.

/// Where a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Channel {
    /// `POST /v1/ask`, the support-ticket webhook.
    #[default]
    Http,
    Wecom,
    Telegram,
    Discord,
}

impl Channel {
    /// Every channel, in the order of the metrics' series.
    pub const ALL: [Channel; 4] = [
        Channel::Http,
        Channel::Wecom,
        Channel::Telegram,
        Channel::Discord,
    ];

    /// The label in metrics, logs and store keys.
    pub fn id(self) -> &'static str {
        match self {
            Channel::Http => "http",
            Channel::Wecom => "wecom",
            Channel::Telegram => "telegram",
            Channel::Discord => "discord",
        }
    }

    /// Chat platforms have commands (`/price a100`) and group addressing; the webhook
    /// takes every text as a question (a ticket is not a chat).
    pub fn is_chat(self) -> bool {
        !matches!(self, Channel::Http)
    }

    /// The position of the channel in per-channel tables (the order of [`Channel::ALL`]).
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}
